// TODO(owner): Rnn ops: attributes and shape inference.
#include "ops/families.h"

namespace kiln::ops {

void RegisterRnnOps(OpRegistry& r) {}

}  // namespace kiln::ops
