// Tests of the extended passes that fuse: fold_batchnorm,
// fuse_conv_activation (every activation form), fuse_residual_add. Each
// checks the ops after and the outputs on the reference provider, and the
// negative cases: a value with another reader, a graph output, a broadcast.
#include "ops/fused.h"
#include "passes/graph_util.h"
#include "passes/pass_test_util.h"

namespace kiln::passes::testing {
namespace {

using ir::Attribute;

Tensor F32(const Shape& s, const std::vector<float>& v) { return Tensor::FromVector<float>(DType::kFloat32, s, v); }
std::string Scalar(ir::GraphBuilder& b, const std::string& name, float v) { return b.AddInitializer(name, F32({}, {v})); }

// x [1,3,6,6] -> Conv 3x3 pad 1 (3->4, bias) -> returns its output.
std::string AddConv(ir::GraphBuilder& b, const std::string& x, bool bias = true, const std::string& prefix = "c") {
  auto w = b.AddRandomInitializer(prefix + "_w", DType::kFloat32, {4, 3, 3, 3}, -0.5, 0.5);
  std::vector<std::string> in = {x, w};
  if (bias) in.push_back(b.AddRandomInitializer(prefix + "_b", DType::kFloat32, {4}, -0.5, 0.5));
  return b.AddNode("Conv", in, {Attribute::Ints("pads", {1, 1, 1, 1}), Attribute::Ints("kernel_shape", {3, 3})}, prefix);
}

ops::ActivationAttrs ActivationOf(const ir::Model& m, const std::string& op) {
  const ir::Node* n = FindOp(m, op);
  EXPECT_NE(n, nullptr) << op;
  if (!n) return {};
  auto a = ops::ParseActivation(*n);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : ops::ActivationAttrs{};
}

// ------------------------------------------------------------ fold_batchnorm

ir::GraphBuilder ConvBatchNorm(bool bias, int64_t opset = 17) {
  ir::GraphBuilder b(opset);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto c = AddConv(b, x, bias);
  auto scale = b.AddRandomInitializer("scale", DType::kFloat32, {4}, 0.5, 1.5);
  auto shift = b.AddRandomInitializer("shift", DType::kFloat32, {4}, -1, 1);
  auto mean = b.AddRandomInitializer("mean", DType::kFloat32, {4}, -1, 1);
  auto var = b.AddRandomInitializer("var", DType::kFloat32, {4}, 0.1, 2);
  b.AddOutput(b.AddNode("BatchNormalization", {c, scale, shift, mean, var}, {Attribute::Float("epsilon", 1e-3f)}));
  return b;
}

TEST(PassesFoldBatchNorm, ConvWithAndWithoutBias) {
  for (bool bias : {true, false}) {
    ir::Model opt = ExpectRewrite(BuildOrDie(ConvBatchNorm(bias)), OptLevel::kExtended, {"Conv"});
    EXPECT_EQ(opt.graph.nodes[0].inputs.size(), 3u);
    EXPECT_EQ(opt.graph.nodes[0].outputs[0], opt.graph.outputs[0].name);
  }
  ExpectRewrite(BuildOrDie(ConvBatchNorm(true, 9)), OptLevel::kExtended, {"Conv"});  // Paddle's opset
}

TEST(PassesFoldBatchNorm, ConvOutputWithAnotherReaderStays) {
  ir::GraphBuilder b = ConvBatchNorm(true);
  b.AddOutput(b.graph().nodes[0].outputs[0]);  // the Conv's output is also a graph output
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "BatchNormalization"});
}

TEST(PassesFoldBatchNorm, SharedWeightsAreNotChangedInPlace) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {4, 3, 1, 1}, -1, 1);
  auto c1 = b.AddNode("Conv", {x, w});
  auto c2 = b.AddNode("Conv", {x, w});
  auto one = [&](const char* n, double lo, double hi) { return b.AddRandomInitializer(n, DType::kFloat32, {4}, lo, hi); };
  b.AddOutput(b.AddNode("BatchNormalization", {c1, one("s", 0.5, 2), one("t", -1, 1), one("m", -1, 1), one("v", 0.5, 1)}));
  b.AddOutput(c2);
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "Conv"});
}

