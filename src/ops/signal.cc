// TODO(owner): Signal ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterSignalOps(OpRegistry& r) {}

}  // namespace kiln::ops
