// TODO(owner): Training ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterTrainingOps(OpRegistry& r) {}

}  // namespace kiln::ops
