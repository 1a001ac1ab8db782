// TODO(owner): Pool ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterPoolOps(OpRegistry& r) {}

}  // namespace kiln::ops
