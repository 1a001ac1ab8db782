// TODO(owner): Sampling ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterSamplingOps(OpRegistry& r) {}

}  // namespace kiln::ops
