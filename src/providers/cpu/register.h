// The cpu provider: oneDNN primitives and kiln's own kernels for the ops that
// dominate vision models; every other node falls back to the reference
// provider (runtime/provider.cc). Sessions on it run the optimization passes.
#pragma once

#include "runtime/kernel.h"

namespace kiln::cpu {

const runtime::KernelRegistry& Kernels();

}  // namespace kiln::cpu
