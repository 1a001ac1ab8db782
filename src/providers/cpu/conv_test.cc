// The cpu provider's Conv and FusedConv against the reference provider on a
// grid of attributes: each case is one node, run on both providers with the
// same seeded inputs, and must agree within rtol 1e-4 / atol 1e-5. Each case
// also checks that the node really ran on cpu (not on the fallback).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include <oneapi/dnnl/dnnl.hpp>

#include "ir/builder.h"
#include "ops/fused.h"
#include "providers/cpu/cpu_test_util.h"
#include "providers/cpu/direct_conv.h"
#include "providers/cpu/shape_cache.h"
#include "runtime/session_internal.h"

namespace kiln {
namespace {

using ir::Attribute;

struct ConvCase {
  std::string name;
  Shape x, w;
  std::vector<Attribute> attrs;
  bool bias = true;
  // Absolute tolerance against the reference. Winograd's transforms round
  // differently: ~1e-5 absolute on outputs of magnitude ~5 (576 products);
  // those cases use kiln's fp32 verify tolerance (atol 1e-4) instead.
  double atol = 1e-5;
};

struct Built {
  ir::Model model;
  std::map<std::string, Tensor> feeds;
};

Built Make(const std::string& op, const std::string& domain, const ConvCase& c, bool residual,
           const std::vector<Attribute>& extra = {}) {
  ir::GraphBuilder b(17, "main", 11);
  auto x = b.AddInput("x", DType::kFloat32, c.x);
  std::vector<std::string> ins = {x, b.AddRandomInitializer("w", DType::kFloat32, c.w, -0.5, 0.5)};
  if (c.bias || residual) ins.push_back(c.bias ? b.AddRandomInitializer("b", DType::kFloat32, {c.w[0]}, -0.5, 0.5) : "");
  std::vector<Attribute> attrs = c.attrs;
  attrs.insert(attrs.end(), extra.begin(), extra.end());
  // The residual's shape is the output's: run the plain Conv on the reference to learn it.
  Shape out;
  if (residual) {
    ir::GraphBuilder probe(17);
    auto px = probe.AddInput("x", DType::kFloat32, c.x);
    auto pw = probe.AddInitializer("w", Tensor::Zeros(DType::kFloat32, c.w));
    probe.AddOutput(probe.AddNode("Conv", {px, pw}, c.attrs));
    auto pm = probe.Build();
    EXPECT_TRUE(pm.ok());
    auto s = CreateSessionFromModel(*pm);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    out = (*s)->outputs()[0].shape;
    ins.push_back(b.AddInput("z", DType::kFloat32, out));
  }
  if (!domain.empty()) b.SetOpset(domain, 1);
  auto y = b.AddNode(op, {ins}, attrs, 1, "n", domain);
  b.AddOutput(y[0]);
  auto m = b.Build();
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  Built r{std::move(m).value(), {}};
  ir::SeededRng rng(5);
  r.feeds["x"] = *ir::RandomTensor(DType::kFloat32, c.x, rng, -1, 1);
  if (residual) r.feeds["z"] = *ir::RandomTensor(DType::kFloat32, out, rng, -1, 1);
  return r;
}

// `out`, when given, receives the cpu provider's output.
void ExpectCpuMatchesReference(const Built& b, const std::string& what, double atol = 1e-5, Tensor* out = nullptr) {
  const cpu::testing::BothRuns r = cpu::testing::RunOnBoth(b.model, b.feeds, what);
  if (!r.ok) return;
  EXPECT_EQ(r.provider, "cpu") << what << " fell back";
  const Tensor& e = r.want;
  const Tensor& a = r.got;
  if (out) *out = a;
  ASSERT_EQ(a.shape(), e.shape()) << what;
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < e.numel(); ++i) {
    const double d = std::fabs(a.GetAsDouble(i) - e.GetAsDouble(i));
    worst = std::max(worst, d);
    bad += d > atol + 1e-4 * std::fabs(e.GetAsDouble(i));
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << e.numel() << " differ, max |diff| " << worst;
}

std::vector<ConvCase> Cases() {
  auto ints = [](const char* n, std::vector<int64_t> v) { return Attribute::Ints(n, std::move(v)); };
  return {
      {"3x3 pad 1", {1, 3, 9, 9}, {8, 3, 3, 3}, {ints("pads", {1, 1, 1, 1})}},
      {"3x3 stride 2 pad 1", {2, 3, 10, 11}, {16, 3, 3, 3}, {ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}},
      {"1x1 no bias", {1, 16, 7, 7}, {24, 16, 1, 1}, {}, false},
      {"5x5 depthwise", {1, 8, 12, 12}, {8, 1, 5, 5}, {Attribute::Int("group", 8), ints("pads", {2, 2, 2, 2})}},
      {"grouped", {1, 8, 6, 6}, {12, 4, 3, 3}, {Attribute::Int("group", 2)}},
      {"dilated", {1, 4, 11, 11}, {4, 4, 3, 3}, {ints("dilations", {2, 2}), ints("pads", {2, 2, 2, 2})}},
      {"asymmetric pads", {1, 3, 8, 8}, {5, 3, 3, 2}, {ints("pads", {0, 1, 2, 0})}},
      {"SAME_UPPER stride 2", {1, 3, 9, 8}, {4, 3, 3, 3}, {Attribute::String("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}},
      {"SAME_LOWER", {1, 3, 8, 8}, {4, 3, 4, 4}, {Attribute::String("auto_pad", "SAME_LOWER")}},
      {"VALID explicit kernel_shape", {1, 2, 6, 6}, {3, 2, 3, 3}, {Attribute::String("auto_pad", "VALID"), ints("kernel_shape", {3, 3})}},
      // 3x3 stride 1 with >= 32 channels: oneDNN's Winograd kernel (conv.cc).
      {"3x3 64 channels pad 1 (Winograd)", {2, 64, 9, 11}, {64, 64, 3, 3}, {ints("pads", {1, 1, 1, 1})}, true, 1e-4},
      {"3x3 80->96 no pad no bias (Winograd)", {1, 80, 8, 7}, {96, 80, 3, 3}, {}, false, 1e-4},
      {"3x3 40->36 pad 1 (Winograd, padded channel blocks)", {1, 40, 9, 10}, {36, 40, 3, 3}, {ints("pads", {1, 1, 1, 1})}, true, 1e-4},
      // Strided 1x1 without padding: the unit-stride Conv on the gathered
      // input (conv.cc), on oneDNN (160, 144 channels) and on kiln's direct
      // kernel (16); with padding, the strided primitive itself.
      {"1x1 stride 2 odd map (gathered)", {2, 160, 9, 11}, {48, 160, 1, 1}, {ints("strides", {2, 2})}},
      {"1x1 strides 3x2 (gathered)", {1, 144, 10, 7}, {40, 144, 1, 1}, {ints("strides", {3, 2})}},
      {"1x1 stride 2 SAME_UPPER (gathered)", {1, 144, 9, 9}, {32, 144, 1, 1}, {Attribute::String("auto_pad", "SAME_UPPER"), ints("strides", {2, 2})}},
      {"1x1 stride 2 16 channels (gathered, direct)", {1, 16, 9, 9}, {24, 16, 1, 1}, {ints("strides", {2, 2})}},
      {"1x1 stride 2 pad 1 (strided)", {1, 144, 8, 8}, {32, 144, 1, 1}, {ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}},
  };
}

TEST(CpuConv, MatchesReferenceOnAttributeGrid) {
  for (const ConvCase& c : Cases()) ExpectCpuMatchesReference(Make("Conv", "", c, false), c.name, c.atol);
}

TEST(CpuFusedConv, EveryActivationAndResidual) {
  const ConvCase c = Cases()[1];
  ops::ActivationAttrs acts[] = {
      {ops::Activation::kNone, 0, 0},        {ops::Activation::kRelu, 0, 0},       {ops::Activation::kLeakyRelu, 0.1f, 0},
      {ops::Activation::kClip, 0.f, 6.f},    {ops::Activation::kClip, -0.2f, 0.3f}, {ops::Activation::kSigmoid, 0, 0},
      {ops::Activation::kSiLU, 0, 0},        {ops::Activation::kTanh, 0, 0},       {ops::Activation::kHardSigmoid, 0.2f, 0.5f},
      {ops::Activation::kHardSwish, 0, 0},
  };
  for (const auto& a : acts)
    for (bool residual : {false, true}) {
      std::string what = "activation " + std::to_string(static_cast<int>(a.kind)) + (residual ? " + residual" : "");
      ExpectCpuMatchesReference(Make("FusedConv", ops::kKilnDomain, c, residual, ops::ActivationToAttributes(a)), what);
    }
}

// The gathered strided 1x1 (a ResNet downsample: BatchNorm folded, the
// block's Add and Relu fused) with each activation and a residual.
TEST(CpuFusedConv, StridedOneByOneGatheredEveryActivationAndResidual) {
  const ConvCase c = Cases()[13];
  ASSERT_EQ(c.name, "1x1 stride 2 odd map (gathered)");
  for (const auto& a : {ops::ActivationAttrs{ops::Activation::kNone, 0, 0}, ops::ActivationAttrs{ops::Activation::kRelu, 0, 0},
                        ops::ActivationAttrs{ops::Activation::kClip, -0.2f, 0.3f}, ops::ActivationAttrs{ops::Activation::kSiLU, 0, 0}})
    for (bool residual : {false, true}) {
      const std::string what = c.name + ", activation " + std::to_string(static_cast<int>(a.kind)) + (residual ? " + residual" : "");
      ExpectCpuMatchesReference(Make("FusedConv", ops::kKilnDomain, c, residual, ops::ActivationToAttributes(a)), what);
    }
}

// Whether oneDNN has a Winograd kernel for this CPU (AVX-512): where it has
// none, conv.cc builds the direct kernel and both runs below agree bitwise.
bool WinogradAvailable() {
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  try {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::memory::desc x({1, 32, 8, 8}, dt::f32, tag::any), w({32, 32, 3, 3}, dt::f32, tag::any), b({32}, dt::f32, tag::x);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd, x, w, b, x,
                                      {1, 1}, {1, 1}, {1, 1});
    dnnl::convolution_forward::primitive_desc pd(d, eng);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

using cpu::testing::SameBits;

// A kernel choice made through an environment variable: its value (null:
// unset) and a name for messages.
struct EnvSetting {
  const char* value;
  const char* name;
};

// Every case x activation x residual as a FusedConv, run once with `var` at
// `first` and once at `second`; both runs must match the reference, then
// `check(what, first_output, second_output)` compares the two paths.
void ForEachFusedCaseBothWays(const std::vector<ConvCase>& cases, const std::vector<ops::ActivationAttrs>& acts, const char* var,
                              EnvSetting first, EnvSetting second,
                              const std::function<void(const std::string&, const Tensor&, const Tensor&)>& check) {
  auto set = [&](const EnvSetting& e) { e.value ? setenv(var, e.value, 1) : unsetenv(var); };
  for (const ConvCase& c : cases)
    for (const auto& a : acts)
      for (bool residual : {false, true}) {
        const std::string what = c.name + ", activation " + std::to_string(static_cast<int>(a.kind)) +
                                 (a.has_post_affine() ? " + post_affine" : "") + (residual ? " + residual" : "");
        const Built built = Make("FusedConv", ops::kKilnDomain, c, residual, ops::ActivationToAttributes(a));
        Tensor out1, out2;
        set(first);
        ExpectCpuMatchesReference(built, what + " (" + first.name + ")", c.atol, &out1);
        set(second);
        ExpectCpuMatchesReference(built, what + " (" + second.name + ")", c.atol, &out2);
        unsetenv(var);
        ASSERT_TRUE(out1.defined() && out2.defined()) << what;
        check(what, out1, out2);
      }
}

// The Winograd path with every fused activation, residual and post_affine
// (its epilogue applies them, conv_epilogue.cc), on channel counts that fill
// whole and partial blocks of 16. Each case runs twice, with the Winograd
// kernel and without (KILN_CPU_WINOGRAD=0): both must match the reference,
// and their outputs must differ (Winograd rounds differently), which proves
// the Winograd path really ran.
TEST(CpuFusedConv, WinogradEveryActivationAndResidual) {
  std::vector<ConvCase> cases;
  for (const ConvCase& c : Cases())
    if (c.name.find("Winograd") != std::string::npos) cases.push_back(c);
  ASSERT_EQ(cases.size(), 3u);
  const std::vector<ops::ActivationAttrs> acts = {
      {ops::Activation::kNone, 0, 0},          {ops::Activation::kRelu, 0, 0},    {ops::Activation::kLeakyRelu, 0.1f, 0},
      {ops::Activation::kClip, 0.f, 6.f},      {ops::Activation::kClip, -0.2f, 0.3f}, {ops::Activation::kSigmoid, 0, 0},
      {ops::Activation::kSiLU, 0, 0},          {ops::Activation::kTanh, 0, 0},    {ops::Activation::kHardSwish, 0, 0},
      {ops::Activation::kHardSigmoid, 0.2f, 0.5f}, {ops::Activation::kSiLU, 0, 0, 0.5f, -0.25f},
  };
  const bool winograd = WinogradAvailable();
  ForEachFusedCaseBothWays(cases, acts, "KILN_CPU_WINOGRAD", {"0", "direct"}, {nullptr, "Winograd"},
                           [&](const std::string& what, const Tensor& direct, const Tensor& wino) {
                             if (winograd) EXPECT_FALSE(SameBits(direct, wino)) << what << ": the Winograd run computed exactly what the direct kernel did";
                           });
}

// kiln's own Winograd kernel (winograd.h; KILN_CPU_WINOGRAD=kiln / kiln2
// hand it every 3x3 stride-1 ungrouped undilated Conv, with 4x4 / 2x2
// output tiles) on the attribute grid, the oneDNN Winograd cases and shapes
// its default rule picks (one per tile), with every
// fused activation, post_affine and a residual. Each case also runs with
// Winograd off (KILN_CPU_WINOGRAD=0); both must match the reference, and
// some outputs must differ in their bits (Winograd rounds differently),
// which shows the kiln kernel really ran.
TEST(CpuFusedConv, KilnWinogradEveryActivationAndResidual) {
  auto ints = [](const char* n, std::vector<int64_t> v) { return Attribute::Ints(n, std::move(v)); };
  std::vector<ConvCase> cases;
  for (ConvCase c : Cases())
    if (c.w[2] == 3 && c.w[3] == 3) {
      c.atol = std::max(c.atol, 1e-4);  // Winograd's rounding, as ConvCase::atol says
      cases.push_back(c);
    }
  cases.push_back({"24->40 3x3 pad 1 at 21x23 (default rule: 4x4 tiles)", {1, 24, 21, 23}, {40, 24, 3, 3}, {ints("pads", {1, 1, 1, 1})}, true, 1e-4});
  cases.push_back({"64->80 3x3 pad 1 at 13x14 (default rule: 2x2 tiles)", {1, 64, 13, 14}, {80, 64, 3, 3}, {ints("pads", {1, 1, 1, 1})}, true, 1e-4});
  const std::vector<ops::ActivationAttrs> acts = {
      {ops::Activation::kNone, 0, 0},      {ops::Activation::kRelu, 0, 0},    {ops::Activation::kSiLU, 0, 0},
      {ops::Activation::kHardSwish, 0, 0}, {ops::Activation::kSiLU, 0, 0, 0.5f, -0.25f},
  };
  for (const char* mode : {"kiln", "kiln2"}) {
    int64_t differing = 0;
    ForEachFusedCaseBothWays(cases, acts, "KILN_CPU_WINOGRAD", {"0", "no Winograd"}, {mode, mode},
                             [&](const std::string&, const Tensor& plain, const Tensor& wino) { differing += !SameBits(plain, wino); });
    if (cpu::DirectConv::Available()) EXPECT_GT(differing, 0) << mode << ": no case computed differently: did the kiln Winograd kernel run?";
  }
}

// kiln's own direct kernel (direct_conv.h; KILN_CPU_DIRECT=all hands it
// every ungrouped undilated Conv) on the attribute grid plus shapes its
// default rule picks (24 and 12 output channels), with every fused
// activation, post_affine and a residual. Each case also runs on oneDNN
// (KILN_CPU_DIRECT=0); both must match the reference, and the two must not
// agree bit for bit everywhere (they sum in different orders), which shows
// the kiln kernel really ran.
TEST(CpuFusedConv, KilnDirectKernelEveryActivationAndResidual) {
  auto ints = [](const char* n, std::vector<int64_t> v) { return Attribute::Ints(n, std::move(v)); };
  std::vector<ConvCase> cases = Cases();
  cases.push_back({"12->24 3x3 pad 1 (default rule)", {1, 12, 11, 37}, {24, 12, 3, 3}, {ints("pads", {1, 1, 1, 1})}});
  cases.push_back({"48->24 1x1 (default rule)", {1, 48, 6, 19}, {24, 48, 1, 1}, {}, false});
  cases.push_back({"3->12 3x3 stride 2 (default rule)", {1, 3, 21, 30}, {12, 3, 3, 3}, {ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}});
  const std::vector<ops::ActivationAttrs> acts = {
      {ops::Activation::kNone, 0, 0},          {ops::Activation::kRelu, 0, 0},        {ops::Activation::kLeakyRelu, 0.1f, 0},
      {ops::Activation::kClip, 0.f, 6.f},      {ops::Activation::kSigmoid, 0, 0},     {ops::Activation::kSiLU, 0, 0},
      {ops::Activation::kTanh, 0, 0},          {ops::Activation::kHardSwish, 0, 0},   {ops::Activation::kHardSigmoid, 0.2f, 0.5f},
      {ops::Activation::kSiLU, 0, 0, 0.5f, -0.25f},
  };
  int64_t differing = 0;
  ForEachFusedCaseBothWays(cases, acts, "KILN_CPU_DIRECT", {"0", "oneDNN"}, {"all", "kiln direct"},
                           [&](const std::string&, const Tensor& onednn, const Tensor& kiln_direct) {
                             differing += !SameBits(onednn, kiln_direct);
                           });
  if (cpu::DirectConv::Available()) EXPECT_GT(differing, 0) << "no case computed differently from oneDNN: did the kiln kernel run?";
}

// kiln's own 1x1 kernel (pointwise_conv.h; KILN_CPU_POINTWISE=all hands it
// every unpadded stride-1 1x1) on the grid's 1x1s (the strided ones run it
// on the gathered input) and shapes its default rule picks (more than 128
// input channels: several panels with a partial one, several pixel blocks,
// a map split over threads), with every fused activation (those past a
// clamp run after each tile), post_affine and a residual. Each case also
// runs with it off (KILN_CPU_POINTWISE=0: oneDNN or the direct kernel);
// both must match the reference and some outputs must differ in their bits.
TEST(CpuFusedConv, KilnPointwiseKernelEveryActivationAndResidual) {
  std::vector<ConvCase> cases;
  for (const ConvCase& c : Cases())
    if (c.w[2] == 1 && c.w[3] == 1) cases.push_back(c);
  cases.push_back({"144->200 1x1 at 7x7 (default rule: 4 panels, the last partial)", {1, 144, 7, 7}, {200, 144, 1, 1}, {}});
  cases.push_back({"1024->72 1x1 at 9x23 (default rule: 4 pixel blocks)", {1, 1024, 9, 23}, {72, 1024, 1, 1}, {}, true, 1e-4});
  cases.push_back({"256->96 1x1 at 2x20x20 (default rule: threads)", {2, 256, 20, 20}, {96, 256, 1, 1}, {}, true, 1e-4});
  const std::vector<ops::ActivationAttrs> acts = {
      {ops::Activation::kNone, 0, 0},     {ops::Activation::kRelu, 0, 0},      {ops::Activation::kClip, 0.f, 6.f},
      {ops::Activation::kSiLU, 0, 0},     {ops::Activation::kHardSwish, 0, 0}, {ops::Activation::kLeakyRelu, 0.1f, 0},
      {ops::Activation::kClip, -0.2f, 0.3f, 2.f, -0.25f},
  };
  int64_t differing = 0;
  ForEachFusedCaseBothWays(cases, acts, "KILN_CPU_POINTWISE", {"0", "oneDNN or direct"}, {"all", "kiln pointwise"},
                           [&](const std::string&, const Tensor& other, const Tensor& pointwise) { differing += !SameBits(other, pointwise); });
  if (cpu::DirectConv::Available()) EXPECT_GT(differing, 0) << "no case computed differently: did the pointwise kernel run?";
}

// oneDNN's residual path writes its output over the residual input when
// nothing else reads that value any more (input_exclusive), and into a copy
// otherwise. Three graphs, each run on cpu (oneDNN forced) and reference:
// the residual dead after the FusedConv (written over); read again by a
// later Add (must survive); and a graph output (must be returned intact).
TEST(CpuFusedConv, ResidualWrittenOverOnlyWhenNothingElseReadsIt) {
  setenv("KILN_CPU_DIRECT", "0", 1);
  for (int variant = 0; variant < 3; ++variant) {
    ir::GraphBuilder b(17, "main", 13);
    auto x = b.AddInput("x", DType::kFloat32, {1, 16, 6, 7});
    auto w1 = b.AddRandomInitializer("w1", DType::kFloat32, {32, 16, 1, 1}, -0.5, 0.5);
    auto w2 = b.AddRandomInitializer("w2", DType::kFloat32, {32, 16, 1, 1}, -0.5, 0.5);
    auto bias = b.AddRandomInitializer("b", DType::kFloat32, {32}, -0.5, 0.5);
    auto a = b.AddNode("Conv", {x, w1});
    b.SetOpset(ops::kKilnDomain, 1);
    auto y = b.AddNode("FusedConv", {x, w2, bias, a}, {}, 1, "fused", ops::kKilnDomain)[0];
    if (variant == 0) b.AddOutput(y);
    if (variant == 1) b.AddOutput(b.AddNode("Add", {y, a}));
    if (variant == 2) {
      b.AddOutput(y);
      b.AddOutput(a);
    }
    auto m = b.Build();
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ir::SeededRng rng(3);
    std::map<std::string, Tensor> feeds{{"x", *ir::RandomTensor(DType::kFloat32, {1, 16, 6, 7}, rng, -1, 1)}};
    auto ref = CreateSessionFromModel(*m);
    SessionOptions o;
    o.provider = "cpu";
    o.opt_level = "disable";
    auto cpu = CreateSessionFromModel(*m, o);
    ASSERT_TRUE(ref.ok() && cpu.ok());
    auto want = (*ref)->Run(feeds);
    auto got = (*cpu)->Run(feeds);
    ASSERT_TRUE(want.ok() && got.ok());
    ASSERT_EQ(want->size(), got->size());
    for (size_t k = 0; k < want->size(); ++k)
      for (int64_t i = 0; i < (*want)[k].numel(); ++i)
        ASSERT_NEAR((*got)[k].GetAsDouble(i), (*want)[k].GetAsDouble(i), 1e-5) << "variant " << variant << " output " << k << " at " << i;
  }
  unsetenv("KILN_CPU_DIRECT");
}

// Dynamic batch and spatial dims: primitives are built per input shape.
TEST(CpuConv, DynamicShapesRebuildPerShape) {
  ir::GraphBuilder b(17, "main", 3);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {4, 3, 3, 3}, -1, 1);
  b.AddOutput(b.AddNode("Conv", {x, w}, {Attribute::Ints("pads", {1, 1, 1, 1})}));
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  for (Shape s : {Shape{1, 3, 5, 5}, Shape{2, 3, 7, 4}, Shape{1, 3, 5, 5}}) {
    ir::SeededRng rng(9);
    Built built{*m, {{"x", *ir::RandomTensor(DType::kFloat32, s, rng, -1, 1)}}};
    ExpectCpuMatchesReference(built, ShapeToString(s));
  }
}

// One session fed more input sizes than the kernel keeps built
// (kMaxCachedShapes): the cache starts over and every size still computes
// the reference's values, the first one again at the end.
TEST(CpuConv, ManyDynamicShapesInOneSession) {
  ir::GraphBuilder b(17, "main", 3);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Known(1), ir::Dim::Known(8), ir::Dim::Known(4), ir::Dim::Symbol("W")});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {16, 8, 3, 3}, -1, 1);
  b.AddOutput(b.AddNode("Conv", {x, w}, {Attribute::Ints("pads", {1, 1, 1, 1})}));
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  SessionOptions o;
  o.provider = "cpu";
  o.threads = 1;
  auto cpu = CreateSessionFromModel(*m, o);
  auto ref = CreateSessionFromModel(*m);
  ASSERT_TRUE(cpu.ok() && ref.ok());
  std::vector<int64_t> widths;
  for (int64_t wd = 1; wd <= static_cast<int64_t>(cpu::kMaxCachedShapes) + 8; ++wd) widths.push_back(wd);
  widths.push_back(1);
  for (int64_t wd : widths) {
    ir::SeededRng rng(static_cast<uint64_t>(wd));
    const std::map<std::string, Tensor> feeds = {{"x", *ir::RandomTensor(DType::kFloat32, {1, 8, 4, wd}, rng, -1, 1)}};
    auto got = (*cpu)->Run(feeds);
    auto want = (*ref)->Run(feeds);
    ASSERT_TRUE(got.ok() && want.ok()) << "width " << wd;
    cpu::testing::ExpectClose((*got)[0], (*want)[0], "width " + std::to_string(wd));
  }
}

// What the cpu kernel cannot run exactly falls back to the reference.
TEST(CpuConv, NonConstantWeightsFallBack) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 2, 4, 4});
  auto w = b.AddInput("w", DType::kFloat32, Shape{2, 2, 3, 3});
  b.AddOutput(b.AddNode("Conv", {x, w}, {}));
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  SessionOptions o;
  o.provider = "cpu";
  auto s = CreateSessionFromModel(*m, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->impl().executor->node_providers()[0], "reference");
}

// oneDNN's kernels index some offsets with int32 and crashed on an input of
// 2^31+1 elements (loader_fuzz); the kernel refuses it at load, naming the node.
TEST(CpuConv, RefusesOperandsOf2Pow31Elements) {
  ir::GraphBuilder b(17);
  const int64_t wide = (int64_t{1} << 31) + 1;
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 1, 1, wide});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {1, 1, 1, 1}, -1, 1);
  b.AddOutput(b.AddNode("Conv", {x, w}, {}, 1, "wide_conv")[0]);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  SessionOptions o;
  o.provider = "cpu";
  auto s = CreateSessionFromModel(*m, o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().ToString(), ::testing::HasSubstr("wide_conv"));
  EXPECT_THAT(s.status().ToString(), ::testing::HasSubstr("2^31 elements"));
}

}  // namespace
}  // namespace kiln
