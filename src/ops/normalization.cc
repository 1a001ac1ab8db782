// TODO(owner): Normalization ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterNormalizationOps(OpRegistry& r) {}

}  // namespace kiln::ops
