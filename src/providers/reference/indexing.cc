// TODO(owner): Indexing reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterIndexingKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
