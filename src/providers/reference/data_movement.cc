// TODO(owner): DataMovement reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterDataMovementKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
