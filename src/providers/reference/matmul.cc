// TODO(owner): MatMul reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterMatMulKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
