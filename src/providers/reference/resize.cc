// TODO(owner): Resize reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterResizeKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
