// TODO(owner): Detection ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterDetectionOps(OpRegistry& r) {}

}  // namespace kiln::ops
