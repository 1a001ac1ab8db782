// The inner loops of the cpu elementwise kernels (elementwise.cc), by ONNX
// op name, for kernels that chain them (fused_elementwise.cc): the same
// loops, so a fused chain computes exactly what its unfused nodes would.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace kiln::cpu {

// o[i] = a[i*sa] op b[i*sb] for i in [0, n).
using BinaryRun = void (*)(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb);
// Activation parameters: LeakyRelu alpha; HardSigmoid alpha, beta; Clip min, max.
struct UnaryParams {
  float alpha = 0, beta = 0;
};
// o[i] = op(x[i]) for i in [0, n) (contiguous).
using UnaryRun = void (*)(float* o, const float* x, int64_t n, UnaryParams p);

// nullptr when the op has no such loop.
BinaryRun FindBinaryRun(const std::string& op);
UnaryRun FindUnaryRun(const std::string& op);

// Whether load-time dims `big` are the broadcast of big and `small`: each
// of small's dims (aligned right) is 1 or big's. Unknown dims are taken to
// fit (a valid model broadcasts); a kernel that planned its output order on
// this checks the shapes again at run time.
bool CoversStatically(const ir::Dims& big, const ir::Dims& small);

}  // namespace kiln::cpu
