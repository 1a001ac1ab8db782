// fuse_elementwise: which elementwise trees become one FusedElementwise, and
// that the fused graph computes what the original did (both on the
// reference provider, where the fused node runs as its steps).
#include <gtest/gtest.h>

#include "ops/fused.h"
#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace kiln::passes::testing;  // NOLINT
using ir::Attribute;

std::vector<std::string> Steps(const ir::Node& n) { return *n.GetStrings("steps"); }
std::vector<int64_t> StepInputs(const ir::Node& n) { return *n.GetInts("step_inputs"); }

TEST(PassesFuseElementwise, ScaledResidualChainOfPaddleOcrDet) {
  // x + x * s (s per channel), then + r: one node reading x, s and r.
  ir::GraphBuilder b(11);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 8, 6, 5});
  auto r = b.AddInput("r", DType::kFloat32, Shape{1, 8, 6, 5});
  auto s = b.AddRandomInitializer("s", DType::kFloat32, {1, 8, 1, 1}, 0, 1);
  auto t = b.AddNode("Add", {x, b.AddNode("Mul", {x, s})});
  b.AddOutput(b.AddNode("Add", {t, r}, {}, "last"));
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedElementwise"});
  const ir::Node& f = opt.graph.nodes[0];
  EXPECT_EQ(f.name, "last");
  EXPECT_EQ(f.inputs, (std::vector<std::string>{"x", "s", "r"}));
  EXPECT_EQ(Steps(f), (std::vector<std::string>{"Mul", "Add", "Add"}));
  EXPECT_EQ(StepInputs(f), (std::vector<int64_t>{0, 1, 0, -1, -2, 2}));
}

TEST(PassesFuseElementwise, ActivationsKeepTheirAttributesAndDefaults) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3, 4});
  auto v = b.AddNode("LeakyRelu", {x}, {Attribute::Float("alpha", 0.3f)});
  v = b.AddNode("HardSigmoid", {v});  // defaults alpha 0.2, beta 0.5
  v = b.AddNode("Sub", {b.AddNode("Tanh", {v}), x});
  v = b.AddNode("Sqrt", {b.AddNode("Abs", {v})});
  b.AddOutput(b.AddNode("LeakyRelu", {v}));  // default alpha 0.01
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedElementwise"});
  const ir::Node& f = opt.graph.nodes[0];
  EXPECT_EQ(Steps(f), (std::vector<std::string>{"LeakyRelu", "HardSigmoid", "Tanh", "Sub", "Abs", "Sqrt", "LeakyRelu"}));
  const std::vector<float> params = *f.GetFloats("step_params");
  ASSERT_EQ(params.size(), 14u);
  EXPECT_FLOAT_EQ(params[0], 0.3f);
  EXPECT_FLOAT_EQ(params[2], 0.2f);
  EXPECT_FLOAT_EQ(params[3], 0.5f);
  EXPECT_FLOAT_EQ(params[12], 0.01f);
}

TEST(PassesFuseElementwise, SharedGraphOutputAndSmallerValuesStayApart) {
  {  // t has a second reader: Mul stays, the Add+Relu above it fuse.
    ir::GraphBuilder b(17);
    auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3});
    auto t = b.AddNode("Mul", {x, x});
    b.AddOutput(b.AddNode("Relu", {b.AddNode("Add", {t, x})}));
    b.AddOutput(b.AddNode("Neg", {t}));
    ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Mul", "FusedElementwise", "Neg"});
  }
  {  // t is a graph output: it must be computed on its own.
    ir::GraphBuilder b(17);
    auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3});
    auto t = b.AddNode("Sigmoid", {x});
    b.AddOutput(t);
    b.AddOutput(b.AddNode("Mul", {t, x}));
    ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Sigmoid", "Mul"});
  }
  {  // An SE gate: sigmoid of a per-channel vector is computed once, not per pixel.
    ir::GraphBuilder b(17);
    auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 5, 5});
    auto s = b.AddInput("s", DType::kFloat32, Shape{1, 4, 1, 1});
    b.AddOutput(b.AddNode("Relu", {b.AddNode("Mul", {x, b.AddNode("Sigmoid", {s})})}));
    ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Sigmoid", "FusedElementwise"});
    EXPECT_EQ(Steps(opt.graph.nodes[1]), (std::vector<std::string>{"Mul", "Relu"}));
  }
}

TEST(PassesFuseElementwise, DynamicDimsFuse) {
  // PP-OCR models come with dynamic H and W: equal symbolic dims fuse.
  ir::GraphBuilder b(17);
  const ir::Dims d = {ir::Dim::Symbol("N"), ir::Dim::Known(3), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")};
  auto x = b.AddInput("x", DType::kFloat32, d);
  auto s = b.AddRandomInitializer("s", DType::kFloat32, {1, 3, 1, 1}, -1, 1);
  b.AddOutput(b.AddNode("Add", {x, b.AddNode("Mul", {x, s})}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedElementwise"}, {{"x", {2, 3, 4, 5}}});
}

TEST(PassesFuseElementwise, LongChainsSplitAtTheStepLimit) {
  // Ten Relu/Neg steps: a subtree that would pass eight steps stays out
  // whole, so the lower eight fuse and the top two make a pair.
  ir::GraphBuilder b(17);
  auto v = b.AddInput("x", DType::kFloat32, Shape{3, 4});
  for (int i = 0; i < 10; ++i) v = b.AddNode(i % 2 ? "Neg" : "Relu", {v});
  b.AddOutput(v);
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedElementwise", "FusedElementwise"});
  EXPECT_EQ(Steps(opt.graph.nodes[0]).size(), 8u);
  EXPECT_EQ(Steps(opt.graph.nodes[1]).size(), 2u);
}

TEST(PassesFuseElementwise, TheConvFusionsComeFirst) {
  // Conv + Add(residual) + Relu is fuse_residual_add's; only the Mul after it is left, alone.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto z = b.AddInput("z", DType::kFloat32, Shape{1, 4, 6, 6});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {4, 3, 3, 3}, -1, 1);
  auto c = b.AddNode("Conv", {x, w}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  auto y = b.AddNode("Relu", {b.AddNode("Add", {c, z})});
  b.AddOutput(b.AddNode("Mul", {y, z}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv", "Mul"});
}

}  // namespace
}  // namespace kiln::passes
