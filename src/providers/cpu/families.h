// The cpu provider's kernel families, registered explicitly in register.cc.
#pragma once

#include "runtime/kernel.h"

namespace kiln::cpu {

void RegisterConvKernels(runtime::KernelRegistry& r);  // conv.cc

}  // namespace kiln::cpu
