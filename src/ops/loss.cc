// TODO(owner): Loss ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterLossOps(OpRegistry& r) {}

}  // namespace kiln::ops
