// TODO(owner): Pool reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterPoolKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
