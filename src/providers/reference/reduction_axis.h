// Internal header of the reduction kernel family (reduction*.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/tensor.h"
#include "runtime/kernel.h"

namespace kiln::reference {

// TopK, Softmax/LogSoftmax/Hardmax, CumSum (reduction_axis.cc).
void RegisterReductionAxisKernels(runtime::KernelRegistry& r);

// Values of an integer tensor as int64 (exact for int64 inputs).
std::vector<int64_t> IntsOf(const Tensor& t);

}  // namespace kiln::reference
