// TODO(owner): ControlFlow reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterControlFlowKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
