// TODO(owner): Sequence reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterSequenceKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
