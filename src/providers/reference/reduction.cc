// TODO(owner): Reduction reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterReductionKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
