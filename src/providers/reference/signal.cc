// TODO(owner): Signal reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterSignalKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
