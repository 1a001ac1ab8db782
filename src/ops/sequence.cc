// TODO(owner): Sequence ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterSequenceOps(OpRegistry& r) {}

}  // namespace kiln::ops
