// TODO(owner): Training reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterTrainingKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
