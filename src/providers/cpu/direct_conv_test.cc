// kiln's own direct convolution (direct_conv.h) against a plain
// double-precision loop of the ONNX Conv definition, on shapes that reach
// every branch of its tiling: full and partial pixel tiles, output channels
// in 1-4 vectors with and without a tail, more than four vectors (two
// chunks), border columns and rows clipped by padding, rows and columns that
// see padding only, strides, and kernels wider than the input. The provider
// wiring (FusedConv's activation and residual) is tested in conv_test.cc.
#include "providers/cpu/direct_conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/cpu_test_util.h"

namespace kiln::cpu {
namespace {

struct Case {
  int64_t n, ic, ih, iw, oc, kh, kw, sh, sw, pt, pl, pb, pr;
};

std::string Name(const Case& c) {
  return std::to_string(c.n) + "x" + std::to_string(c.ic) + "x" + std::to_string(c.ih) + "x" + std::to_string(c.iw) + " -> " +
         std::to_string(c.oc) + " k" + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " s" + std::to_string(c.sh) + "x" +
         std::to_string(c.sw) + " pads " + std::to_string(c.pt) + "," + std::to_string(c.pl) + "," + std::to_string(c.pb) + "," +
         std::to_string(c.pr);
}

using kiln::cpu::testing::Act;

// in_place: the output is written over the residual (y is z).
void Check(const Case& c, bool with_residual, bool in_place = false, const ops::ActivationAttrs& act = Act(ops::Activation::kRelu)) {
  const int64_t oh = (c.ih + c.pt + c.pb - c.kh) / c.sh + 1, ow = (c.iw + c.pl + c.pr - c.kw) / c.sw + 1;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(c.n * c.ih * c.iw * c.ic), w(c.oc * c.ic * c.kh * c.kw), b(c.oc), z(c.n * oh * ow * c.oc);
  for (auto* v : {&x, &w, &b, &z})
    for (float& f : *v) f = u(rng);
  const DirectConvShape s{c.n, c.ih, c.iw, c.ic, oh, ow, c.oc, c.kh, c.kw, c.sh, c.sw, c.pt, c.pl};
  DirectConv conv(s, w.data(), b.data(), act);
  const std::vector<float> y = kiln::cpu::testing::RunWithResidual(conv, x, z, with_residual, in_place);
  int64_t bad = 0;
  double worst = 0;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t q = 0; q < ow; ++q)
        for (int64_t o = 0; o < c.oc; ++o) {
          double acc = b[o];
          for (int64_t i = 0; i < c.kh; ++i)
            for (int64_t j = 0; j < c.kw; ++j) {
              const int64_t h = r * c.sh - c.pt + i, v = q * c.sw - c.pl + j;
              if (h < 0 || h >= c.ih || v < 0 || v >= c.iw) continue;
              for (int64_t k = 0; k < c.ic; ++k)
                acc += double(x[((n * c.ih + h) * c.iw + v) * c.ic + k]) * w[((o * c.ic + k) * c.kh + i) * c.kw + j];
            }
          const int64_t at = ((n * oh + r) * ow + q) * c.oc + o;
          if (with_residual) acc += z[at];
          const double want = ops::ApplyActivation(act, acc);
          const double d = std::fabs(y[at] - want);
          worst = std::max(worst, d);
          bad += d > 1e-5 + 1e-5 * std::fabs(want);
        }
  EXPECT_EQ(bad, 0) << Name(c) << (with_residual ? " + residual" : "") << (in_place ? " in place" : "") << " activation "
                    << static_cast<int>(act.kind) << ": max |diff| " << worst;
}

TEST(DirectConv, MatchesDefinitionOnEveryTilingBranch) {
  if (!DirectConv::Available()) GTEST_SKIP() << "no AVX-512F on this CPU";
  const Case cases[] = {
      // n, ic, ih, iw, oc, kh, kw, sh, sw, pads t, l, b, r
      {1, 3, 9, 40, 12, 3, 3, 1, 1, 1, 1, 1, 1},   // 1 vector with a tail, a full 24-pixel row tile + a partial one
      {2, 12, 7, 31, 24, 3, 3, 1, 1, 1, 1, 1, 1},  // 2 vectors, tail; batch 2; row tiles of 12, 12, 5
      {1, 5, 6, 30, 32, 3, 3, 1, 1, 0, 0, 0, 0},   // unpadded: every column interior, row tiles 12, 12, 4
      {1, 4, 5, 20, 48, 3, 3, 1, 1, 1, 1, 1, 1},   // 3 vectors at stride 1: pixel tiles, not row tiles
      {1, 5, 8, 29, 40, 3, 3, 2, 2, 1, 1, 1, 1},   // 3 vectors, stride 2
      {1, 3, 9, 61, 12, 3, 3, 2, 2, 1, 1, 1, 1},   // stride 2, 1 vector: 14 + 14 + 2 pixels
      {1, 6, 7, 50, 24, 3, 3, 2, 2, 1, 1, 1, 1},   // stride 2, 2 vectors: 12 + 12
      {1, 4, 6, 40, 16, 3, 3, 2, 2, 0, 0, 1, 1},   // stride 2, pads only at the end
      {1, 4, 6, 17, 64, 3, 3, 1, 1, 1, 1, 1, 1},   // 4 whole vectors
      {1, 3, 5, 23, 80, 3, 3, 1, 1, 1, 1, 1, 1},   // 5 vectors: a chunk of 4 and one of 1
      {1, 7, 6, 9, 17, 5, 5, 1, 1, 2, 2, 2, 2},    // 5x5, 17 channels (a 1-lane tail)
      {1, 2, 4, 5, 16, 3, 3, 1, 1, 3, 3, 3, 3},    // pads of 3: rows and columns of padding only
      {1, 3, 6, 4, 8, 3, 7, 1, 1, 1, 3, 1, 3},     // kernel wider than the input: every column a border
      {1, 6, 10, 26, 20, 3, 2, 3, 3, 0, 1, 2, 0},  // asymmetric pads, stride 3, 3x2 kernel
      {1, 48, 5, 33, 24, 1, 1, 1, 1, 0, 0, 0, 0},  // 1x1
      {1, 3, 13, 21, 32, 7, 7, 2, 2, 3, 3, 3, 3},  // 7x7 stride 2 stem
      {2, 16, 40, 60, 48, 3, 3, 1, 1, 1, 1, 1, 1},  // 66 MFLOP: rows split across threads
  };
  for (const Case& c : cases) {
    Check(c, false);
    Check(c, true);
    Check(c, true, true);
  }
}

// Relu and Clip are applied in the tiles' registers (pixel and row tiles,
// border columns), other activations and post_affine on each finished row.
TEST(DirectConv, ActivationsInRegistersAndAfter) {
  if (!DirectConv::Available()) GTEST_SKIP() << "no AVX-512F on this CPU";
  ops::ActivationAttrs affine = Act(ops::Activation::kClip, -0.5f, 0.7f);
  affine.post_scale = 2.f;
  affine.post_shift = -0.25f;
  for (const ops::ActivationAttrs& act : {Act(ops::Activation::kNone), Act(ops::Activation::kClip, -0.5f, 0.7f), affine,
                                          Act(ops::Activation::kHardSwish)})
    for (const Case& c : {Case{1, 3, 9, 40, 12, 3, 3, 1, 1, 1, 1, 1, 1}, Case{1, 5, 8, 29, 40, 3, 3, 2, 2, 1, 1, 1, 1},
                          Case{1, 3, 13, 21, 32, 7, 7, 2, 2, 3, 3, 3, 3}})
      Check(c, true, false, act);
}

}  // namespace
}  // namespace kiln::cpu
