// fuse_separable_conv on small MobileNet-like blocks: what fuses (with and
// without expansion, strided, 5x5, with a residual), what must not (an
// intermediate read twice or returned, weights that are not constant),
// dynamic shapes, and KILN_FUSE_SEPARABLE=0. Fused graphs give the unfused outputs on the
// reference provider.
#include <cstdlib>

#include "ops/fused.h"
#include "passes/pass_test_util.h"

namespace kiln::passes::testing {
namespace {

using ir::Attribute;

std::string Scalar(ir::GraphBuilder& b, const std::string& name, float v) {
  return b.AddInitializer(name, Tensor::FromVector<float>(DType::kFloat32, {}, {v}));
}

// Relu6 as exported by PyTorch: Clip(x, 0, 6).
std::string Relu6(ir::GraphBuilder& b, const std::string& x) {
  return b.AddNode("Clip", {x, Scalar(b, x + "_lo", 0), Scalar(b, x + "_hi", 6)});
}

// 1x1 conv cin -> cout with bias.
std::string Pointwise(ir::GraphBuilder& b, const std::string& x, int64_t cin, int64_t cout, const std::string& name) {
  auto w = b.AddRandomInitializer(name + "_w", DType::kFloat32, {cout, cin, 1, 1}, -0.5, 0.5);
  auto bias = b.AddRandomInitializer(name + "_b", DType::kFloat32, {cout}, -0.5, 0.5);
  return b.AddNode("Conv", {x, w, bias}, {}, name);
}

// Depthwise kxk conv over m channels, "same" pads.
std::string Depthwise(ir::GraphBuilder& b, const std::string& x, int64_t m, int64_t k, int64_t stride, const std::string& name,
                      const std::string& weights = "") {
  auto w = weights.empty() ? b.AddRandomInitializer(name + "_w", DType::kFloat32, {m, 1, k, k}, -0.5, 0.5) : weights;
  auto bias = b.AddRandomInitializer(name + "_b", DType::kFloat32, {m}, -0.5, 0.5);
  const int64_t p = k / 2;
  return b.AddNode("Conv", {x, w, bias},
                   {Attribute::Int("group", m), Attribute::Ints("kernel_shape", {k, k}), Attribute::Ints("pads", {p, p, p, p}),
                    Attribute::Ints("strides", {stride, stride})},
                   name);
}

// MobileNetV2's inverted residual: expand c -> 4c, Relu6, depthwise, Relu6,
// project back to `cout`, plus x when the shapes allow.
// `dynamic`: x is [N, c, H, W] (named dims) instead of [1, c, 10, 10].
ir::Model InvertedResidual(int64_t c, int64_t cout, int64_t k, int64_t stride, bool residual, bool dynamic = false) {
  ir::GraphBuilder b(17);
  auto x = dynamic ? b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(c), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")})
                   : b.AddInput("x", DType::kFloat32, Shape{1, c, 10, 10});
  auto h = Relu6(b, Pointwise(b, x, c, 4 * c, "expand"));
  auto d = Relu6(b, Depthwise(b, h, 4 * c, k, stride, "dw"));
  auto y = Pointwise(b, d, 4 * c, cout, "project");
  if (residual) y = b.AddNode("Add", {y, x});
  b.AddOutput(y);
  return BuildOrDie(b);
}

const ir::Node& Only(const ir::Model& m, const std::string& op) {
  static const ir::Node kNone;
  const ir::Node* n = FindOp(m, op);
  EXPECT_NE(n, nullptr) << op;
  return n ? *n : kNone;
}

TEST(PassesFuseSeparableConv, InvertedResidualWithRelu6AndAdd) {
  PassReport report;
  ir::Model m = InvertedResidual(8, 8, 3, 1, true);
  ir::Model opt = ExpectRewrite(m, OptLevel::kExtended, {"FusedSeparableConv"});
  const ir::Node& f = Only(opt, "FusedSeparableConv");
  EXPECT_EQ(f.name, "dw");
  EXPECT_EQ(f.domain, ops::kKilnDomain);
  ASSERT_EQ(f.inputs.size(), 8u);
  EXPECT_EQ(f.inputs[ops::kSepX], "x");
  EXPECT_EQ(f.inputs[ops::kSepZ], "x");
  EXPECT_EQ(f.outputs[0], opt.graph.outputs[0].name);
  auto expand = ops::ParseActivation(f, "expand_");
  auto dw = ops::ParseActivation(f, "depthwise_");
  auto project = ops::ParseActivation(f);
  ASSERT_TRUE(expand.ok() && dw.ok() && project.ok());
  EXPECT_EQ(expand->kind, ops::Activation::kClip);
  EXPECT_EQ(expand->beta, 6.f);
  EXPECT_EQ(dw->kind, ops::Activation::kClip);
  EXPECT_EQ(project->kind, ops::Activation::kNone);
  EXPECT_TRUE(opt.graph.value_info.empty());
  Optimized(m, OptLevel::kExtended, &report);
  EXPECT_NE(ReportText(report).find("fuse_separable_conv: expand + dw (depthwise 3x3) + project + residual"), std::string::npos)
      << ReportText(report);
}

TEST(PassesFuseSeparableConv, StridedDepthwiseWithoutResidual) {
  ir::Model opt = ExpectRewrite(InvertedResidual(8, 16, 3, 2, false), OptLevel::kExtended, {"FusedSeparableConv"});
  const ir::Node& f = Only(opt, "FusedSeparableConv");
  EXPECT_EQ(f.inputs.size(), 7u);  // no Z
  auto strides = f.GetInts("strides");
  ASSERT_TRUE(strides.ok());
  EXPECT_EQ(*strides, (std::vector<int64_t>{2, 2}));
}

TEST(PassesFuseSeparableConv, FiveByFiveDepthwise) {
  ir::Model opt = ExpectRewrite(InvertedResidual(4, 4, 5, 1, true), OptLevel::kExtended, {"FusedSeparableConv"});
  auto k = Only(opt, "FusedSeparableConv").GetInts("kernel_shape");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(*k, (std::vector<int64_t>{5, 5}));
}

TEST(PassesFuseSeparableConv, DepthwisePairWithoutExpansion) {
  // MobileNetV2's first block: a 3x3 stem conv (no 1x1 expansion to take),
  // then depthwise + Relu6 and a linear projection.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 12, 12});
  auto sw = b.AddRandomInitializer("stem_w", DType::kFloat32, {8, 3, 3, 3}, -0.5, 0.5);
  auto stem = Relu6(b, b.AddNode("Conv", {x, sw}, {Attribute::Ints("pads", {1, 1, 1, 1}), Attribute::Ints("strides", {2, 2})}, "stem"));
  auto d = Relu6(b, Depthwise(b, stem, 8, 3, 1, "dw"));
  b.AddOutput(Pointwise(b, d, 8, 16, "project"));
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv", "FusedSeparableConv"});
  const ir::Node& f = Only(opt, "FusedSeparableConv");
  EXPECT_EQ(f.inputs.size(), 7u);
  EXPECT_FALSE(f.HasInput(ops::kSepWe));
  EXPECT_FALSE(f.HasInput(ops::kSepBe));
  EXPECT_EQ(f.inputs[ops::kSepX], Only(opt, "FusedConv").outputs[0]);
}

TEST(PassesFuseSeparableConv, DynamicShapesFuseBlocksWithExpansion) {
  // The residual Add fuses too: expansion and depthwise keep N, H and W.
  for (int64_t stride : {1, 2}) {
    ir::Model opt = ExpectRewrite(InvertedResidual(8, 8, 3, stride, stride == 1, true), OptLevel::kExtended, {"FusedSeparableConv"},
                                  {{"x", {2, 8, 7, 9}}});
    EXPECT_EQ(Only(opt, "FusedSeparableConv").inputs.size(), stride == 1 ? 8u : 7u);
  }
}

TEST(PassesFuseSeparableConv, DynamicShapesLeaveAPairWithoutExpansion) {
  // See Match: PP-OCRv4's pairs ran faster unfused.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(8), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")});
  b.AddOutput(Pointwise(b, Relu6(b, Depthwise(b, x, 8, 3, 1, "dw")), 8, 16, "project"));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv", "Conv"}, {{"x", {1, 8, 6, 6}}});
}

TEST(PassesFuseSeparableConv, ExpansionReadTwiceLeavesThePair) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 8, 8});
  auto h = Relu6(b, Pointwise(b, x, 4, 16, "expand"));
  auto d = Relu6(b, Depthwise(b, h, 16, 3, 1, "dw"));
  b.AddOutput(Pointwise(b, d, 16, 4, "project"));
  b.AddOutput(b.AddNode("Relu", {h}));  // a second reader of the expanded value
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv", "FusedSeparableConv", "Relu"});
}

