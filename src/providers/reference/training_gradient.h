// Internal header of the training kernel family.
#pragma once

#include "runtime/kernel.h"

namespace kiln::reference {

void RegisterGradientKernel(runtime::KernelRegistry& r);  // training_gradient.cc

}  // namespace kiln::reference
