// kiln's own 1x1 kernel (pointwise_conv.h) against a plain double-precision
// loop of the ONNX Conv definition: panels whole and partial (output channels
// 17, 64, 200, 1030), pixel blocks whole and partial, a single pixel, a
// residual (also written over in place), activations in the tiles' registers
// and after each tile, and work split over threads. The provider wiring is
// tested in conv_test.cc.
#include "providers/cpu/pointwise_conv.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "providers/cpu/cpu_test_util.h"

namespace kiln::cpu {
namespace {

using kiln::cpu::testing::Act;

// in_place: the output is written over the residual (y is z).
void Check(const PointwiseShape& s, bool with_residual, bool in_place, const ops::ActivationAttrs& act) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(s.pixels * s.ic), w(s.oc * s.ic), b(s.oc), z(s.pixels * s.oc);
  for (auto* v : {&x, &w, &b, &z})
    for (float& f : *v) f = u(rng);
  PointwiseConv conv(s, w.data(), b.data(), act);
  const std::vector<float> y = kiln::cpu::testing::RunWithResidual(conv, x, z, with_residual, in_place);
  int64_t bad = 0;
  double worst = 0;
  for (int64_t p = 0; p < s.pixels; ++p)
    for (int64_t o = 0; o < s.oc; ++o) {
      double acc = b[o];
      for (int64_t k = 0; k < s.ic; ++k) acc += double(x[p * s.ic + k]) * w[o * s.ic + k];
      if (with_residual) acc += z[p * s.oc + o];
      const double want = ops::ApplyActivation(act, acc);
      const double d = std::fabs(y[p * s.oc + o] - want);
      worst = std::max(worst, d);
      bad += d > 1e-4 + 1e-5 * std::fabs(want);
    }
  EXPECT_EQ(bad, 0) << s.pixels << " pixels " << s.ic << " -> " << s.oc << (with_residual ? " + residual" : "") << (in_place ? " in place" : "")
                    << " activation " << static_cast<int>(act.kind) << ": max |diff| " << worst;
}

TEST(PointwiseConv, MatchesDefinitionOnPanelsBlocksAndActivations) {
  if (!DirectConv::Available()) GTEST_SKIP() << "no AVX-512F on this CPU";
  const PointwiseShape shapes[] = {
      {49, 160, 200},   // 4 panels, the last 8 channels wide; 8 tiles of 6 pixels and one of 1
      {1, 300, 64},     // one pixel, one whole panel
      {200, 1024, 17},  // 4 pixel blocks of 54, 54, 54, 38 (at most 60 each); one vector with a 1-lane tail
      {37, 130, 1030},  // 17 panels, the last 6 channels wide
      {13, 5, 40},      // few input channels (the rule leaves these to DirectConv; the kernel takes them)
  };
  ops::ActivationAttrs affine = Act(ops::Activation::kClip, -0.5f, 0.7f);
  affine.post_scale = 2.f;
  affine.post_shift = -0.25f;
  for (const PointwiseShape& s : shapes) {
    Check(s, false, false, Act(ops::Activation::kNone));
    Check(s, true, false, Act(ops::Activation::kRelu));
    Check(s, true, true, Act(ops::Activation::kRelu));
    Check(s, true, true, Act(ops::Activation::kHardSwish));
    Check(s, false, false, Act(ops::Activation::kSiLU));
    Check(s, true, false, affine);
  }
}

// Over kSerialFlops the work is split over the threads: by pixel rows when
// the pixels outweigh the weights, else by panels. Each value is one
// fixed-order sum, so 1 and 2 threads agree bit for bit.
TEST(PointwiseConv, ThreadsChangeNoBit) {
  if (!DirectConv::Available()) GTEST_SKIP() << "no AVX-512F on this CPU";
  const PointwiseShape shapes[] = {
      {600, 256, 136},  // 42 MFLOP, split by rows: 50 tiles of 6 pixels per thread, two blocks of 150 (at most 252)
      {20, 512, 600},   // 12 MFLOP, split by panels: 10 panels (the last 24 channels wide), 5 per thread
  };
  for (const PointwiseShape& s : shapes) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> x(s.pixels * s.ic), w(s.oc * s.ic), b(s.oc);
    for (auto* v : {&x, &w, &b})
      for (float& f : *v) f = u(rng);
    PointwiseConv conv(s, w.data(), b.data(), Act(ops::Activation::kSiLU));
    const int saved = omp_get_max_threads();
    std::vector<float> y1(s.pixels * s.oc), y2(s.pixels * s.oc);
    omp_set_num_threads(1);
    conv.Run(x.data(), y1.data(), nullptr);
    omp_set_num_threads(2);
    conv.Run(x.data(), y2.data(), nullptr);
    omp_set_num_threads(saved);
    EXPECT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(float)), 0) << s.pixels << " x " << s.ic << " -> " << s.oc;
    Check(s, true, true, Act(ops::Activation::kHardSwish));
  }
}

}  // namespace
}  // namespace kiln::cpu
