// kiln's own fused ops (domain com.kiln, opset 1), made only by the
// optimization passes (src/passes) and never expected in a model file:
//
//   FusedConv(X, W, B?, Z?)  : Y = act(Conv(X, W, B) + Z)
//       every Conv attribute, plus the activation attributes below. Z (the
//       residual, same shape as Y) is added before the activation.
//   FusedConvTranspose(X, W, B?) : Y = act(ConvTranspose(X, W, B))
//       every ConvTranspose attribute, plus the activation attributes.
//   FusedGemm(A, B, C?)      : Y = act(Gemm(A, B, C))   (Gemm's attributes)
//   FusedMatMul(A, B, Bias?) : Y = act(MatMul(A, B) + Bias)
//       Bias broadcasts along the last axis ([N] or any shape that
//       broadcasts to Y).
//   FusedSeparableConv(X, We?, Be?, Wd, Bd?, Wp, Bp?, Z?)
//       a MobileNet inverted-residual block (or, without We, a
//       depthwise-separable pair), exactly three FusedConv in a row:
//         H = FusedConv(X, We, Be)    1x1, expand_* activation   (H = X without We)
//         D = FusedConv(H, Wd, Bd)    depthwise: group = M, Wd [M, 1, k, k]
//         Y = FusedConv(D, Wp, Bp, Z) 1x1 projection, Z added before the activation
//       X [N, C, H, W], We [M, C, 1, 1] (absent: M = C), Wp [O, M, 1, 1],
//       Z [N, O, OH, OW]. strides, pads, dilations and kernel_shape are the
//       depthwise conv's (auto_pad must be absent or NOTSET); the activation
//       of each step has its own attributes: expand_activation,
//       expand_activation_params, expand_post_affine, the same with prefix
//       depthwise_, and the unprefixed ones for the projection. Made by
//       passes/fuse_separable_conv.cc so a provider can keep the expanded
//       intermediate (M channels, the widest of the three) in cache.
//   FusedElementwise(X0, X1, ...) : a chain (or tree) of elementwise
//       ai.onnx ops (opset 14 semantics) evaluated as one pass, so the
//       intermediates never reach memory. Attributes:
//         steps        strings, the op of each step in evaluation order:
//                      Add Sub Mul Div Max Min (two operands), Relu Sigmoid
//                      Tanh Exp Neg Abs Sqrt HardSwish LeakyRelu HardSigmoid
//                      (one operand)
//         step_inputs  ints, each step's operands in order: k >= 0 is input
//                      Xk, k < 0 is the result of step -k-1 (an earlier one)
//         step_params  floats, [alpha, beta] per step (LeakyRelu's alpha,
//                      HardSigmoid's alpha and beta; 0 for the others)
//       The last step's result is Y. Made by passes/fuse_elementwise.cc with
//       every step's result of Y's shape (inputs broadcast to it).
//
// activation: "" (none), "Relu", "Clip" (activation_params = [min, max]),
// "LeakyRelu" ([alpha]), "Sigmoid", "SiLU" (x * sigmoid(x)), "HardSigmoid"
// ([alpha, beta]), "HardSwish" (x * max(0, min(1, x/6 + 1/2))), "Tanh".
// post_affine: [scale, shift] (default [1, 0]): Y = scale * act(...) + shift,
// a scalar Mul/Add after the activation (PaddleOCR's learnable affine blocks).
// The reference provider runs them as the composition they stand for, so the
// optimized graph can be verified against the original on the oracle.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

inline constexpr const char* kKilnDomain = "com.kiln";

enum class Activation { kNone, kRelu, kClip, kLeakyRelu, kSigmoid, kSiLU, kHardSigmoid, kHardSwish, kTanh };

struct ActivationAttrs {
  Activation kind = Activation::kNone;
  // Clip: min, max; LeakyRelu: alpha; HardSigmoid: alpha, beta.
  float alpha = 0, beta = 0;
  // Applied after the activation: y = post_scale * act(x) + post_shift.
  float post_scale = 1, post_shift = 0;
  bool has_post_affine() const { return post_scale != 1.f || post_shift != 0.f; }
};

// Reads "activation", "activation_params" and "post_affine" of a fused node.
Result<ActivationAttrs> ParseActivation(const ir::Node& node);
// The same attributes with a prefix ("expand_activation", ...; "" = the above).
Result<ActivationAttrs> ParseActivation(const ir::Node& node, const std::string& prefix);
// The attributes that express `a` on a fused node (inverse of ParseActivation).
std::vector<ir::Attribute> ActivationToAttributes(const ActivationAttrs& a);
std::vector<ir::Attribute> ActivationToAttributes(const ActivationAttrs& a, const std::string& prefix);
// The activation applied to one value, in double (the reference semantics).
double ApplyActivation(const ActivationAttrs& a, double x);

// FusedSeparableConv's input slots.
enum SeparableInput : size_t { kSepX, kSepWe, kSepBe, kSepWd, kSepBd, kSepWp, kSepBp, kSepZ, kSepNumInputs };

// The FusedConv nodes (com.kiln opset 1) a FusedSeparableConv stands for,
// reading the outer node's input names; `expand` is absent without We.
// Intermediate values are named "<node>/expand" and "<node>/depthwise", the
// inner nodes likewise (and "<node>/project"), so errors name the step.
// `group` is the depthwise group, M (Wd's first dim). Fails naming the node
// on missing inputs, auto_pad or bad activation attributes.
struct SeparableSteps {
  std::optional<ir::Node> expand;
  ir::Node depthwise;
  ir::Node project;
};
Result<SeparableSteps> SplitSeparable(const ir::Node& node, int64_t group);

// One step of a FusedElementwise: the op, its operands (k >= 0: input k;
// k < 0: result of step -k-1) and [alpha, beta].
struct ElementwiseStep {
  std::string op;
  std::vector<int64_t> operands;
  float alpha = 0, beta = 0;
};
// The number of operands of a step op FusedElementwise accepts; 0 for any
// other op (so the pass asks this before fusing a node).
int ElementwiseStepArity(const std::string& op);
// The steps of a FusedElementwise, checked: known ops, operand counts, every
// operand an existing input or an earlier step, every step but the last read
// by a later one, every input read. Fails naming the node.
Result<std::vector<ElementwiseStep>> ParseElementwiseSteps(const ir::Node& node);
// The steps as ai.onnx nodes (opset kElementwiseStepOpset) reading the
// node's input names; step k writes "<node>/step<k>", the last writes Y.
inline constexpr int64_t kElementwiseStepOpset = 14;  // HardSwish is new in 14
std::vector<ir::Node> ElementwiseStepNodes(const ir::Node& node, const std::vector<ElementwiseStep>& steps);

}  // namespace kiln::ops
