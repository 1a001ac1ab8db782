// TODO(owner): String reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterStringKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
