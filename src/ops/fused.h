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
//
// activation: "" (none), "Relu", "Clip" (activation_params = [min, max]),
// "LeakyRelu" ([alpha]), "Sigmoid", "SiLU" (x * sigmoid(x)), "HardSigmoid"
// ([alpha, beta]), "HardSwish" (x * max(0, min(1, x/6 + 1/2))), "Tanh".
// post_affine: [scale, shift] (default [1, 0]): Y = scale * act(...) + shift,
// a scalar Mul/Add after the activation (PaddleOCR's learnable affine blocks).
// The reference provider runs them as the composition they stand for, so the
// optimized graph can be verified against the original on the oracle.
#pragma once

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

// Reads "activation" and "activation_params" of a fused node.
Result<ActivationAttrs> ParseActivation(const ir::Node& node);
// The attributes that express `a` on a fused node (inverse of ParseActivation).
std::vector<ir::Attribute> ActivationToAttributes(const ActivationAttrs& a);
// The activation applied to one value, in double (the reference semantics).
double ApplyActivation(const ActivationAttrs& a, double x);

}  // namespace kiln::ops
