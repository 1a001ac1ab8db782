// The cpu provider's MatMul, Gemm, FusedGemm and FusedMatMul against the
// reference provider: 2-D and batched products with broadcast batch dims
// and 1-D operands, Gemm's transA/transB/alpha/beta and every broadcast of
// C, each with B (and C / Bias) as an initializer (packed at session
// creation) and as a run-time input. Every case checks that the node ran on
// cpu and max |cpu - ref| <= 1e-4 * max(1, |ref|); declined cases must run
// on the reference.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/builder.h"
#include "ops/fused.h"
#include "providers/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using cpu::testing::BothRuns;
using cpu::testing::ExpectClose;
using cpu::testing::RunOnBoth;

using ir::Attribute;

struct Operand {
  Shape shape;
  bool constant = false;
};

struct Built {
  ir::Model model;
  std::map<std::string, Tensor> feeds;
};

// One node "n" over operands a, b, (c); constants are initializers.
Built Make(const std::string& op, const std::string& domain, const std::vector<Operand>& operands, const std::vector<Attribute>& attrs,
           int64_t opset = 17, DType dtype = DType::kFloat32) {
  ir::GraphBuilder b(opset, "main", 21);
  ir::SeededRng rng(13);
  std::map<std::string, Tensor> feeds;
  std::vector<std::string> ins;
  const char* names[] = {"a", "b", "c"};
  for (size_t i = 0; i < operands.size(); ++i) {
    Tensor t = *ir::RandomTensor(dtype, operands[i].shape, rng, -1, 1);
    if (operands[i].constant) {
      ins.push_back(b.AddInitializer(names[i], t));
    } else {
      ins.push_back(b.AddInput(names[i], dtype, operands[i].shape));
      feeds[names[i]] = t;
    }
  }
  if (!domain.empty()) b.SetOpset(domain, 1);
  auto y = b.AddNode(op, ins, attrs, 1, "n", domain);
  b.AddOutput(y[0]);
  auto m = b.Build();
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return Built{std::move(m).value(), std::move(feeds)};
}

// Returns the provider the node ran on ("" on failure); the results must
// agree with the reference either way.
std::string RunBoth(const Built& b, const std::string& what) {
  const BothRuns r = RunOnBoth(b.model, b.feeds, what);
  if (!r.ok) return "";
  ExpectClose(r.got, r.want, what);
  return r.provider;
}

void ExpectCpuMatchesReference(const Built& b, const std::string& what) { EXPECT_EQ(RunBoth(b, what), "cpu") << what << " fell back"; }

struct MatMulCase {
  std::string name;
  Shape a, b;
};

std::vector<MatMulCase> MatMulCases() {
  return {
      {"2-D", {5, 7}, {7, 3}},
      {"batched", {2, 5, 7}, {2, 7, 3}},
      {"broadcast batch both ways", {2, 1, 5, 7}, {3, 7, 4}},
      {"A batch, B 2-D (folded into M)", {2, 3, 5, 7}, {7, 4}},
      {"A 2-D, B batched", {5, 7}, {2, 7, 4}},
      {"A batch 1 broadcast against B batch", {1, 5, 7}, {4, 7, 3}},
      {"1-D A", {7}, {7, 3}},
      {"1-D B", {5, 7}, {7}},
      {"both 1-D", {7}, {7}},
      {"1-D A, batched B", {7}, {2, 7, 3}},
      {"batched A, 1-D B", {2, 5, 7}, {7}},
      {"Linear layer size", {1, 40, 96}, {96, 120}},
      {"rank 5", {2, 1, 2, 3, 4}, {1, 3, 1, 4, 5}},
  };
}

TEST(CpuMatMul, MatchesReferenceWithConstantAndRuntimeB) {
  for (const MatMulCase& c : MatMulCases())
    for (bool cb : {true, false})
      ExpectCpuMatchesReference(Make("MatMul", "", {{c.a}, {c.b, cb}}, {}), c.name + (cb ? " (B constant)" : " (B input)"));
}

