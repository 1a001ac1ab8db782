// TODO(owner): MatMul ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterMatMulOps(OpRegistry& r) {}

}  // namespace kiln::ops
