// TODO(owner): Reduction ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterReductionOps(OpRegistry& r) {}

}  // namespace kiln::ops
