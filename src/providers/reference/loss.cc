// TODO(owner): Loss reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterLossKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
