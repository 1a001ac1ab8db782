// Internal header of the matmul kernel family.
#pragma once

#include "runtime/kernel.h"

namespace kiln::reference {

void RegisterEinsumKernel(runtime::KernelRegistry& r);  // matmul_einsum.cc

}  // namespace kiln::reference
