// TODO(owner): Conv ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterConvOps(OpRegistry& r) {}

}  // namespace kiln::ops