// ---------------------------------------------------------- fold_conv_affine

TEST(PassesFoldConvAffine, LearnableAffineAfterConvFolds) {
  // PPLCNetV3's learnable affine block: Conv * w0 + w1, w0 and w1 of shape [1].
  for (bool bias : {true, false}) {
    ir::GraphBuilder b(11);
    auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
    auto w0 = b.AddInitializer("w0", F32({1}, {0.75f}));
    auto w1 = b.AddInitializer("w1", F32({1}, {-0.2f}));
    auto y = b.AddNode("Add", {b.AddNode("Mul", {w0, AddConv(b, x, bias)}), w1});
    b.AddOutput(b.AddNode("Relu", {y}));
    ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv"});
  }
}

TEST(PassesFoldConvAffine, PerChannelDivAndSub) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto d = b.AddRandomInitializer("d", DType::kFloat32, {4, 1, 1}, 0.5, 2);
  auto t = b.AddRandomInitializer("t", DType::kFloat32, {1, 4, 1, 1}, -1, 1);
  b.AddOutput(b.AddNode("Sub", {b.AddNode("Div", {AddConv(b, x), d}), t}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv"});
}

TEST(PassesFoldConvAffine, ConvAsSecondOperandOfSubOrNonChannelConstantStays) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto t = b.AddRandomInitializer("t", DType::kFloat32, {4, 1, 1}, -1, 1);
  b.AddOutput(b.AddNode("Sub", {t, AddConv(b, x, true, "a")}));
  auto row = b.AddRandomInitializer("row", DType::kFloat32, {6}, -1, 1);  // varies along W, not per channel
  b.AddOutput(b.AddNode("Mul", {AddConv(b, x, true, "b"), row}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "Sub", "Conv", "Mul"});
}

TEST(PassesFoldConvAffine, ConvTransposeBiasAddAndBatchNorm) {
  // PP-OCRv4 det's head: ConvTranspose, Add(bias), BatchNormalization, Relu.
  ir::GraphBuilder b(11);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 3, 3});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {4, 3, 2, 2}, -1, 1);  // group 2: 4 in, 6 out
  auto bias = b.AddRandomInitializer("bias", DType::kFloat32, {6, 1, 1}, -1, 1);
  auto ct = b.AddNode("ConvTranspose", {x, w}, {Attribute::Ints("strides", {2, 2}), Attribute::Int("group", 2)});
  auto one = [&](const std::string& n, double lo, double hi) { return b.AddRandomInitializer(n, DType::kFloat32, {6}, lo, hi); };
  auto bn = b.AddNode("BatchNormalization", {b.AddNode("Add", {ct, bias}), one("s", 0.5, 2), one("t", -1, 1), one("m", -1, 1), one("v", 0.5, 1)});
  b.AddOutput(b.AddNode("Relu", {bn}));
  // BN and the Add fold into the weights and bias; fuse_conv_activation then takes the Relu.
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConvTranspose"});
  EXPECT_EQ(ActivationOf(opt, "FusedConvTranspose").kind, ops::Activation::kRelu);
}

// ------------------------------------------------------ fuse_conv_activation

// x -> Conv -> activation built by `act` (returns its output) -> graph output.
using ActBuilder = std::function<std::string(ir::GraphBuilder&, const std::string&)>;
ir::Model ConvAct(const ActBuilder& act, int64_t opset = 17) {
  ir::GraphBuilder b(opset);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  b.AddOutput(act(b, AddConv(b, x)));
  return BuildOrDie(b);
}

struct ActCase {
  const char* name;
  int64_t opset;
  ActBuilder build;
  ops::Activation want;
  float alpha = 0, beta = 0;
};

