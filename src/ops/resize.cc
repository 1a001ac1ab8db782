// TODO(owner): Resize ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterResizeOps(OpRegistry& r) {}

}  // namespace kiln::ops
