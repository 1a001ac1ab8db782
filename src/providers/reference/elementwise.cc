// TODO(owner): Elementwise reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterElementwiseKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