std::vector<ActCase> ActCases() {
  auto one = [](const char* op, std::vector<Attribute> attrs = {}) {
    return [=](ir::GraphBuilder& b, const std::string& v) { return b.AddNode(op, {v}, attrs); };
  };
  // Paddle's HardSwish: x * Clip(x + 3, 0, 6) / 6 (opset 9: Clip bounds are attributes).
  auto paddle_hswish = [](bool div) {
    return [=](ir::GraphBuilder& b, const std::string& v) {
      auto a = b.AddNode("Add", {v, Scalar(b, "three", 3)});
      auto c = b.AddNode("Clip", {a}, {Attribute::Float("min", 0), Attribute::Float("max", 6)});
      auto m = b.AddNode("Mul", {v, c});
      return div ? b.AddNode("Div", {m, Scalar(b, "six", 6)}) : b.AddNode("Mul", {Scalar(b, "sixth", 1.0f / 6), m});
    };
  };
  return {
      {"Relu", 17, one("Relu"), ops::Activation::kRelu},
      {"Sigmoid", 17, one("Sigmoid"), ops::Activation::kSigmoid},
      {"Tanh", 17, one("Tanh"), ops::Activation::kTanh},
      {"LeakyRelu", 17, one("LeakyRelu", {Attribute::Float("alpha", 0.1f)}), ops::Activation::kLeakyRelu, 0.1f},
      {"HardSigmoid", 17, one("HardSigmoid", {Attribute::Float("alpha", 0.2f)}), ops::Activation::kHardSigmoid, 0.2f, 0.5f},
      {"HardSwish", 17, one("HardSwish"), ops::Activation::kHardSwish},
      {"Relu6Inputs", 17,
       [](ir::GraphBuilder& b, const std::string& v) { return b.AddNode("Clip", {v, Scalar(b, "lo", 0), Scalar(b, "hi", 6)}); },
       ops::Activation::kClip, 0, 6},
      {"ClipAttributes", 9, one("Clip", {Attribute::Float("min", -0.25f), Attribute::Float("max", 0.5f)}), ops::Activation::kClip,
       -0.25f, 0.5f},
      {"SiLU", 17, [](ir::GraphBuilder& b, const std::string& v) { return b.AddNode("Mul", {b.AddNode("Sigmoid", {v}), v}); },
       ops::Activation::kSiLU},
      {"PaddleHardSwishDiv", 9, paddle_hswish(true), ops::Activation::kHardSwish},
      {"PaddleHardSwishMulSixth", 9, paddle_hswish(false), ops::Activation::kHardSwish},
      {"HardSwishClipDividedFirst", 13,
       [](ir::GraphBuilder& b, const std::string& v) {
         auto a = b.AddNode("Add", {Scalar(b, "three", 3), v});
         auto c = b.AddNode("Clip", {a, Scalar(b, "lo", 0), Scalar(b, "hi", 6)});
         return b.AddNode("Mul", {v, b.AddNode("Div", {c, Scalar(b, "six", 6)})});
       },
       ops::Activation::kHardSwish},
      {"XTimesHardSigmoid", 13,
       [](ir::GraphBuilder& b, const std::string& v) {
         auto h = b.AddNode("HardSigmoid", {v}, {Attribute::Float("alpha", 1.0f / 6), Attribute::Float("beta", 0.5f)});
         return b.AddNode("Mul", {v, h});
       },
       ops::Activation::kHardSwish},
  };
}

TEST(PassesFuseConvActivation, EveryActivationForm) {
  for (const ActCase& c : ActCases()) {
    SCOPED_TRACE(c.name);
    ir::Model opt = ExpectRewrite(ConvAct(c.build, c.opset), OptLevel::kExtended, {"FusedConv"});
    EXPECT_EQ(opt.graph.nodes[0].domain, ops::kKilnDomain);
    EXPECT_EQ(opt.OpsetFor(ops::kKilnDomain), 1);
    const ops::ActivationAttrs a = ActivationOf(opt, "FusedConv");
    EXPECT_EQ(a.kind, c.want);
    if (c.want == ops::Activation::kClip || c.want == ops::Activation::kLeakyRelu || c.want == ops::Activation::kHardSigmoid) {
      EXPECT_FLOAT_EQ(a.alpha, c.alpha);
      EXPECT_FLOAT_EQ(a.beta, c.beta);
    }
  }
}

