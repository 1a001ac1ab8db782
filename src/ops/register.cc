#include "ops/families.h"

namespace kiln::ops {

void RegisterAllOps(OpRegistry& r) {
  RegisterConvOps(r);
  RegisterPoolOps(r);
  RegisterNormalizationOps(r);
  RegisterResizeOps(r);
  RegisterMatMulOps(r);
  RegisterElementwiseOps(r);
  RegisterShapeOps(r);
  RegisterDataMovementOps(r);
  RegisterGeneratorOps(r);
  RegisterReductionOps(r);
}

}  // namespace kiln::ops
