// TODO(owner): Indexing ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterIndexingOps(OpRegistry& r) {}

}  // namespace kiln::ops
