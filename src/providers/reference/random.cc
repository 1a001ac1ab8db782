// TODO(owner): Random reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterRandomKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
