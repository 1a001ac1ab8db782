// TODO(owner): Quantization reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterQuantizationKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
