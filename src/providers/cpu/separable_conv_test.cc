// kiln's fused separable block (separable_conv.h) against plain
// double-precision loops of the three convolutions it stands for: with and
// without expansion, strides 1 and 2, 3x3 and 5x5 windows, channel counts
// with and without a tail of 16 (the unexpanded source is read masked),
// maps narrower than a band and wider, asymmetric end padding, a batch of
// two, a residual (also written in place), activations applied in registers
// (Relu, Clip) and after (HardSwish, post_affine), and one to three threads
// giving the same bits, the threads splitting the rows or, for maps of few
// rows, the columns. The provider wiring is tested in conv_test.cc.
#include "providers/cpu/separable_conv.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/cpu_test_util.h"

namespace kiln::cpu {
namespace {

struct Case {
  int64_t n, ic, m, oc, ih, iw, k, stride;
  bool expand;
  // Pads top, left, bottom, right; -1: k / 2 each.
  int64_t pt = -1, pl = -1, pb = -1, pr = -1;
};

std::string Name(const Case& c) {
  return std::to_string(c.n) + "x" + std::to_string(c.ic) + "x" + std::to_string(c.ih) + "x" + std::to_string(c.iw) + " -> " +
         std::to_string(c.m) + (c.expand ? "" : " (no expansion)") + " k" + std::to_string(c.k) + "/" + std::to_string(c.stride) +
         " -> " + std::to_string(c.oc) + (c.pt < 0 ? "" : " pads " + std::to_string(c.pt) + "," + std::to_string(c.pl) + "," + std::to_string(c.pb) + "," + std::to_string(c.pr));
}

using kiln::cpu::testing::Act;

struct Acts {
  ops::ActivationAttrs e, d, p;
};

// The kernel's output, checked against the definition.
std::vector<float> Check(const Case& c, bool residual, const Acts& acts, bool in_place = false, int threads = 1) {
  SeparableShape s;
  s.n = c.n;
  s.ih = c.ih;
  s.iw = c.iw;
  s.ic = c.ic;
  s.m = c.expand ? c.m : c.ic;
  s.expand = c.expand;
  s.k = c.k;
  s.sh = s.sw = c.stride;
  const int64_t pt = c.pt < 0 ? c.k / 2 : c.pt, pl = c.pl < 0 ? c.k / 2 : c.pl;
  const int64_t pb = c.pb < 0 ? c.k / 2 : c.pb, pr = c.pr < 0 ? c.k / 2 : c.pr;
  s.pad_top = pt;
  s.pad_left = pl;
  s.oh = (c.ih + pt + pb - c.k) / c.stride + 1;
  s.ow = (c.iw + pl + pr - c.k) / c.stride + 1;
  s.oc = c.oc;
  const int64_t m = s.m, k = c.k;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(s.n * s.ih * s.iw * s.ic), we(m * s.ic), be(m), wd(m * k * k), bd(m), wp(s.oc * m), bp(s.oc),
      z(s.n * s.oh * s.ow * s.oc);
  for (auto* v : {&x, &we, &be, &wd, &bd, &wp, &bp, &z})
    for (float& f : *v) f = u(rng);
  SeparableConv conv(s, {we.data(), be.data(), acts.e}, {wd.data(), bd.data(), acts.d}, {wp.data(), bp.data(), acts.p});
  std::vector<float> y(z.size(), -99.f);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  if (in_place) {
    y = z;
    conv.Run(x.data(), y.data(), y.data());
  } else {
    conv.Run(x.data(), y.data(), residual ? z.data() : nullptr);
  }
  omp_set_num_threads(saved);

  // The definition: H = act_e(X * We + be), D = act_d(dw(H) + bd), Y = act_p(D * Wp + bp + Z).
  std::vector<double> h(s.n * s.ih * s.iw * m), d(s.n * s.oh * s.ow * m);
  for (int64_t p = 0; p < s.n * s.ih * s.iw; ++p)
    for (int64_t o = 0; o < m; ++o) {
      if (!c.expand) {
        h[p * m + o] = x[p * s.ic + o];
        continue;
      }
      double a = be[o];
      for (int64_t i = 0; i < s.ic; ++i) a += static_cast<double>(x[p * s.ic + i]) * we[o * s.ic + i];
      h[p * m + o] = ops::ApplyActivation(acts.e, a);
    }
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t r = 0; r < s.oh; ++r)
      for (int64_t q = 0; q < s.ow; ++q)
        for (int64_t o = 0; o < m; ++o) {
          double a = bd[o];
          for (int64_t i = 0; i < k; ++i)
            for (int64_t j = 0; j < k; ++j) {
              const int64_t row = r * c.stride - pt + i, col = q * c.stride - pl + j;
              if (row < 0 || row >= s.ih || col < 0 || col >= s.iw) continue;
              a += h[((n * s.ih + row) * s.iw + col) * m + o] * wd[o * k * k + i * k + j];
            }
          d[((n * s.oh + r) * s.ow + q) * m + o] = ops::ApplyActivation(acts.d, a);
        }
  int64_t bad = 0;
  double worst = 0;
  for (int64_t p = 0; p < s.n * s.oh * s.ow; ++p)
    for (int64_t o = 0; o < s.oc; ++o) {
      double a = bp[o];
      for (int64_t i = 0; i < m; ++i) a += d[p * m + i] * wp[o * m + i];
      if (residual || in_place) a += z[p * s.oc + o];
      const double want = ops::ApplyActivation(acts.p, a), got = y[p * s.oc + o];
      const double err = std::fabs(got - want) / (1.0 + std::fabs(want));
      worst = std::max(worst, err);
      if (!(err < 1e-4)) ++bad;  // float sums of up to ~600 terms against double
    }
  EXPECT_EQ(bad, 0) << Name(c) << " at " << threads << " threads: worst relative error " << worst;
  return y;
}

TEST(SeparableConv, InvertedResidualsAgainstDefinition) {
  if (!SeparableConv::Available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const Acts relu6{Act(ops::Activation::kClip, 0, 6), Act(ops::Activation::kClip, 0, 6), {}};
  for (const Case& c : {Case{1, 16, 96, 24, 23, 21, 3, 2, true}, Case{1, 24, 144, 24, 12, 13, 3, 1, true},
                        Case{2, 8, 40, 20, 9, 7, 3, 1, true}, Case{1, 24, 72, 40, 14, 11, 5, 2, true},
                        Case{1, 96, 576, 96, 7, 7, 3, 1, true}, Case{1, 16, 48, 17, 60, 5, 3, 1, true},
                        Case{1, 32, 0, 16, 20, 19, 3, 1, false}, Case{1, 20, 0, 40, 10, 12, 5, 1, false},
                        Case{2, 72, 0, 24, 9, 9, 3, 2, false}}) {
    Check(c, false, relu6);
    Check(c, true, relu6);
  }
}

// The 3x3 stride-1 depthwise runs whole rows as row tiles when at most one
// column of padding lies on each side (the first and last tiles skip it),
// else its one-pixel path at the borders (as stride 2 always does): pads 0,
// 1 and 2, asymmetric ones, a one-pixel-wide map, rows of one to three
// tiles, the top and bottom rows' clipped windows, and at stride 2 even and
// odd widths (the last window ends at the last column or one past it, or,
// without end padding, one before it: that column is never read).
TEST(SeparableConv, DepthwisePaddingCases) {
  if (!SeparableConv::Available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const Acts relu6{Act(ops::Activation::kClip, 0, 6), Act(ops::Activation::kClip, 0, 6), {}};
  Case cases[] = {
      {1, 16, 32, 16, 9, 9, 3, 1, true, 0, 0, 0, 0},    // valid: no padding
      {1, 16, 32, 16, 9, 9, 3, 1, true, 1, 1, 0, 0},    // left padding only
      {1, 16, 32, 16, 9, 9, 3, 1, true, 0, 0, 1, 1},    // right padding only
      {1, 16, 32, 16, 9, 9, 3, 1, true, 2, 2, 2, 2},    // pads of 2: the one-pixel path
      {1, 16, 32, 16, 9, 1, 3, 1, true, 1, 1, 1, 1},    // one pixel wide: both pads in one tile
      {1, 16, 32, 16, 6, 34, 3, 1, true, 1, 1, 1, 1},   // three tiles of 12, 12 and 10
      {1, 32, 0, 16, 5, 33, 3, 1, false, 1, 0, 1, 1},   // no expansion, asymmetric
      {1, 16, 32, 16, 8, 10, 3, 2, true, 1, 1, 1, 1},   // stride 2, even width: no right padding read
      {1, 16, 32, 16, 9, 11, 3, 2, true, 1, 1, 1, 1},   // stride 2, odd width: the last window's right column is padding
      {1, 16, 32, 16, 9, 11, 3, 2, true, 0, 0, 0, 0},   // stride 2, valid
      {1, 16, 32, 16, 9, 10, 3, 2, true, 0, 0, 0, 0},   // stride 2, valid, even width: the last column is never read
      {2, 16, 32, 16, 6, 20, 5, 2, true, 0, 2, 0, 0},   // the same at 5x5, batch 2
      {1, 32, 0, 16, 9, 10, 3, 2, false, 0, 0, 0, 0},   // the same without expansion
      {1, 16, 32, 16, 10, 9, 3, 1, true, 0, 0, 0, 0},   // stride 1, valid
      {1, 16, 32, 16, 9, 11, 3, 2, true, 2, 2, 2, 2},   // stride 2, pads of 2: the one-pixel path
      {1, 16, 32, 16, 3, 1, 3, 2, true, 1, 1, 1, 1},    // stride 2, one pixel wide
      {2, 32, 0, 16, 7, 40, 3, 2, false, 1, 1, 0, 0},   // stride 2, no expansion, batch 2
  };
  for (const Case& c : cases) {
    Check(c, false, relu6);
    Check(c, true, relu6);
  }
}

TEST(SeparableConv, ActivationsAfterTheTiles) {
  if (!SeparableConv::Available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  ops::ActivationAttrs affine = Act(ops::Activation::kRelu);
  affine.post_scale = 0.5f;
  affine.post_shift = 0.25f;
  const Acts hs{Act(ops::Activation::kHardSwish), Act(ops::Activation::kHardSwish), affine};
  Check({1, 16, 64, 24, 15, 17, 3, 1, true}, true, hs);
  Check({1, 24, 0, 32, 11, 10, 5, 2, false}, false, {{}, Act(ops::Activation::kSiLU), Act(ops::Activation::kSigmoid)});
}

TEST(SeparableConv, ResidualWrittenInPlace) {
  if (!SeparableConv::Available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const Acts relu6{Act(ops::Activation::kClip, 0, 6), Act(ops::Activation::kClip, 0, 6), Act(ops::Activation::kRelu)};
  Check({1, 24, 144, 24, 20, 18, 3, 1, true}, true, relu6, /*in_place=*/true);
  Check({2, 24, 0, 24, 9, 8, 3, 1, false}, true, relu6, /*in_place=*/true, /*threads=*/2);
}

// Threads split the rows (each chunk re-expands the rows its first windows
// share with the previous chunk); every value is the same sum whatever the split.
TEST(SeparableConv, ThreadCountChangesNoBit) {
  if (!SeparableConv::Available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  SeparableShape s;
  s.n = 2;
  s.ih = s.iw = 40;
  s.ic = 16;
  s.m = 96;
  s.expand = true;
  s.sh = s.sw = 1;
  s.pad_top = s.pad_left = 1;
  s.oh = s.ow = 40;
  s.oc = 24;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(s.n * s.ih * s.iw * s.ic), we(s.m * s.ic), wd(s.m * 9), wp(s.oc * s.m);
  for (auto* v : {&x, &we, &wd, &wp})
    for (float& f : *v) f = u(rng);
  const ops::ActivationAttrs relu6 = Act(ops::Activation::kClip, 0, 6);
  SeparableConv conv(s, {we.data(), nullptr, relu6}, {wd.data(), nullptr, relu6}, {wp.data(), nullptr, {}});
  std::vector<std::vector<float>> ys;
  const int saved = omp_get_max_threads();
  for (int t : {1, 2, 3}) {
    omp_set_num_threads(t);
    ys.emplace_back(s.n * s.oh * s.ow * s.oc);
    conv.Run(x.data(), ys.back().data(), nullptr);
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(ys[0], ys[1]);
  EXPECT_EQ(ys[0], ys[2]);
  Check({2, 16, 96, 24, 40, 40, 3, 1, true}, true, {relu6, relu6, {}}, false, 2);
}

// Maps of few rows split across the threads by columns (Run): each strip
// expands its own columns plus the k - sw its windows share with the next
// strip's. Against the definition at 2 and 3 threads, and bit for bit the
// 1-thread output: with and without expansion, 5x5 and 3x3 windows, stride
// 2, padding on every side (the first and last strips hold it), a residual.
TEST(SeparableConv, ColumnStripsForMapsOfFewRows) {
  if (!SeparableConv::Available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const Acts relu6{Act(ops::Activation::kClip, 0, 6), Act(ops::Activation::kClip, 0, 6), {}};
  const Acts hs{Act(ops::Activation::kHardSwish), Act(ops::Activation::kHardSwish), Act(ops::Activation::kSigmoid)};
  for (const Case& c : {Case{1, 48, 96, 32, 3, 80, 5, 1, true}, Case{1, 128, 0, 128, 4, 120, 3, 2, false},
                        Case{1, 16, 128, 24, 6, 50, 5, 1, true, 2, 1, 2, 3}, Case{1, 64, 96, 40, 2, 100, 3, 1, true}}) {
    for (bool residual : {false, true}) {
      const std::vector<float> one = Check(c, residual, relu6, false, 1);
      EXPECT_EQ(Check(c, residual, relu6, false, 2), one) << Name(c);
      EXPECT_EQ(Check(c, residual, relu6, false, 3), one) << Name(c);
    }
    EXPECT_EQ(Check(c, true, hs, false, 2), Check(c, true, hs, false, 1)) << Name(c);
  }
}

}  // namespace
}  // namespace kiln::cpu