TEST(CpuMatMul, DynamicShapesRebuildPerShape) {
  ir::GraphBuilder b(17, "main", 3);
  auto a = b.AddInput("a", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Symbol("S"), ir::Dim::Known(6)});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {6, 5}, -1, 1);
  b.AddOutput(b.AddNode("MatMul", {a, w}, {}, "n"));
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  for (Shape s : {Shape{1, 3, 6}, Shape{2, 7, 6}, Shape{1, 3, 6}}) {
    ir::SeededRng rng(9);
    ExpectCpuMatchesReference(Built{*m, {{"a", *ir::RandomTensor(DType::kFloat32, s, rng, -1, 1)}}}, ShapeToString(s));
  }
}

TEST(CpuGemm, MatchesReferenceOnTransposeAlphaBetaAndEveryBroadcastOfC) {
  const int64_t M = 4, K = 6, N = 5;
  const std::vector<std::pair<std::string, std::optional<Shape>>> cshapes = {
      {"no C", std::nullopt}, {"C [N]", Shape{N}}, {"C [1,N]", Shape{1, N}}, {"C [M,1]", Shape{M, 1}},
      {"C [M,N]", Shape{M, N}}, {"C [1,1]", Shape{1, 1}}, {"C scalar", Shape{}}};
  int cases = 0;
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (float alpha : {1.f, 0.5f})
        for (float beta : {1.f, 0.25f})
          for (const auto& [cname, cs] : cshapes)
            for (bool const_b : {true, false})
              for (bool const_c : {true, false}) {
                if (!cs && (!const_c || beta != 1.f)) continue;  // nothing to vary without C
                std::vector<Operand> ops = {{ta ? Shape{K, M} : Shape{M, K}}, {tb ? Shape{N, K} : Shape{K, N}, const_b}};
                if (cs) ops.push_back({*cs, const_c});
                std::vector<Attribute> attrs = {Attribute::Int("transA", ta), Attribute::Int("transB", tb), Attribute::Float("alpha", alpha),
                                                Attribute::Float("beta", beta)};
                const std::string what = "transA " + std::to_string(ta) + " transB " + std::to_string(tb) + " alpha " + std::to_string(alpha) +
                                         " beta " + std::to_string(beta) + " " + cname + (const_b ? " B const" : " B input") +
                                         (cs ? (const_c ? " C const" : " C input") : "");
                ExpectCpuMatchesReference(Make("Gemm", "", ops, attrs), what);
                ++cases;
              }
  EXPECT_GT(cases, 300);
}

// Gemm-9 (C required, broadcast from opset 7) and Gemm-6 with broadcast=0 (C is [M, N]).
TEST(CpuGemm, OldOpsets) {
  ExpectCpuMatchesReference(Make("Gemm", "", {{{3, 4}}, {{4, 5}, true}, {{5}, true}}, {Attribute::Float("beta", 2.f)}, 9), "Gemm-9");
  ExpectCpuMatchesReference(Make("Gemm", "", {{{3, 4}}, {{5, 4}, true}, {{3, 5}}}, {Attribute::Int("transB", 1)}, 6), "Gemm-6 broadcast 0");
  ExpectCpuMatchesReference(Make("Gemm", "", {{{3, 4}}, {{4, 5}}, {{5}, true}}, {Attribute::Int("broadcast", 1)}, 6), "Gemm-6 broadcast 1");
}

std::vector<ops::ActivationAttrs> Activations() {
  return {
      {ops::Activation::kNone, 0, 0},     {ops::Activation::kRelu, 0, 0},        {ops::Activation::kLeakyRelu, 0.1f, 0},
      {ops::Activation::kClip, 0.f, 6.f}, {ops::Activation::kClip, -0.2f, 0.3f}, {ops::Activation::kSigmoid, 0, 0},
      {ops::Activation::kSiLU, 0, 0},     {ops::Activation::kTanh, 0, 0},        {ops::Activation::kHardSigmoid, 0.2f, 0.5f},
      {ops::Activation::kHardSwish, 0, 0},
  };
}

