// kiln's fused ops (ops/fused.h) on the reference provider: each equals the
// composition it stands for, run op by op; the activation attributes
// round-trip; inference rejects a residual Z of another shape.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/builder.h"
#include "ops/fused.h"
#include "support/op_test_util.h"

namespace kiln {
namespace {

using ir::Attribute;
using kiln::testing::RunNode;

Tensor Random(const Shape& s, uint64_t seed, double lo = -1, double hi = 1) {
  ir::SeededRng rng(seed);
  return *ir::RandomTensor(DType::kFloat32, s, rng, lo, hi);
}

std::vector<Attribute> With(std::vector<Attribute> attrs, const ops::ActivationAttrs& a) {
  for (auto& x : ops::ActivationToAttributes(a)) attrs.push_back(x);
  return attrs;
}

// The activation run as its ONNX op, for the composition.
Tensor RunActivation(const ops::ActivationAttrs& a, const Tensor& v) {
  auto one = [&](const char* op, std::vector<Attribute> attrs = {}) {
    auto r = RunNode(op, {v}, attrs, 1, 18);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return (*r)[0];
  };
  switch (a.kind) {
    case ops::Activation::kNone: return v;
    case ops::Activation::kRelu: return one("Relu");
    case ops::Activation::kClip: {
      auto r = RunNode("Clip", {v, Tensor::Scalar(a.alpha), Tensor::Scalar(a.beta)}, {}, 1, 18);
      return (*r)[0];
    }
    case ops::Activation::kLeakyRelu: return one("LeakyRelu", {Attribute::Float("alpha", a.alpha)});
    case ops::Activation::kSigmoid: return one("Sigmoid");
    case ops::Activation::kSiLU: return (*RunNode("Mul", {v, one("Sigmoid")}, {}, 1, 18))[0];
    case ops::Activation::kHardSigmoid:
      return one("HardSigmoid", {Attribute::Float("alpha", a.alpha), Attribute::Float("beta", a.beta)});
    case ops::Activation::kHardSwish: return one("HardSwish");
    case ops::Activation::kTanh: return one("Tanh");
  }
  return v;
}

void ExpectNear(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_NEAR(a.GetAsDouble(i), b.GetAsDouble(i), tol) << "at " << i;
}

std::vector<ops::ActivationAttrs> AllActivations() {
  using A = ops::Activation;
  return {{A::kNone}, {A::kRelu}, {A::kClip, -0.5f, 0.25f}, {A::kLeakyRelu, 0.2f}, {A::kSigmoid},
          {A::kSiLU}, {A::kHardSigmoid, 0.3f, 0.4f}, {A::kHardSwish}, {A::kTanh}};
}

TEST(FusedOps, ActivationAttributesRoundTrip) {
  for (const auto& a : AllActivations()) {
    ir::Node n;
    n.name = "f";
    n.op_type = "FusedConv";
    for (auto& x : ops::ActivationToAttributes(a)) n.attrs[x.name] = x;
    auto back = ops::ParseActivation(n);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->kind, a.kind);
    EXPECT_EQ(back->alpha, a.alpha);
    EXPECT_EQ(back->beta, a.beta);
  }
  ir::Node bad;
  bad.name = "f";
  bad.op_type = "FusedConv";
  bad.attrs["activation"] = Attribute::String("activation", "Gelu");
  EXPECT_FALSE(ops::ParseActivation(bad).ok());
  bad.attrs["activation"] = Attribute::String("activation", "Clip");
  bad.attrs["activation_params"] = Attribute::Floats("activation_params", {1});
  EXPECT_FALSE(ops::ParseActivation(bad).ok());
}

TEST(FusedOps, ApplyActivationValues) {
  using A = ops::Activation;
  EXPECT_DOUBLE_EQ(ops::ApplyActivation({A::kHardSwish}, 1.0), 1.0 * (1.0 / 6 + 0.5));
  EXPECT_DOUBLE_EQ(ops::ApplyActivation({A::kHardSwish}, -4.0), 0.0);
  EXPECT_DOUBLE_EQ(ops::ApplyActivation({A::kClip, 0, 6}, 7.0), 6.0);
  EXPECT_DOUBLE_EQ(ops::ApplyActivation({A::kLeakyRelu, 0.1f}, -2.0), static_cast<double>(0.1f) * -2.0);
  EXPECT_NEAR(ops::ApplyActivation({A::kSiLU}, 2.0), 2.0 / (1.0 + std::exp(-2.0)), 1e-15);
}

TEST(FusedOps, FusedConvIsConvPlusResidualThenActivation) {
  const Tensor x = Random({1, 4, 5, 5}, 1), w = Random({6, 2, 3, 3}, 2), b = Random({6}, 3), z = Random({1, 6, 3, 5}, 4);
  const std::vector<Attribute> attrs = {Attribute::Ints("pads", {0, 1, 0, 1}), Attribute::Int("group", 2),
                                        Attribute::Ints("strides", {1, 1})};
  auto conv = RunNode("Conv", {x, w, b}, attrs, 1, 18);
  ASSERT_TRUE(conv.ok()) << conv.status().ToString();
  auto sum = RunNode("Add", {(*conv)[0], z}, {}, 1, 18);
  for (const auto& a : AllActivations()) {
    auto fused = RunNode("FusedConv", {x, w, b, z}, With(attrs, a), 1, 1, ops::kKilnDomain);
    ASSERT_TRUE(fused.ok()) << fused.status().ToString();
    ExpectNear((*fused)[0], RunActivation(a, (*sum)[0]));
    auto no_z = RunNode("FusedConv", {x, w, b}, With(attrs, a), 1, 1, ops::kKilnDomain);
    ASSERT_TRUE(no_z.ok()) << no_z.status().ToString();
    ExpectNear((*no_z)[0], RunActivation(a, (*conv)[0]));
  }
}

TEST(FusedOps, FusedGemmIsGemmThenActivation) {
  const Tensor a = Random({5, 3}, 5), b = Random({4, 5}, 6), c = Random({4}, 7);
  const std::vector<Attribute> attrs = {Attribute::Int("transA", 1), Attribute::Int("transB", 1), Attribute::Float("alpha", 0.5f),
                                        Attribute::Float("beta", 2.0f)};
  auto gemm = RunNode("Gemm", {a, b, c}, attrs, 1, 18);
  ASSERT_TRUE(gemm.ok()) << gemm.status().ToString();
  for (const auto& act : AllActivations()) {
    auto fused = RunNode("FusedGemm", {a, b, c}, With(attrs, act), 1, 1, ops::kKilnDomain);
    ASSERT_TRUE(fused.ok()) << fused.status().ToString();
    ExpectNear((*fused)[0], RunActivation(act, (*gemm)[0]));
  }
}

TEST(FusedOps, FusedMatMulIsMatMulPlusBiasThenActivation) {
  const Tensor a = Random({2, 3, 5}, 8), b = Random({5, 4}, 9), bias = Random({4}, 10), bias2 = Random({3, 1}, 11);
  auto mm = RunNode("MatMul", {a, b}, {}, 1, 18);
  ASSERT_TRUE(mm.ok()) << mm.status().ToString();
  for (const Tensor& bv : {bias, bias2}) {
    auto sum = RunNode("Add", {(*mm)[0], bv}, {}, 1, 18);
    for (const auto& act : AllActivations()) {
      auto fused = RunNode("FusedMatMul", {a, b, bv}, With({}, act), 1, 1, ops::kKilnDomain);
      ASSERT_TRUE(fused.ok()) << fused.status().ToString();
      ExpectNear((*fused)[0], RunActivation(act, (*sum)[0]));
    }
  }
  auto plain = RunNode("FusedMatMul", {a, b}, With({}, {ops::Activation::kTanh}), 1, 1, ops::kKilnDomain);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ExpectNear((*plain)[0], RunActivation({ops::Activation::kTanh}, (*mm)[0]));
}

TEST(FusedOps, InferenceRejectsMisfitExtras) {
  const Tensor x = Random({1, 2, 4, 4}, 1), w = Random({3, 2, 1, 1}, 2);
  EXPECT_FALSE(RunNode("FusedConv", {x, w, Tensor(), Random({1, 3, 1, 4}, 3)}, {}, 1, 1, ops::kKilnDomain).ok());
  EXPECT_TRUE(RunNode("FusedConv", {x, w, Tensor(), Random({1, 3, 4, 4}, 3)}, {}, 1, 1, ops::kKilnDomain).ok());
  EXPECT_FALSE(RunNode("FusedMatMul", {Random({2, 3}, 1), Random({3, 4}, 2), Random({2, 2, 4}, 3)}, {}, 1, 1, ops::kKilnDomain).ok());
  EXPECT_FALSE(RunNode("FusedConv", {x, w}, {Attribute::String("activation", "Swish")}, 1, 1, ops::kKilnDomain).ok());
}

TEST(FusedOps, FusedElementwiseIsItsStepsAndRejectsMalformedOnes) {
  const Tensor x = Random({2, 3, 4}, 1), s = Random({3, 1}, 2);
  auto attrs = [](std::vector<std::string> steps, std::vector<int64_t> in, std::vector<float> params) {
    return std::vector<Attribute>{Attribute::Strings("steps", std::move(steps)), Attribute::Ints("step_inputs", std::move(in)),
                                  Attribute::Floats("step_params", std::move(params))};
  };
  // y = HardSigmoid(x * s) - x, alpha 0.3 beta 0.6.
  auto fused = RunNode("FusedElementwise", {x, s}, attrs({"Mul", "HardSigmoid", "Sub"}, {0, 1, -1, -2, 0}, {0, 0, 0.3f, 0.6f, 0, 0}),
                       1, 1, ops::kKilnDomain);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  auto m = RunNode("Mul", {x, s}, {}, 1, 18);
  auto h = RunNode("HardSigmoid", {(*m)[0]}, {Attribute::Float("alpha", 0.3f), Attribute::Float("beta", 0.6f)}, 1, 18);
  auto want = RunNode("Sub", {(*h)[0], x}, {}, 1, 18);
  ExpectNear((*fused)[0], (*want)[0], 0);

  struct Bad {
    std::vector<Attribute> attrs;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {attrs({"Pow"}, {0, 1}, {0, 0}), "not an op FusedElementwise runs"},
      {attrs({"Mul", "Relu"}, {0, -2, -1}, {0, 0, 0, 0}), "not an earlier step"},
      {attrs({"Relu", "Mul"}, {0, 0, 1}, {0, 0, 0, 0}), "result of step 0 is never read"},
      {attrs({"Relu"}, {0}, {0, 0}), "input 1 is read by no step"},
      {attrs({"Mul"}, {0, 3}, {0, 0}), "reads input 3"},
      {attrs({"Mul"}, {0, 1}, {0}), "2 per step"},
      {attrs({"Mul"}, {0, 1, 1}, {0, 0}), "the steps read 2"},
  };
  for (const Bad& b : bad) {
    auto r = RunNode("FusedElementwise", {x, s}, b.attrs, 1, 1, ops::kKilnDomain);
    ASSERT_FALSE(r.ok()) << b.says;
    EXPECT_NE(r.status().message().find(b.says), std::string::npos) << r.status().ToString();
  }
}

}  // namespace
}  // namespace kiln