TEST(PassesFuseSeparableConv, DepthwiseOutputReadTwiceDoesNotFuse) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 8, 8});
  auto h = Relu6(b, Pointwise(b, x, 4, 16, "expand"));
  auto d = Relu6(b, Depthwise(b, h, 16, 3, 1, "dw"));
  b.AddOutput(Pointwise(b, d, 16, 4, "project"));
  b.AddOutput(b.AddNode("Relu", {d}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv", "FusedConv", "Conv", "Relu"});
}

TEST(PassesFuseSeparableConv, DepthwiseOutputAsGraphOutputDoesNotFuse) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 8, 8});
  auto d = Depthwise(b, x, 4, 3, 1, "dw");
  b.AddOutput(Pointwise(b, d, 4, 8, "project"));
  b.AddOutput(d);
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "Conv"});
}

TEST(PassesFuseSeparableConv, WeightsThatAreNotConstantDoNotFuse) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 8, 8});
  auto wd = b.AddInput("wd", DType::kFloat32, Shape{16, 1, 3, 3});  // fed by the user
  auto h = Relu6(b, Pointwise(b, x, 4, 16, "expand"));
  auto d = Depthwise(b, h, 16, 3, 1, "dw", wd);
  b.AddOutput(Pointwise(b, d, 16, 4, "project"));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv", "Conv", "Conv"});
}

