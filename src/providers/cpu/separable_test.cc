// The cpu provider's FusedSeparableConv against the reference provider:
// one fused node per case (with and without expansion, strides 1 and 2, a
// 5x5 window, a batch of two, activations in and after the
// tiles, a residual), run on both providers with the same seeded inputs, on
// kiln's fused kernel and on the composition of the provider's FusedConv
// kernels (KILN_CPU_SEPARABLE=0). Each case checks that the node ran on cpu.
// A residual input that is read again later must survive the in-place write.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ops/fused.h"
#include "providers/cpu/cpu_test_util.h"
#include "providers/cpu/separable_conv.h"

namespace kiln {
namespace {

using ir::Attribute;

struct SepCase {
  std::string name;
  Shape x;                  // [n, c, h, w]
  int64_t m, oc, k, stride;  // m = 0: no expansion
  bool residual;
  std::vector<Attribute> acts;  // activation attributes of the three steps
  bool same_upper = false;
};

struct Built {
  ir::Model model;
  std::map<std::string, Tensor> feeds;
};

Built Make(const SepCase& c, bool reuse_residual) {
  auto ints = [](const char* n, std::vector<int64_t> v) { return Attribute::Ints(n, std::move(v)); };
  ir::GraphBuilder b(17, "main", 11);
  b.SetOpset(ops::kKilnDomain, 1);
  const int64_t ic = c.x[1], m = c.m ? c.m : ic, p = c.k / 2;
  const int64_t oh = (c.x[2] + 2 * p - c.k) / c.stride + 1, ow = (c.x[3] + 2 * p - c.k) / c.stride + 1;
  auto x = b.AddInput("x", DType::kFloat32, c.x);
  std::vector<std::string> ins = {x, "", "", "", "", "", "", ""};
  if (c.m) {
    ins[1] = b.AddRandomInitializer("we", DType::kFloat32, {m, ic, 1, 1}, -0.5, 0.5);
    ins[2] = b.AddRandomInitializer("be", DType::kFloat32, {m}, -0.5, 0.5);
  }
  ins[3] = b.AddRandomInitializer("wd", DType::kFloat32, {m, 1, c.k, c.k}, -0.5, 0.5);
  ins[4] = b.AddRandomInitializer("bd", DType::kFloat32, {m}, -0.5, 0.5);
  ins[5] = b.AddRandomInitializer("wp", DType::kFloat32, {c.oc, m, 1, 1}, -0.5, 0.5);
  ins[6] = b.AddRandomInitializer("bp", DType::kFloat32, {c.oc}, -0.5, 0.5);
  const Shape out = {c.x[0], c.oc, oh, ow};
  if (c.residual) ins[7] = b.AddInput("z", DType::kFloat32, out);
  std::vector<Attribute> attrs;
  for (const Attribute& a : c.acts)  // an expansion activation needs an expansion
    if (c.m || a.name.rfind("expand_", 0) != 0) attrs.push_back(a);
  attrs.push_back(ints("strides", {c.stride, c.stride}));
  if (c.same_upper)
    attrs.push_back(Attribute::String("auto_pad", "SAME_UPPER"));
  else
    attrs.push_back(ints("pads", {p, p, p, p}));
  auto y = b.AddNode("FusedSeparableConv", ins, attrs, 1, "block", ops::kKilnDomain);
  if (reuse_residual) {
    auto again = b.AddNode("Add", {y[0], ins[7]}, {}, 1, "again");
    b.AddOutput(again[0]);
  } else {
    b.AddOutput(y[0]);
  }
  auto model = b.Build();
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  Built r{std::move(model).value(), {}};
  ir::SeededRng rng(9);
  r.feeds["x"] = *ir::RandomTensor(DType::kFloat32, c.x, rng, -1, 1);
  if (c.residual) r.feeds["z"] = *ir::RandomTensor(DType::kFloat32, out, rng, -1, 1);
  return r;
}

// Runs the model on cpu and reference and checks they agree; returns cpu's
// output (undefined after a reported failure).
Tensor ExpectCpuMatches(const Built& b, const std::string& what) {
  const cpu::testing::BothRuns r = cpu::testing::RunOnBoth(b.model, b.feeds, what);
  if (!r.ok) return {};
  EXPECT_EQ(r.provider, "cpu") << what << " fell back";
  cpu::testing::ExpectClose(r.got, r.want, what);
  return r.got;
}

std::vector<SepCase> Cases() {
  auto act = [](const std::string& prefix, const char* name, std::vector<float> params = {}) {
    std::vector<Attribute> a = {Attribute::String(prefix + "activation", name)};
    if (!params.empty()) a.push_back(Attribute::Floats(prefix + "activation_params", params));
    return a;
  };
  auto join = [](std::vector<std::vector<Attribute>> parts) {
    std::vector<Attribute> all;
    for (auto& p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
  };
  const auto relu6 = join({act("expand_", "Clip", {0, 6}), act("depthwise_", "Clip", {0, 6})});
  const auto hswish = join({act("expand_", "HardSwish"), act("depthwise_", "HardSwish"), act("", "HardSwish")});
  return {
      {"16->96 dw3/2 ->24 (mobilenet_v2 block 2)", {1, 16, 22, 21}, 96, 24, 3, 2, false, relu6},
      {"24->144 dw3/1 ->24 + residual", {1, 24, 13, 12}, 144, 24, 3, 1, true, relu6},
      {"no expansion 32 dw3/1 ->16", {1, 32, 17, 18}, 0, 16, 3, 1, false, relu6},
      {"no expansion 20 dw5/1 ->40, HardSwish everywhere", {2, 20, 9, 11}, 0, 40, 5, 1, false, hswish},
      {"8->40 dw5/2 ->20 HardSwish, batch 2", {2, 8, 12, 11}, 40, 20, 5, 2, false, hswish},
      {"24->72 dw3/1 ->24 + residual, Relu after", {1, 24, 10, 9}, 72, 24, 3, 1, true, join({relu6, act("", "Relu")})},
  };
}

// Each case on kiln's fused kernel and on the composition of FusedConv
// kernels (KILN_CPU_SEPARABLE=0): both must match the reference, and where
// the fused kernel exists (AVX-512) some outputs must differ in their bits
// (the two sum in different orders), which shows the fused kernel ran.
TEST(CpuFusedSeparableConv, FusedKernelAndCompositionMatchReference) {
  int64_t differing = 0;
  for (const SepCase& c : Cases()) {
    const Built b = Make(c, false);
    const Tensor fused = ExpectCpuMatches(b, c.name);
    setenv("KILN_CPU_SEPARABLE", "0", 1);
    const Tensor composed = ExpectCpuMatches(b, c.name + " (composition)");
    unsetenv("KILN_CPU_SEPARABLE");
    differing += !cpu::testing::SameBits(fused, composed);
  }
  if (cpu::SeparableConv::Available()) EXPECT_GT(differing, 0) << "no case computed differently from the composition: did the fused kernel run?";
}

// The block's residual read again by a later Add: the fused kernel must
// not write its output over it.
TEST(CpuFusedSeparableConv, ResidualReadLaterSurvives) {
  for (const SepCase& c : Cases())
    if (c.residual) ExpectCpuMatches(Make(c, true), c.name + " (residual read again)");
}

}  // namespace
}  // namespace kiln
