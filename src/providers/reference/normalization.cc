// TODO(owner): Normalization reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterNormalizationKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
