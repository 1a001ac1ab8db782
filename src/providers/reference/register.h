// The reference provider: plain loops that follow the ONNX specification
// text, no SIMD, no threads, double accumulation where it matters. It runs
// the graph as loaded and is the oracle every other provider is checked against.
#pragma once

#include "runtime/kernel.h"

namespace kiln::reference {

const runtime::KernelRegistry& Kernels();

}  // namespace kiln::reference
