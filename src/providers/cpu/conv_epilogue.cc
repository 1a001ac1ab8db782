#include "providers/cpu/conv_epilogue.h"

#include <algorithm>
#include <cmath>

#include "providers/cpu/parallel.h"
#include "providers/cpu/vec_math.h"

namespace kiln::cpu {
namespace {

using ops::Activation;

// One activation as a compile-time choice, so each loop below vectorizes.
template <Activation K>
inline float Act(float x, float a, float b) {
  if constexpr (K == Activation::kNone) return x;
  if constexpr (K == Activation::kRelu) return x > 0 ? x : 0.f;
  if constexpr (K == Activation::kClip) return x < a ? a : (x > b ? b : x);
  if constexpr (K == Activation::kLeakyRelu) return x < 0 ? a * x : x;
  if constexpr (K == Activation::kSigmoid) return SigmoidF(x);
  if constexpr (K == Activation::kSiLU) return x * SigmoidF(x);
  if constexpr (K == Activation::kHardSigmoid) return std::fmin(1.f, std::fmax(0.f, a * x + b));
  if constexpr (K == Activation::kHardSwish) return x * std::fmin(1.f, std::fmax(0.f, x * (1.f / 6.f) + 0.5f));
  if constexpr (K == Activation::kTanh) return TanhF(x);
  return x;
}

// Pixels [p0, p1) of dst: each pixel's channels gathered from the blocks,
// plus the residual.
KILN_CPU_CLONES void Gather(float* __restrict dst, const float* __restrict src, const float* __restrict residual,
                            const BlockedGeometry& g, int64_t p0, int64_t p1) {
  const int64_t cb = (g.c + g.block - 1) / g.block;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t n = p / g.hw, q = p % g.hw;
    float* __restrict d = dst + p * g.c;
    for (int64_t k = 0; k < cb; ++k) {
      const float* __restrict x = src + ((n * cb + k) * g.hw + q) * g.block;
      const int64_t c0 = k * g.block, len = std::min(g.block, g.c - c0);
      for (int64_t i = 0; i < len; ++i) d[c0 + i] = x[i];
    }
    if (residual) {
      const float* __restrict z = residual + p * g.c;
      for (int64_t i = 0; i < g.c; ++i) d[i] += z[i];
    }
  }
}

// y = s * act(y) + t over a contiguous run: one plain loop per activation,
// which the compiler vectorizes (a template instantiation would not get the
// ISA clones: GCC does not dispatch target_clones on templates).
using ActFn = void (*)(float*, int64_t, const ops::ActivationAttrs&);
#define KILN_ACT(K)                                                                          \
  KILN_CPU_CLONES void Act##K(float* y, int64_t n, const ops::ActivationAttrs& act) {       \
    const float a = act.alpha, b = act.beta, s = act.post_scale, t = act.post_shift;        \
    for (int64_t i = 0; i < n; ++i) y[i] = s * Act<Activation::k##K>(y[i], a, b) + t;     \
  }
KILN_ACT(None)
KILN_ACT(Relu)
KILN_ACT(Clip)
KILN_ACT(LeakyRelu)
KILN_ACT(Sigmoid)
KILN_ACT(SiLU)
KILN_ACT(HardSigmoid)
KILN_ACT(HardSwish)
KILN_ACT(Tanh)
#undef KILN_ACT

ActFn ActFor(Activation k) {
  switch (k) {
    case Activation::kNone: return ActNone;
    case Activation::kRelu: return ActRelu;
    case Activation::kClip: return ActClip;
    case Activation::kLeakyRelu: return ActLeakyRelu;
    case Activation::kSigmoid: return ActSigmoid;
    case Activation::kSiLU: return ActSiLU;
    case Activation::kHardSigmoid: return ActHardSigmoid;
    case Activation::kHardSwish: return ActHardSwish;
    case Activation::kTanh: return ActTanh;
  }
  return ActNone;
}

}  // namespace

void BlockedToChannelsLast(float* dst, const float* src, const float* residual, const BlockedGeometry& g,
                           const ops::ActivationAttrs& act) {
  // No activation and no affine: the gather alone.
  const ActFn act_fn = act.kind == Activation::kNone && !act.has_post_affine() ? nullptr : ActFor(act.kind);
  const int64_t pixels = g.n * g.hw;
  ParallelFor(pixels, pixels * g.c, [&](int64_t p0, int64_t p1) {
    // A few pixels at a time, so the activation reads what the gather just wrote from L1.
    constexpr int64_t kChunk = 32;
    for (int64_t c0 = p0; c0 < p1; c0 += kChunk) {
      const int64_t c1 = std::min(p1, c0 + kChunk);
      Gather(dst, src, residual, g, c0, c1);
      if (act_fn) act_fn(dst + c0 * g.c, (c1 - c0) * g.c, act);
    }
  });
}

}  // namespace kiln::cpu
