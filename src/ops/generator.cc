// TODO(owner): Generator ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterGeneratorOps(OpRegistry& r) {}

}  // namespace kiln::ops
