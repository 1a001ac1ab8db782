// TODO(owner): Detection reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterDetectionKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
