// TODO(owner): Rnn reference kernels.
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterRnnKernels(runtime::KernelRegistry& r) {}

}  // namespace kiln::reference