// The same activation forms after a ConvTranspose (PP-OCR det's head ends
// ConvTranspose -> Relu and ConvTranspose -> Sigmoid).
TEST(PassesFuseConvActivation, ConvTransposeEveryActivationForm) {
  for (const ActCase& c : ActCases()) {
    SCOPED_TRACE(c.name);
    ir::GraphBuilder b(c.opset);
    auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 4, 5});
    auto w = b.AddRandomInitializer("w", DType::kFloat32, {3, 4, 2, 2}, -1, 1);
    auto bias = b.AddRandomInitializer("bias", DType::kFloat32, {4}, -1, 1);
    b.AddOutput(c.build(b, b.AddNode("ConvTranspose", {x, w, bias}, {Attribute::Ints("strides", {2, 2})})));
    ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConvTranspose"});
    EXPECT_EQ(opt.graph.nodes[0].domain, ops::kKilnDomain);
    const ops::ActivationAttrs a = ActivationOf(opt, "FusedConvTranspose");
    EXPECT_EQ(a.kind, c.want);
    if (c.want == ops::Activation::kClip || c.want == ops::Activation::kLeakyRelu || c.want == ops::Activation::kHardSigmoid) {
      EXPECT_FLOAT_EQ(a.alpha, c.alpha);
      EXPECT_FLOAT_EQ(a.beta, c.beta);
    }
  }
}

TEST(PassesFuseConvActivation, ConvWithTwoReadersIsNotFused) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto c = AddConv(b, x);
  b.AddOutput(b.AddNode("Relu", {c}));
  b.AddOutput(b.AddNode("Sigmoid", {c}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "Relu", "Sigmoid"});
}

TEST(PassesFuseConvActivation, ConvThatIsAGraphOutputIsNotFused) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto c = AddConv(b, x);
  b.AddOutput(b.AddNode("Relu", {c}));
  b.AddOutput(c);
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "Relu"});
}

TEST(PassesFuseConvActivation, HardSwishPartWithAnotherReaderIsNotFused) {
  ir::GraphBuilder b(9);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto v = AddConv(b, x);
  auto a = b.AddNode("Add", {v, Scalar(b, "three", 3)});
  auto c = b.AddNode("Clip", {a}, {Attribute::Float("min", 0), Attribute::Float("max", 6)});
  b.AddOutput(b.AddNode("Div", {b.AddNode("Mul", {v, c}), Scalar(b, "six", 6)}));
  b.AddOutput(c);  // the Clip's value is needed outside the pattern
  // Mul and Div stay out of the Conv; fuse_elementwise takes them as a pair.
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "Add", "Clip", "FusedElementwise"});
}

TEST(PassesFuseConvActivation, ClipWithRuntimeBoundIsNotFused) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto hi = b.AddInput("hi", DType::kFloat32, Shape{});
  b.AddOutput(b.AddNode("Clip", {AddConv(b, x), Scalar(b, "lo", 0), hi}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "Clip"});
}

TEST(PassesFuseConvActivation, ConvPerChannelAddFoldsIntoBias) {
  for (bool bias : {true, false}) {
    ir::GraphBuilder b(17);
    auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
    auto add = b.AddRandomInitializer("chan", DType::kFloat32, {1, 4, 1, 1}, -1, 1);
    b.AddOutput(b.AddNode("Relu", {b.AddNode("Add", {AddConv(b, x, bias), add})}));
    ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv"});
    EXPECT_EQ(opt.graph.nodes[0].inputs.size(), 3u);
  }
}

