// TODO(owner): Elementwise ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterElementwiseOps(OpRegistry& r) {}

}  // namespace kiln::ops
