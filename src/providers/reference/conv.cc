// TODO(owner): Conv reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterConvKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