TEST(PassesFuseConvActivation, GemmAndMatMul) {
  {  // Gemm + Relu -> FusedGemm
    ir::GraphBuilder b(17);
    auto a = b.AddInput("a", DType::kFloat32, Shape{3, 5});
    auto w = b.AddRandomInitializer("w", DType::kFloat32, {4, 5}, -1, 1);
    auto c = b.AddRandomInitializer("c", DType::kFloat32, {4}, -1, 1);
    b.AddOutput(b.AddNode("Relu", {b.AddNode("Gemm", {a, w, c}, {Attribute::Int("transB", 1), Attribute::Float("alpha", 0.5f)})}));
    ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedGemm"});
  }
  {  // Gemm without C + Add -> Gemm with C (beta 1)
    ir::GraphBuilder b(17);
    auto a = b.AddInput("a", DType::kFloat32, Shape{3, 5});
    auto w = b.AddRandomInitializer("w", DType::kFloat32, {5, 4}, -1, 1);
    auto c = b.AddRandomInitializer("c", DType::kFloat32, {1, 4}, -1, 1);
    auto g = b.AddNode("Gemm", {a, w}, {Attribute::Float("alpha", 2.0f), Attribute::Float("beta", 7.0f)});
    b.AddOutput(b.AddNode("Add", {g, c}));
    ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Gemm"});
  }
  {  // MatMul + Add(bias) + Relu -> FusedMatMul; MatMul + Add -> FusedMatMul
    ir::GraphBuilder b(17);
    auto a = b.AddInput("a", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(7), ir::Dim::Known(5)});
    auto w = b.AddRandomInitializer("w", DType::kFloat32, {5, 6}, -1, 1);
    auto bias = b.AddRandomInitializer("bias", DType::kFloat32, {6}, -1, 1);
    auto h = b.AddNode("Relu", {b.AddNode("Add", {b.AddNode("MatMul", {a, w}), bias})});
    auto w2 = b.AddRandomInitializer("w2", DType::kFloat32, {6, 2}, -1, 1);
    auto bias2 = b.AddRandomInitializer("bias2", DType::kFloat32, {2}, -1, 1);
    b.AddOutput(b.AddNode("Add", {bias2, b.AddNode("MatMul", {h, w2})}));
    ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedMatMul", "FusedMatMul"}, {{"a", {2, 7, 5}}});
    EXPECT_EQ(ActivationOf(opt, "FusedMatMul").kind, ops::Activation::kRelu);
    EXPECT_EQ(opt.graph.nodes[1].inputs.size(), 3u);
  }
  {  // A bias that would grow the product (broadcast on a batch dim) is not fused.
    ir::GraphBuilder b(17);
    auto a = b.AddInput("a", DType::kFloat32, Shape{7, 5});
    auto w = b.AddRandomInitializer("w", DType::kFloat32, {5, 6}, -1, 1);
    auto bias = b.AddRandomInitializer("bias", DType::kFloat32, {2, 1, 6}, -1, 1);
    b.AddOutput(b.AddNode("Add", {b.AddNode("MatMul", {a, w}), bias}));
    ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"MatMul", "Add"});
  }
}

// --------------------------------------------------------- fuse_residual_add

TEST(PassesFuseResidualAdd, ConvAddRelu) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto z = b.AddInput("z", DType::kFloat32, Shape{1, 4, 6, 6});
  b.AddOutput(b.AddNode("Relu", {b.AddNode("Add", {z, AddConv(b, x)})}));
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv"});
  ASSERT_EQ(opt.graph.nodes[0].inputs.size(), 4u);
  EXPECT_EQ(opt.graph.nodes[0].inputs[3], "z");
  EXPECT_EQ(ActivationOf(opt, "FusedConv").kind, ops::Activation::kRelu);
}

TEST(PassesFuseResidualAdd, ConvBatchNormAddWithoutActivation) {
  // A residual block: the skip is a Conv+BN of its own; both get folded, one takes the Add.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto one = [&](const std::string& n, double lo, double hi) { return b.AddRandomInitializer(n, DType::kFloat32, {4}, lo, hi); };
  auto bn = [&](const std::string& v, const std::string& p) {
    return b.AddNode("BatchNormalization", {v, one(p + "s", 0.5, 2), one(p + "t", -1, 1), one(p + "m", -1, 1), one(p + "v", 0.5, 1)});
  };
  auto left = bn(AddConv(b, x, false, "l"), "l");
  auto right = AddConv(b, x, true, "r");
  b.AddOutput(b.AddNode("Add", {left, right}));
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "FusedConv"});
  EXPECT_EQ(ActivationOf(opt, "FusedConv").kind, ops::Activation::kNone);
}

