// kiln's Winograd convolution (winograd.h), with 4x4 and 2x2 output tiles,
// against a plain double-precision loop of the ONNX Conv definition: output
// sizes that are and are not multiples of the tile, tile rows cut into several blocks, channel
// counts with and without a tail of 16, every pad from 0 to 2 on each side
// (asymmetric too), a batch of two, a residual, an activation, and a size
// large enough to split blocks across threads. The provider wiring is
// tested in conv_test.cc.
#include "providers/cpu/winograd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/cpu_test_util.h"
#include "providers/cpu/direct_conv.h"

namespace kiln::cpu {
namespace {

struct Case {
  int64_t n, ic, ih, iw, oc, pt, pl, pb, pr;
};

std::string Name(const Case& c) {
  return std::to_string(c.n) + "x" + std::to_string(c.ic) + "x" + std::to_string(c.ih) + "x" + std::to_string(c.iw) + " -> " +
         std::to_string(c.oc) + " pads " + std::to_string(c.pt) + "," + std::to_string(c.pl) + "," + std::to_string(c.pb) + "," +
         std::to_string(c.pr);
}

// in_place: the output is written over the residual (y is z).
void Check(const Case& c, int tile, bool with_residual, ops::Activation kind, bool in_place = false) {
  const int64_t oh = c.ih + c.pt + c.pb - 2, ow = c.iw + c.pl + c.pr - 2;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(c.n * c.ih * c.iw * c.ic), w(c.oc * c.ic * 9), b(c.oc), z(c.n * oh * ow * c.oc);
  for (auto* v : {&x, &w, &b, &z})
    for (float& f : *v) f = u(rng);
  const WinogradShape s{c.n, c.ih, c.iw, c.ic, oh, ow, c.oc, c.pt, c.pl};
  ops::ActivationAttrs act;
  act.kind = kind;
  WinogradConv conv(s, tile, w.data(), b.data(), act);
  const std::vector<float> y = kiln::cpu::testing::RunWithResidual(conv, x, z, with_residual, in_place);
  int64_t bad = 0;
  double worst = 0;
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t r = 0; r < oh; ++r)
      for (int64_t q = 0; q < ow; ++q)
        for (int64_t o = 0; o < c.oc; ++o) {
          double acc = b[o], mag = std::fabs(b[o]);
          for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j) {
              const int64_t h = r - c.pt + i, v = q - c.pl + j;
              if (h < 0 || h >= c.ih || v < 0 || v >= c.iw) continue;
              for (int64_t k = 0; k < c.ic; ++k) {
                const double p = double(x[((n * c.ih + h) * c.iw + v) * c.ic + k]) * w[((o * c.ic + k) * 3 + i) * 3 + j];
                acc += p;
                mag += std::fabs(p);
              }
            }
          const int64_t at = ((n * oh + r) * ow + q) * c.oc + o;
          if (with_residual) acc += z[at];
          const double want = kind == ops::Activation::kRelu ? (acc > 0 ? acc : 0) : acc;
          const double d = std::fabs(y[at] - want);
          worst = std::max(worst, d);
          // Winograd's rounding grows with the sum of the products' sizes
          // (the transforms scale by up to 8 and back), not with the result.
          bad += d > 1e-5 * (mag + 1);
        }
  EXPECT_EQ(bad, 0) << "F(" << tile << "x" << tile << ", 3x3) " << Name(c) << (with_residual ? " + residual" : "") << (in_place ? " in place" : "") << ": max |diff| " << worst;
}

TEST(WinogradConv, MatchesDefinitionOnEveryTileAndPadCase) {
  if (!DirectConv::Available()) GTEST_SKIP() << "no AVX-512F on this CPU";
  const Case cases[] = {
      // n, ic, ih, iw, oc, pads t, l, b, r
      {1, 16, 8, 8, 16, 1, 1, 1, 1},     // whole tiles, one vector each way
      {1, 19, 9, 11, 21, 1, 1, 1, 1},    // partial tiles, channel tails
      {2, 32, 7, 13, 48, 0, 0, 0, 0},    // no padding, batch 2, three output vectors
      {1, 24, 6, 6, 80, 2, 2, 2, 2},     // pads of 2: windows of padding only at the corners
      {1, 40, 10, 9, 24, 0, 2, 1, 0},    // asymmetric pads
      {1, 96, 12, 90, 96, 1, 1, 1, 1},   // a tile row cut into several blocks
      {1, 3, 5, 5, 5, 1, 1, 1, 1},       // fewer than 16 channels
      {1, 64, 48, 48, 64, 1, 1, 1, 1},   // 85 MFLOP: blocks split across threads
  };
  for (const int tile : {4, 2})
    for (const Case& c : cases) {
      Check(c, tile, false, ops::Activation::kNone);
      Check(c, tile, true, ops::Activation::kRelu);
      Check(c, tile, true, ops::Activation::kRelu, true);
    }
}

}  // namespace
}  // namespace kiln::cpu
