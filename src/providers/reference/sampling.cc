// TODO(owner): Sampling reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterSamplingKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
