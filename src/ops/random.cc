// TODO(owner): Random ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterRandomOps(OpRegistry& r) {}

}  // namespace kiln::ops
