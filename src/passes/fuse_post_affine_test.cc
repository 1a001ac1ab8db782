// fuse_post_affine: structure (which nodes are absorbed) and meaning (the
// reference provider gives the same outputs before and after), plus the cpu
// provider's post-op against the reference.
#include "ops/fused.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using ir::Attribute;
using testing::BuildOrDie;
using testing::ExpectRewrite;
using testing::FindOp;

// x -> Conv -> HardSwish (decomposed by Paddle: x * Clip(x + 3, 0, 6) / 6 is
// matched by fuse_conv_activation; the plain op here) -> Mul(s) -> Add(t)
ir::Model ConvActAffine(const std::string& mul_first, bool sub, bool add = true, const char* act = "HardSwish", float scale = 1.75f) {
  ir::GraphBuilder b(17, "main", 5);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 6, 6});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {8, 4, 3, 3}, -0.5, 0.5);
  auto c = b.AddNode("Conv", {x, w}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  auto h = std::string(act) == "Clip" ? b.AddNode("Clip", {c, b.AddInitializer("lo", Tensor::Scalar(-0.3f)), b.AddInitializer("hi", Tensor::Scalar(0.6f))}, {})
                                      : b.AddNode(act, {c}, {});
  auto s = b.AddInitializer("s", Tensor::FromVector<float>(DType::kFloat32, {1}, {scale}));
  auto t = b.AddInitializer("t", Tensor::Scalar(-0.25f));
  auto m = mul_first == "x*s" ? b.AddNode("Mul", {h, s}, {}) : b.AddNode("Mul", {s, h}, {});
  std::string y = m;
  if (add) y = sub ? b.AddNode("Sub", {m, t}, {}) : b.AddNode("Add", {t, m}, {});
  b.AddOutput(b.AddNode("Relu", {y}, {}));
  return BuildOrDie(b);
}

TEST(PassesFusePostAffine, ScalarMulAndAddAfterTheActivation) {
  for (const char* order : {"x*s", "s*x"})
    for (bool sub : {false, true}) {
      ir::Model opt = ExpectRewrite(ConvActAffine(order, sub), OptLevel::kExtended, {"FusedConv", "Relu"});
      auto a = ops::ParseActivation(*FindOp(opt, "FusedConv"));
      ASSERT_TRUE(a.ok());
      EXPECT_EQ(a->kind, ops::Activation::kHardSwish);
      EXPECT_FLOAT_EQ(a->post_scale, 1.75f);
      EXPECT_FLOAT_EQ(a->post_shift, sub ? 0.25f : -0.25f);
    }
  ir::Model mul_only = ExpectRewrite(ConvActAffine("x*s", false, false), OptLevel::kExtended, {"FusedConv", "Relu"});
  EXPECT_FLOAT_EQ(ops::ParseActivation(*FindOp(mul_only, "FusedConv"))->post_shift, 0.f);
}

TEST(PassesFusePostAffine, NonScalarSharedOrOutputValuesStay) {
  // A per-channel Mul is not a scalar: it stays.
  ir::GraphBuilder b(17, "main", 5);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 6, 6});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {8, 4, 3, 3}, -0.5, 0.5);
  auto h = b.AddNode("Relu", {b.AddNode("Conv", {x, w}, {})}, {});
  auto s = b.AddRandomInitializer("s", DType::kFloat32, {8, 1, 1}, 0.5, 1.5);
  b.AddOutput(b.AddNode("Mul", {h, s}, {}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv", "Mul"});
  // The activation's output is also a graph output: the Mul stays.
  ir::GraphBuilder b2(17, "main", 5);
  auto x2 = b2.AddInput("x", DType::kFloat32, Shape{1, 4, 6, 6});
  auto w2 = b2.AddRandomInitializer("w", DType::kFloat32, {8, 4, 3, 3}, -0.5, 0.5);
  auto h2 = b2.AddNode("Relu", {b2.AddNode("Conv", {x2, w2}, {})}, {});
  b2.AddOutput(h2);
  b2.AddOutput(b2.AddNode("Mul", {h2, b2.AddInitializer("s", Tensor::Scalar(2.f))}, {}));
  ExpectRewrite(BuildOrDie(b2), OptLevel::kExtended, {"FusedConv", "Mul"});
  // c - x is not x + const: it stays.
  ir::GraphBuilder b3(17, "main", 5);
  auto x3 = b3.AddInput("x", DType::kFloat32, Shape{1, 4, 6, 6});
  auto w3 = b3.AddRandomInitializer("w", DType::kFloat32, {8, 4, 3, 3}, -0.5, 0.5);
  auto h3 = b3.AddNode("Relu", {b3.AddNode("Conv", {x3, w3}, {})}, {});
  b3.AddOutput(b3.AddNode("Sub", {b3.AddInitializer("c", Tensor::Scalar(2.f)), h3}, {}));
  ExpectRewrite(BuildOrDie(b3), OptLevel::kExtended, {"FusedConv", "Sub"});
}

// The cpu provider runs post_affine as a oneDNN post-op: same values as the reference.
TEST(PassesFusePostAffine, CpuPostOpMatchesTheReference) {
  for (const char* act : {"HardSwish", "HardSigmoid", "Relu", "Sigmoid", "LeakyRelu", "Tanh", "Clip"})
    for (bool add : {false, true})
      for (float scale : {1.75f, -1.5f}) {
  SCOPED_TRACE(std::string(act) + (add ? " * s + t" : " * s") + " s=" + std::to_string(scale));
  ir::Model m = ConvActAffine("s*x", false, add, act, scale);
  auto ref = CreateSessionFromModel(m);
  SessionOptions o;
  o.provider = "cpu";
  auto cpu = CreateSessionFromModel(m, o);
  ASSERT_TRUE(ref.ok() && cpu.ok());
  auto feeds = testing::SeededInputs(m, 3);
  auto a = (*ref)->Run(feeds);
  auto b = (*cpu)->Run(feeds);
  ASSERT_TRUE(a.ok() && b.ok());
  bool fused = false;
  for (const auto& n : (*cpu)->impl().executor->model().graph.nodes)
    fused = fused || (n.op_type == "FusedConv" && n.attrs.count("post_affine"));
  EXPECT_TRUE(fused);
  int64_t bad = 0;
  for (int64_t i = 0; i < (*a)[0].numel(); ++i) bad += std::fabs((*a)[0].GetAsDouble(i) - (*b)[0].GetAsDouble(i)) > 1e-5;
  EXPECT_EQ(bad, 0);
    }
}

}  // namespace
}  // namespace kiln::passes
