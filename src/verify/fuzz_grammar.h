// The graph fuzzer's grammar: seeded random ONNX graphs (opset 17, some 13
// and 11; float32)
// built from the ops whose kernels care about layout or that the passes
// rewrite, valid by construction (every value's static shape is tracked by
// fuzz_shapes.h, and every attribute is drawn inside the spec's domain).
//
// A graph grows a "spine" of rank-4 image tensors from one input, which with
// high probability is NHWC and transposed to NCHW inside the model (the
// motivating bug of DESIGN.md lived behind exactly that Transpose). Each step
// applies one production to a spine value (the newest, or an older one, which
// makes branches): Conv (groups, depthwise, dilations, strides, pads,
// auto_pad) often followed by an activation, ConvTranspose, Transpose (any
// permutation), Resize (nearest with every nearest_mode, linear, cubic; every
// coordinate transformation; scales or sizes), MaxPool / AveragePool /
// GlobalAveragePool / GlobalMaxPool, Concat and Split on any axis, Slice
// (negative steps, negative and out-of-range indices), Pad (constant,
// reflect, edge), Add/Mul/Sub/Div broadcasting against per-channel, scalar,
// row, plane or full constants or another spine value, the activation chains
// the fusion passes match (SiLU as x*Sigmoid(x), HardSwish as an op, as
// x*HardSigmoid(x) and decomposed as x*Clip(x+3,0,6)/6 in Paddle's forms,
// Clip, Relu, LeakyRelu, HardSigmoid, Sigmoid, Tanh), BatchNormalization with
// constant parameters, residual Conv+Add, squeeze-excite blocks, Reshape,
// Flatten + Gemm / MatMul, MatMul on the last axis, Squeeze/Unsqueeze,
// Softmax / LogSoftmax on any axis, ReduceMean. Side values (rank 2, 3, 5)
// may become outputs. Outputs: the newest spine value and up to a few
// intermediate values.
//
// float16: with FuzzOptions::float16_probability, the whole graph is
// converted (fuzz_float16.h). Not generated (yet): Resize `axes` / `antialias` (opset 18+, which
// the installed ONNX checker does not know).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "verify/fuzz_shapes.h"

namespace kiln::verify {

struct FuzzOptions {
  int min_ops = 3;   // productions applied (an activation chain or a block counts as one)
  int max_ops = 10;
  double nhwc_input_probability = 0.8;
  double second_input_probability = 0.2;
  double dynamic_input_probability = 0.15;  // inputs declare symbolic N, H, W
  double older_opset_probability = 0.3;     // opset 13 or 11 instead of 17
  int max_extra_outputs = 2;  // intermediate values added as outputs
  double float16_probability = 0;  // the graph is made float16 (fuzz_float16.h)
  FuzzLimits limits;
};

// The graph of `seed`: the same seed and options give the same model, on
// every platform (ir::SeededRng). Metadata "kiln.fuzz.seed" holds the seed,
// "kiln.fuzz.productions" the productions applied, space-separated, and
// "kiln.fuzz.input.<name>" each input's concrete shape ("[1,16,16,3]"; the
// declared dims may be symbolic).
Result<ir::Model> GenerateGraph(uint64_t seed, const FuzzOptions& options = {});

// Inputs of a generated graph: each real input uniform in [-1, 1) from
// ir::SeedFor(seed, name).
Result<std::map<std::string, Tensor>> GenerateFeeds(const ir::Model& model, uint64_t seed);

// Every production name the grammar can record in "kiln.fuzz.productions".
const std::vector<std::string>& FuzzProductionNames();

}  // namespace kiln::verify