TEST(PassesFuseResidualAdd, BroadcastingAddIsNotFused) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto z = b.AddInput("z", DType::kFloat32, Shape{1, 4, 1, 6});  // broadcasts over H
  b.AddOutput(b.AddNode("Add", {AddConv(b, x), z}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "Add"});
}

TEST(PassesFuseResidualAdd, DynamicDimsOfTheSameNameFuse) {
  // A 3x3 conv padded by 1 keeps H and W: its output [N,4,H,W] is z's shape
  // on every run.
  ir::GraphBuilder b(17);
  const ir::Dims d = {ir::Dim::Symbol("N"), ir::Dim::Known(3), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")};
  auto x = b.AddInput("x", DType::kFloat32, d);
  auto z = b.AddInput("z", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(4), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")});
  b.AddOutput(b.AddNode("Add", {AddConv(b, x), z}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv"}, {{"x", {2, 3, 6, 7}}, {"z", {2, 4, 6, 7}}});
}

TEST(PassesFuseResidualAdd, DynamicDimsNotProvablyEqualAreNotFused) {
  // z's dims have other names (they may broadcast: 1 against H), or none.
  for (const ir::Dims& zd : {ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(4), ir::Dim::Symbol("Hz"), ir::Dim::Symbol("W")},
                             ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(4), ir::Dim{}, ir::Dim{}}}) {
    ir::GraphBuilder b(17);
    auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")});
    auto z = b.AddInput("z", DType::kFloat32, zd);
    b.AddOutput(b.AddNode("Add", {AddConv(b, x), z}));
    ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Conv", "Add"}, {{"x", {1, 3, 6, 6}}, {"z", {1, 4, 1, 6}}});
  }
}

TEST(PassesFuseResidualAdd, StridedConvsDeriveTheSameDimNames) {
  // A ResNet downsampling block: the 3x3 stride-2 conv padded by 1 and the
  // 1x1 stride-2 shortcut both give floor((H-1)/2)+1 rows from H rows.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")});
  auto w3 = b.AddRandomInitializer("w3", DType::kFloat32, {4, 3, 3, 3}, -0.5, 0.5);
  auto w1 = b.AddRandomInitializer("w1", DType::kFloat32, {4, 3, 1, 1}, -0.5, 0.5);
  auto main = b.AddNode("Conv", {x, w3}, {Attribute::Ints("pads", {1, 1, 1, 1}), Attribute::Ints("strides", {2, 2})}, "main");
  auto shortcut = b.AddNode("Conv", {x, w1}, {Attribute::Ints("strides", {2, 2})}, "shortcut");
  b.AddOutput(b.AddNode("Add", {main, shortcut}));
  const ir::Model m = BuildOrDie(b);
  const TypeMap types = InferTypes(m);
  auto dims = DimsOf(types, main);
  ASSERT_TRUE(dims.has_value());
  EXPECT_EQ((*dims)[2].param, "floor((H-1)/2)+1");
  EXPECT_EQ((*dims)[3].param, "floor((W-1)/2)+1");
  EXPECT_TRUE(ProvablySameShape(types, main, shortcut));
  // Odd and even sizes: both branches agree on every run.
  for (const Shape& xs : {Shape{1, 3, 7, 9}, Shape{2, 3, 8, 6}})
    ExpectRewrite(m, OptLevel::kExtended, {"Conv", "FusedConv"}, {{"x", xs}});
}

TEST(PassesFuseResidualAdd, ConvActivationThenAddTakesNoResidual) {
  // Conv+Relu fuses first; the Add after the activation cannot move before it.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 6, 6});
  auto z = b.AddInput("z", DType::kFloat32, Shape{1, 4, 6, 6});
  b.AddOutput(b.AddNode("Add", {b.AddNode("Relu", {AddConv(b, x)}), z}));
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"FusedConv", "Add"});
  EXPECT_EQ(opt.graph.nodes[0].inputs.size(), 3u);
}

}  // namespace
}  // namespace kiln::passes::testing
