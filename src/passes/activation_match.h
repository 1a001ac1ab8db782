// Recognizes an activation applied to one value, in every form exporters
// write it, for the fusion passes (fuse_conv_activation.cc,
// fuse_residual_add.cc):
//   Relu, Sigmoid, Tanh, LeakyRelu, HardSigmoid, HardSwish (opset 14);
//   Clip with constant bounds (Relu6 is Clip(x, 0, 6));
//   SiLU written as x * Sigmoid(x);
//   HardSwish written as x * HardSigmoid(x) with alpha = 1/6, beta = 0.5,
//   or decomposed as Paddle exports it: x * Clip(x + 3, 0, 6) / 6 (also with
//   Mul by 1/6, and with the division applied to the Clip first).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/fused.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {

struct ActivationMatch {
  ops::ActivationAttrs act;
  std::vector<size_t> nodes;  // the pattern's nodes (removed by the fusion)
  std::string output;         // the activation's result
  std::string ops;            // "Add+Clip+Mul+Div", for the report
};

// Matches only when every reader of `v` belongs to the pattern and every
// value inside the pattern feeds only the pattern's next node, so the whole
// pattern can be replaced by its output. `v` must be float32 (the caller checks).
std::optional<ActivationMatch> MatchActivation(const ir::Graph& g, const GraphIndex& index, const TypeMap& types,
                                               const PassContext& ctx, const std::string& v);

}  // namespace kiln::passes
