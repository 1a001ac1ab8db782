// Training family (domain ai.onnx.preview.training, opset 1): the optimizers
// Adagrad, Adam, Momentum and the Gradient op. Attribute structs shared by
// shape inference (ops/training.cc) and the reference kernels
// (providers/reference/training*.cc).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

inline constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

// Inputs of every optimizer: R (learning rate, scalar), T (update count,
// scalar int64), then `groups` blocks of n tensors each: X..., G..., and the
// optimizer's states (H for Adagrad; V, H for Adam; V for Momentum).
// Outputs: X_new..., then each state's new values.
struct AdagradAttrs {
  float decay_factor = 0.0f;
  float epsilon = 1e-6f;
  float norm_coefficient = 0.0f;
};
Result<AdagradAttrs> ParseAdagrad(const ir::Node& node);

struct AdamAttrs {
  float alpha = 0.9f;
  float beta = 0.999f;
  float epsilon = 1e-6f;
  float norm_coefficient = 0.0f;
  float norm_coefficient_post = 0.0f;
};
Result<AdamAttrs> ParseAdam(const ir::Node& node);

struct MomentumAttrs {
  float alpha = 0.0f;
  float beta = 0.0f;
  float norm_coefficient = 0.0f;
  bool nesterov = false;  // mode "nesterov" (else "standard")
};
Result<MomentumAttrs> ParseMomentum(const ir::Node& node);

// Number of tensors per block (n) of an optimizer node with `blocks` blocks
// (X, G and the states); errors unless the input/output counts fit.
Result<size_t> OptimizerGroupSize(const ir::Node& node, size_t blocks);

// Gradient: the derivatives of the value `y` w.r.t. each value in `xs`,
// through the nodes of the enclosing graph; `zs` are further inputs of that
// sub-graph that are not differentiated. The node's inputs are the values of
// xs then zs; its outputs are dy/dx for each x (shape of x).
struct GradientAttrs {
  std::vector<std::string> xs, zs;
  std::string y;
};
Result<GradientAttrs> ParseGradient(const ir::Node& node);

}  // namespace kiln::ops
