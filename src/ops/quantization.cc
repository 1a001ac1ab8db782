// TODO(owner): Quantization ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterQuantizationOps(OpRegistry& r) {}

}  // namespace kiln::ops
