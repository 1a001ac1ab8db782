// TODO(owner): DataMovement ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterDataMovementOps(OpRegistry& r) {}

}  // namespace kiln::ops
