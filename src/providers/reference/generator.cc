// TODO(owner): Generator reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterGeneratorKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
