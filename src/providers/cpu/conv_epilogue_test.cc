// The convolution epilogue's activations (conv_epilogue.h), in particular
// the AVX-512 Sigmoid and SiLU (exp by vscalefps, one division, SiLU's x in
// the numerator) and the NaN rule of HardSigmoid / HardSwish's clamp,
// against ops::ApplyActivation in double, over the
// whole float range that matters: saturation at both ends, values near 0,
// NaN and infinities, odd lengths (the masked tail), a residual and
// post_affine.
#include "providers/cpu/conv_epilogue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace kiln::cpu {
namespace {

std::vector<float> Inputs() {
  std::vector<float> x;
  for (float v = -120.f; v <= 120.f; v += 0.37f) x.push_back(v);
  for (float v = -1e-3f; v <= 1e-3f; v += 1.3e-5f) x.push_back(v);
  for (float v : {-88.7f, -87.3f, -87.f, 88.7f, 89.f, 1e30f, -1e30f, 0.f, -0.f}) x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  x.push_back(1.5f);  // an odd count: the last vector is partial
  return x;
}

TEST(ConvEpilogue, EveryActivationMatchesTheDefinition) {
  using A = ops::Activation;
  for (A kind : {A::kSigmoid, A::kSiLU, A::kHardSigmoid, A::kHardSwish, A::kRelu, A::kClip, A::kLeakyRelu, A::kTanh})
    for (bool affine : {false, true})
      for (bool residual : {false, true}) {
        ops::ActivationAttrs act;
        act.kind = kind;
        if (kind == A::kHardSigmoid) act.alpha = 0.2f, act.beta = 0.5f;
        if (kind == A::kClip) act.alpha = -0.5f, act.beta = 6.f;
        if (kind == A::kLeakyRelu) act.alpha = 0.1f;
        if (affine) act.post_scale = 0.5f, act.post_shift = -2.f;
        const std::vector<float> x = Inputs();
        std::vector<float> z(x.size(), 0.f), y = x;
        if (residual)
          for (size_t i = 0; i < z.size(); ++i) z[i] = std::isfinite(x[i]) ? 0.25f * static_cast<float>(i % 7) : 0.f;
        ResidualActivationInPlace(y.data(), residual ? z.data() : nullptr, static_cast<int64_t>(y.size()), act);
        for (size_t i = 0; i < x.size(); ++i) {
          const double want = ops::ApplyActivation(act, static_cast<double>(x[i]) + z[i]);
          // Relative to the activation's value before post_affine, which
          // may cancel against post_shift.
          ops::ActivationAttrs plain = act;
          plain.post_scale = 1.f, plain.post_shift = 0.f;
          const double scale = std::fabs(act.post_scale * ops::ApplyActivation(plain, static_cast<double>(x[i]) + z[i]));
          const std::string what = "kind " + std::to_string(static_cast<int>(kind)) + " x=" + std::to_string(x[i]) +
                                   (affine ? " affine" : "") + (residual ? " residual" : "");
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(y[i])) << what << " got " << y[i];
          } else if (std::isinf(want)) {
            EXPECT_EQ(y[i], static_cast<float>(want)) << what;
          } else {
            // TanhF = 1 - 2/(e^2x + 1) loses ~1e-7 absolute near 0.
            EXPECT_NEAR(y[i], want, 1e-6 * (std::fabs(want) + scale) + (kind == A::kTanh ? 3e-7 : 1e-37)) << what;
          }
        }
      }
}

}  // namespace
}  // namespace kiln::cpu