// The optimized graph `opt` on a cpu session of `threads` threads, run as is.
std::unique_ptr<Session> CpuSession(const ir::Model& opt, int threads) {
  SessionOptions options;
  options.provider = "cpu";
  options.opt_level = "disable";
  options.threads = threads;
  auto s = CreateSessionFromModel(opt, options);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

// The session's outputs on `feeds` against the unfused model `m` on the reference.
void ExpectMatchesReference(Session& s, const ir::Model& m, const std::map<std::string, Tensor>& feeds, const std::string& what) {
  const auto want = RunReference(m, feeds);
  auto got = s.Run(feeds);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
  ASSERT_EQ(got->size(), want.size()) << what;
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ((*got)[o].shape(), want[o].shape()) << what;
    for (int64_t i = 0; i < want[o].numel(); ++i)
      ASSERT_NEAR((*got)[o].GetAsDouble(i), want[o].GetAsDouble(i), 1e-4) << what << ": output " << o << " at " << i;
  }
}

// The fused graph on the cpu provider (its kernel for the op, or the
// composition of its FusedConv kernels where that declines) against the
// unfused graph on the reference.
TEST(PassesFuseSeparableConv, FusedGraphOnCpuMatchesReference) {
  for (const ir::Model& m : {InvertedResidual(8, 8, 3, 1, true), InvertedResidual(8, 16, 3, 2, false), InvertedResidual(4, 4, 5, 1, true)}) {
    ir::Model opt = Optimized(m, OptLevel::kExtended);
    ASSERT_EQ(CountOp(opt, "FusedSeparableConv"), 1u);
    auto s = CpuSession(opt, 1);
    ASSERT_NE(s, nullptr);
    ExpectMatchesReference(*s, m, SeededInputs(m, 7), "static");
  }
}

// A dynamic block on the cpu provider: its kernel is built per input shape
// (and reused when a shape comes back); each run against the reference.
TEST(PassesFuseSeparableConv, DynamicFusedGraphOnCpuMatchesReferenceAtEachShape) {
  for (int64_t stride : {1, 2}) {
    const ir::Model m = InvertedResidual(16, 16, 3, stride, stride == 1, true);
    ir::Model opt = Optimized(m, OptLevel::kExtended);
    ASSERT_EQ(CountOp(opt, "FusedSeparableConv"), 1u);
    auto s = CpuSession(opt, 2);
    ASSERT_NE(s, nullptr);
    for (const Shape& xs : {Shape{1, 16, 10, 10}, Shape{2, 16, 7, 13}, Shape{1, 16, 1, 5}, Shape{1, 16, 10, 10}})
      ExpectMatchesReference(*s, m, SeededInputs(m, 11, {{"x", xs}}), ShapeToString(xs) + " stride " + std::to_string(stride));
  }
}

TEST(PassesFuseSeparableConv, EnvironmentVariableTurnsThePassOff) {
  ASSERT_EQ(setenv("KILN_FUSE_SEPARABLE", "0", 1), 0);
  ir::Model opt = Optimized(InvertedResidual(8, 8, 3, 1, true), OptLevel::kExtended);
  unsetenv("KILN_FUSE_SEPARABLE");
  EXPECT_EQ(CountOp(opt, "FusedSeparableConv"), 0u);
  EXPECT_EQ(CountOp(opt, "FusedConv"), 3u);
}

}  // namespace
}  // namespace kiln::passes::testing