TEST(CpuGemm, FusedGemmEveryActivation) {
  for (const auto& a : Activations())
    for (bool const_c : {true, false}) {
      auto attrs = ops::ActivationToAttributes(a);
      attrs.push_back(Attribute::Int("transB", 1));
      attrs.push_back(Attribute::Float("alpha", 0.75f));
      const std::string what = "activation " + std::to_string(static_cast<int>(a.kind)) + (const_c ? " C const" : " C input");
      ExpectCpuMatchesReference(Make("FusedGemm", ops::kKilnDomain, {{{3, 8}}, {{6, 8}, true}, {{6}, const_c}}, attrs), what);
      attrs.push_back(Attribute::Float("beta", 0.5f));
      ExpectCpuMatchesReference(Make("FusedGemm", ops::kKilnDomain, {{{3, 8}}, {{6, 8}, true}, {{3, 6}, const_c}}, attrs), what + " beta 0.5");
    }
}

TEST(CpuMatMul, FusedMatMulEveryActivationAndBiasBroadcast) {
  for (const auto& a : Activations())
    ExpectCpuMatchesReference(Make("FusedMatMul", ops::kKilnDomain, {{{2, 5, 7}}, {{7, 4}, true}, {{4}, true}}, ops::ActivationToAttributes(a)),
                              "activation " + std::to_string(static_cast<int>(a.kind)));
  const ops::ActivationAttrs relu{ops::Activation::kRelu, 0, 0};
  struct BiasCase {
    std::string name;
    Shape a, b;
    std::optional<Shape> bias;
  };
  const std::vector<BiasCase> cases = {
      {"no bias", {2, 5, 7}, {7, 4}, std::nullopt},
      {"bias [N] folded", {2, 5, 7}, {7, 4}, Shape{4}},
      {"bias [M,N] (not foldable)", {2, 5, 7}, {7, 4}, Shape{5, 4}},
      {"bias [B,1,N]", {2, 5, 7}, {7, 4}, Shape{2, 1, 4}},
      {"bias [M,1]", {2, 5, 7}, {2, 7, 4}, Shape{5, 1}},
      {"bias scalar", {5, 7}, {7, 4}, Shape{}},
      {"bias full shape", {3, 5, 7}, {3, 7, 4}, Shape{3, 5, 4}},
      {"1-D A, bias [N]", {7}, {7, 4}, Shape{4}},
      {"1-D B, bias [M]", {2, 5, 7}, {7}, Shape{5}},
  };
  for (const BiasCase& c : cases)
    for (bool const_b : {true, false})
      for (bool const_bias : {true, false}) {
        if (!c.bias && !const_bias) continue;
        std::vector<Operand> ops = {{c.a}, {c.b, const_b}};
        if (c.bias) ops.push_back({*c.bias, const_bias});
        ExpectCpuMatchesReference(Make("FusedMatMul", ops::kKilnDomain, ops, ops::ActivationToAttributes(relu)),
                                  c.name + (const_b ? " B const" : " B input") + (const_bias ? " bias const" : " bias input"));
      }
}

TEST(CpuMatMul, DeclinedCasesFallBack) {
  // Integer MatMul and float64 Gemm: float32 only.
  EXPECT_EQ(RunBoth(Make("MatMul", "", {{{3, 4}}, {{4, 2}}}, {}, 17, DType::kInt32), "int32 MatMul"), "reference");
  EXPECT_EQ(RunBoth(Make("Gemm", "", {{{3, 4}}, {{4, 2}, true}}, {}, 17, DType::kFloat64), "float64 Gemm"), "reference");
  // An empty inner dimension: the reference writes the zeros.
  EXPECT_EQ(RunBoth(Make("MatMul", "", {{{3, 0}}, {{0, 2}, true}}, {}), "K = 0"), "reference");
}

}  // namespace
}  // namespace kiln
