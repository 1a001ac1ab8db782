// TODO(owner): String ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterStringOps(OpRegistry& r) {}

}  // namespace kiln::ops
