// TODO(owner): ControlFlow ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterControlFlowOps(OpRegistry& r) {}

}  // namespace kiln::ops
