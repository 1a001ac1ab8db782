// verify (src/verify/verify.h) against deliberately faulty providers, built
// here only (runtime::RegisterTestProvider): the cpu provider with one wrong
// Resize kernel, the motivating bug of DESIGN.md.
//  - faulty_resize_write: on channels-last input the cpu Resize writes its
//    channels-last result into a buffer labelled channels-first, so every
//    reader reads channels-last data with channels-first strides;
//  - faulty_resize_read: on channels-last input it reads the input with
//    channels-first strides (the gather of the motivating bug).
// Both are right on row-major input and wrong on channels-last input (behind
// the NHWC Transpose, and behind any cpu Conv, which writes channels-last).
// Controls: the real cpu provider passes.
#include "verify/verify.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "examples/seed.h"
#include "support/faulty_provider.h"
#include "ir/builder.h"
#include "providers/cpu/register.h"
#include "providers/reference/register.h"
#include "runtime/provider.h"
#include "support/layout.h"

namespace kiln::verify {
namespace {

using ::testing::HasSubstr;

using kiln::testing::RandomFeeds;
using kiln::testing::RegisterFaultyProviders;
ir::Model Seed(examples::SeedLayout layout) { return kiln::testing::SeedModel(layout); }

VerifyResult RunVerify(const ir::Model& m, const std::string& provider, bool per_node, const std::string& level = "all") {
  RegisterFaultyProviders();
  VerifyOptions o;
  o.provider = provider;
  o.opt_level = level;
  o.per_node = per_node;
  auto r = Verify(m, RandomFeeds(m), o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : VerifyResult{};
}

const NodeCheck* FindNode(const PerNodeReport& rep, const std::string& name) {
  for (const NodeCheck& nc : rep.nodes)
    if (nc.name == name) return &nc;
  return nullptr;
}

// ---- controls: the real cpu provider ------------------------------------------

TEST(Verify, CpuAgreesOnBothSeedModels) {
  for (auto layout : {examples::SeedLayout::kNhwc, examples::SeedLayout::kNchw}) {
    VerifyResult r = RunVerify(Seed(layout), "cpu", true);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_TRUE(r.outputs[0].ok()) << r.outputs[0].result.reason;
    EXPECT_TRUE(r.ok()) << r.nodes.summary;
    EXPECT_EQ(r.nodes.first_divergence, -1);
    EXPECT_EQ(r.nodes.first_mismatch, -1);
    EXPECT_EQ(r.nodes.summary, "");
    EXPECT_GE(r.nodes.compared, 3u);
    for (const NodeCheck& nc : r.nodes.nodes) {
      EXPECT_TRUE(nc.alone_ran) << nc.name << ": " << nc.alone_error;
      EXPECT_EQ(nc.alone_provider, nc.provider) << nc.name;
      EXPECT_FALSE(nc.introduces_error) << nc.name;
    }
  }
}

TEST(Verify, PerNodeReportsFusedValuesAndLayouts) {
  VerifyResult r = RunVerify(Seed(examples::SeedLayout::kNhwc), "cpu", true);
  // Conv + Relu became one FusedConv that keeps the Conv's name.
  const AbsorbedValue* fused = nullptr;
  for (const AbsorbedValue& a : r.nodes.absorbed)
    if (a.name == "conv1_out") fused = &a;
  ASSERT_NE(fused, nullptr);
  EXPECT_EQ(fused->how, AbsorbedValue::How::kFused);
  EXPECT_EQ(fused->into_name, "conv1");
  EXPECT_EQ(fused->into_op, "FusedConv");
  EXPECT_EQ(fused->text, "fused into node 'conv1' (FusedConv)");
  const NodeCheck* conv1 = FindNode(r.nodes, "conv1");
  ASSERT_NE(conv1, nullptr);
  EXPECT_THAT(conv1->absorbed, ::testing::ElementsAre("conv1_out"));
  // Behind the zero-copy Transpose everything is channels-last, up to the
  // Resize, which writes the graph output row-major (no conversion on return).
  const NodeCheck* resize = FindNode(r.nodes, "upsample");
  ASSERT_NE(resize, nullptr);
  EXPECT_EQ(resize->provider, "cpu");
  EXPECT_EQ(resize->input_layouts[0], "NHWC");
  ASSERT_EQ(resize->outputs.size(), 1u);
  EXPECT_EQ(resize->outputs[0].layout, "NCHW");
}

TEST(Verify, FoldedAndRemovedValuesOfABuiltGraph) {
  // x -> Conv -> BatchNormalization -> Relu -> Identity -> y, and a Constant
  // scale folded by fold_constants: the plan is one FusedConv.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 6, 6});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {8, 4, 3, 3}, -0.5, 0.5);
  auto conv = b.AddNode("Conv", {x, w}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})}, "conv");
  auto sc = b.AddRandomInitializer("bn_scale", DType::kFloat32, {8}, 0.5, 1.5);
  auto bi = b.AddRandomInitializer("bn_bias", DType::kFloat32, {8}, -0.5, 0.5);
  auto mean = b.AddRandomInitializer("bn_mean", DType::kFloat32, {8}, -0.5, 0.5);
  auto var = b.AddRandomInitializer("bn_var", DType::kFloat32, {8}, 0.5, 1.5);
  auto bn = b.AddNode("BatchNormalization", {conv, sc, bi, mean, var}, {}, "bn");
  auto relu = b.AddNode("Relu", {bn}, {}, "relu");
  auto id = b.AddNode("Identity", {relu}, {}, "id");
  auto y = b.AddNode("Sigmoid", {id}, {}, "sig");
  b.AddOutput(y);
  auto m = b.Build();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  VerifyResult r = RunVerify(*m, "cpu", true);
  EXPECT_TRUE(r.ok()) << r.nodes.summary;
  std::map<std::string, std::string> how;
  for (const AbsorbedValue& a : r.nodes.absorbed) how[a.name] = a.text;
  EXPECT_THAT(how[conv], HasSubstr("fused into node 'conv'"));
  EXPECT_THAT(how[id], HasSubstr("removed with its Identity node"));
  EXPECT_FALSE(r.pass_notes.empty());
}

// The layout plan (`kiln inspect --plan`) is what the run does: a pooled
// branch (one pixel per channel, dense in both layouts) upsampled by Resize
// and a one-channel branch are concatenated with channels-last maps, as in
// deeplabv3's ASPP. The Resize used to write such an input's output
// row-major where the plan said channels-last, and the Concat then wrote
// row-major too, copying every input through strides.
TEST(Verify, PlannedLayoutsAreTheLayoutsTheRunUses) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 8, 6, 6});
  auto conv = [&](const std::string& in, int64_t ic, int64_t oc, const std::string& name) {
    auto w = b.AddRandomInitializer(name + "_w", DType::kFloat32, {oc, ic, 1, 1}, -0.5, 0.5);
    return b.AddNode("Relu", {b.AddNode("Conv", {in, w}, {}, name)}, {}, name + "_relu");
  };
  auto a = conv(x, 8, 4, "branch");
  auto one = conv(x, 8, 1, "one_channel");
  auto pooled = conv(b.AddNode("GlobalAveragePool", {x}, {}, "pool"), 8, 4, "pooled");
  auto scales = b.AddInitializer("scales", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 6, 6}));
  auto up = b.AddNode("Resize", {pooled, "", scales}, {ir::Attribute::String("mode", "linear")}, "upsample");
  auto cat = b.AddNode("Concat", {a, one, up}, {ir::Attribute::Int("axis", 1)}, "concat");
  b.AddOutput(conv(cat, 9, 3, "project"));
  auto m = b.Build();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  VerifyResult r = RunVerify(*m, "cpu", true);
  EXPECT_TRUE(r.ok()) << r.nodes.summary;
  EXPECT_THAT(r.layout_drift, ::testing::IsEmpty());
  for (const char* name : {"upsample", "concat"}) {
    const NodeCheck* nc = FindNode(r.nodes, name);
    ASSERT_NE(nc, nullptr) << name;
    EXPECT_EQ(nc->provider, "cpu") << name;
    ASSERT_EQ(nc->outputs.size(), 1u) << name;
    EXPECT_EQ(nc->outputs[0].layout, "NHWC") << name;
  }
}

// ---- the faulty providers -------------------------------------------------------

TEST(Verify, FaultyWriteMismatchesBehindTheNhwcTransposeWithTheLayoutMap) {
  VerifyResult r = RunVerify(Seed(examples::SeedLayout::kNhwc), "faulty_resize_write", false);
  ASSERT_EQ(r.outputs.size(), 1u);
  const ValueCheck& out = r.outputs[0];
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(out.result.ok);
  ASSERT_TRUE(out.has_diagnosis);
  EXPECT_TRUE(out.diagnosis.sorted_values_agree);
  EXPECT_EQ(out.diagnosis.kind, DiagnosisKind::kIndexMap);
  ASSERT_TRUE(out.diagnosis.has_map);
  EXPECT_EQ(out.diagnosis.map.perm, (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_THAT(out.diagnosis.text, HasSubstr("misplaced values"));
  EXPECT_THAT(out.diagnosis.text, HasSubstr("NHWC"));
}

TEST(Verify, TheFaultFollowsTheLayoutThePlanHoldsNotTheModelsInput) {
  // The cpu Conv writes channels-last whatever the model's input layout, so
  // in model_nchw too the Resize reads NHWC data and the faulty kernels are
  // caught; the layout the plan held is what matters, and verify reports it.
  for (const char* p : {"faulty_resize_write", "faulty_resize_read"}) {
    VerifyResult r = RunVerify(Seed(examples::SeedLayout::kNchw), p, true);
    EXPECT_FALSE(r.ok()) << p;
    const NodeCheck* resize = FindNode(r.nodes, "upsample");
    ASSERT_NE(resize, nullptr);
    EXPECT_EQ(resize->provider, p);
    EXPECT_EQ(resize->input_layouts[0], "NHWC");
    EXPECT_EQ(r.nodes.first_divergence, static_cast<int>(resize - r.nodes.nodes.data()));
  }
}

TEST(Verify, PerNodeNamesTheResizeAsFirstDivergence) {
  for (const char* p : {"faulty_resize_write", "faulty_resize_read"}) {
    SCOPED_TRACE(p);
    VerifyResult r = RunVerify(Seed(examples::SeedLayout::kNhwc), p, true);
    EXPECT_FALSE(r.ok());
    ASSERT_GE(r.nodes.first_divergence, 0);
    const NodeCheck& nc = r.nodes.nodes[static_cast<size_t>(r.nodes.first_divergence)];
    EXPECT_EQ(nc.name, "upsample");
    EXPECT_EQ(nc.op_type, "Resize");
    EXPECT_EQ(nc.provider, p);
    EXPECT_EQ(nc.alone_provider, p);
    EXPECT_TRUE(nc.introduces_error);
    EXPECT_TRUE(nc.reference_alone_ran);
    EXPECT_TRUE(nc.reference_alone_ok);
    EXPECT_EQ(nc.blame, "kernel");
    EXPECT_EQ(r.nodes.first_mismatch, r.nodes.first_divergence);
    EXPECT_EQ(r.nodes.mismatched, 1u);
    // Every node upstream agrees, tapped and alone.
    for (int i = 0; i < r.nodes.first_divergence; ++i) {
      EXPECT_TRUE(r.nodes.nodes[static_cast<size_t>(i)].tapped_ok());
      EXPECT_FALSE(r.nodes.nodes[static_cast<size_t>(i)].introduces_error);
    }
    EXPECT_THAT(r.nodes.summary, HasSubstr(std::string("first divergence: node 'upsample' (Resize) on ") + p +
                                           ", input layout NHWC, output misplaced values"));
    EXPECT_THAT(r.nodes.summary, HasSubstr("the error is the " + std::string(p) + " kernel's"));
  }
}

TEST(Verify, ErrorsDownstreamAreAttributedToTheNodeThatIntroducedThem) {
  // NHWC input -> Transpose -> Conv -> Resize (faulty) -> Sigmoid -> Conv:
  // the error reaches every value after the Resize, but only the Resize is
  // wrong alone.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 8, 8, 3});
  auto t = b.AddNode("Transpose", {x}, {ir::Attribute::Ints("perm", {0, 3, 1, 2})}, "to_nchw");
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {4, 3, 3, 3}, -0.5, 0.5);
  auto c = b.AddNode("Conv", {t, w}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})}, "conv_a");
  auto scales = b.AddInitializer("scales", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 2, 2}));
  auto rs = b.AddNode("Resize", {c, "", scales}, {ir::Attribute::String("mode", "nearest")}, "resize");
  auto s = b.AddNode("Sigmoid", {rs}, {}, "sig");
  auto w2 = b.AddRandomInitializer("w2", DType::kFloat32, {2, 4, 1, 1}, -0.5, 0.5);
  auto y = b.AddNode("Conv", {s, w2}, {}, "conv_b");
  b.AddOutput(y);
  auto m = b.Build();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  VerifyResult r = RunVerify(*m, "faulty_resize_write", true);
  EXPECT_FALSE(r.ok());
  ASSERT_GE(r.nodes.first_divergence, 0);
  EXPECT_EQ(r.nodes.nodes[static_cast<size_t>(r.nodes.first_divergence)].name, "resize");
  for (const char* name : {"sig", "conv_b"}) {
    const NodeCheck* nc = FindNode(r.nodes, name);
    ASSERT_NE(nc, nullptr) << name;
    EXPECT_FALSE(nc->tapped_ok()) << name << ": the wrong values reach it";
    EXPECT_TRUE(nc->alone_ran) << name << ": " << nc->alone_error;
    EXPECT_FALSE(nc->introduces_error) << name << ": right on right inputs";
  }
  EXPECT_EQ(r.nodes.mismatched, 3u);
}

TEST(Verify, TheSameRunWithoutTheTransposeIsRight) {
  // The faulty kernel is right on row-major data: a model fed NCHW passes
  // even on the faulty provider, as in the motivating bug.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 8, 8});
  auto scales = b.AddInitializer("scales", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 2, 2}));
  auto y = b.AddNode("Resize", {x, "", scales}, {ir::Attribute::String("mode", "nearest")}, "resize");
  b.AddOutput(y);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(RunVerify(*m, "faulty_resize_read", true).ok());
}

TEST(Verify, SweepBlamesTheResizeKernel) {
  RegisterFaultyProviders();
  ir::Model m = Seed(examples::SeedLayout::kNhwc);
  VerifyOptions o;
  o.provider = "faulty_resize_write";
  auto s = Sweep(m, RandomFeeds(m), o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->levels.size(), 5u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(s->levels[i].ran) << s->levels[i].error;
    EXPECT_FALSE(s->levels[i].ok) << s->levels[i].what;
  }
  EXPECT_TRUE(s->levels[4].ran && s->levels[4].ok) << "the reference on the optimized graph";
  ASSERT_EQ(s->forced.size(), 1u);
  EXPECT_EQ(s->forced[0].what, "node 'upsample' on reference");
  EXPECT_TRUE(s->forced[0].ran) << s->forced[0].error;
  EXPECT_TRUE(s->forced[0].ok);
  std::string all;
  for (const auto& c : s->conclusions) all += c + "\n";
  EXPECT_THAT(all, HasSubstr("at every opt level"));
  EXPECT_THAT(all, HasSubstr("the passes are right"));
  EXPECT_THAT(all, HasSubstr("vanishes with node 'upsample' on reference"));
}

TEST(Verify, SweepOnTheCpuProviderAgreesEverywhere) {
  ir::Model m = Seed(examples::SeedLayout::kNhwc);
  VerifyOptions o;
  auto s = Sweep(m, RandomFeeds(m), o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  for (const auto& row : s->levels) EXPECT_TRUE(row.ran && row.ok) << row.what << ": " << row.error;
  EXPECT_TRUE(s->forced.empty());
  ASSERT_FALSE(s->conclusions.empty());
  EXPECT_EQ(s->conclusions[0], "every opt level agrees with the reference");
}

// ---- pieces ---------------------------------------------------------------------

TEST(Verify, PositionTensorEncodesTheRowMajorIndex) {
  EXPECT_EQ(PositionScale(1), 1);
  EXPECT_EQ(PositionScale(60), 64);
  EXPECT_EQ(PositionScale(64), 64);
  auto t = PositionTensor(DType::kFloat32, {1, 3, 4, 5});
  ASSERT_TRUE(t.ok());
  for (int64_t k = 0; k < 60; ++k) EXPECT_EQ(t->data<float>()[k] * 64.0f, static_cast<float>(k));
  // Exact at 2^20 elements: every value distinct and decodes to its index.
  auto big = PositionTensor(DType::kFloat32, {1, 16, 256, 256});
  ASSERT_TRUE(big.ok());
  const float* p = big->data<float>();
  for (int64_t k = 0; k < big->numel(); k += 4099) ASSERT_EQ(static_cast<int64_t>(p[k] * 1048576.0f), k);
  EXPECT_FALSE(PositionTensor(DType::kInt64, {3}).ok());
}

TEST(Verify, PositionInputsMakeTheMisplacedReadLegible) {
  // With position inputs the Resize's wrong output holds input positions.
  RegisterFaultyProviders();
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 2, 2, 3});
  auto t = b.AddNode("Transpose", {x}, {ir::Attribute::Ints("perm", {0, 3, 1, 2})}, "to_nchw");
  auto scales = b.AddInitializer("scales", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 1, 1}));
  auto y = b.AddNode("Resize", {t, "", scales}, {ir::Attribute::String("mode", "nearest")}, "resize");
  b.AddOutput(y);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  auto pos = PositionTensor(DType::kFloat32, {1, 2, 2, 3});
  ASSERT_TRUE(pos.ok());
  VerifyOptions o;
  o.provider = "faulty_resize_write";
  auto r = Verify(*m, {{"x", Datum(*pos)}}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs.size(), 1u);
  ASSERT_FALSE(r->outputs[0].ok());
  EXPECT_EQ(r->outputs[0].diagnosis.kind, DiagnosisKind::kIndexMap);
}

TEST(Verify, DeepCopySharesNoTensor) {
  ir::Model m = Seed(examples::SeedLayout::kNhwc);
  ir::Model c = DeepCopy(m);
  ASSERT_EQ(c.graph.initializers.size(), m.graph.initializers.size());
  for (const auto& [n, t] : m.graph.initializers) {
    EXPECT_NE(c.graph.initializers.at(n).storage(), t.storage()) << n;
    EXPECT_EQ(c.graph.initializers.at(n).numel(), t.numel());
  }
  const std::string first = m.graph.initializers.begin()->first;
  const double before = m.graph.initializers.at(first).GetAsDouble(0);
  c.graph.initializers.at(first).SetFromDouble(0, before + 1);
  EXPECT_EQ(m.graph.initializers.at(first).GetAsDouble(0), before);
}

TEST(Verify, ProviderRunFailureIsAMismatchAndBadProviderAnError) {
  ir::Model m = Seed(examples::SeedLayout::kNhwc);
  VerifyOptions o;
  o.provider = "no_such_provider";
  auto r = Verify(m, RandomFeeds(m), o);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().ToString(), HasSubstr("unknown provider"));
  o.provider = "cpu";
  auto bad = Verify(m, {{"input", Datum(Tensor::Zeros(DType::kFloat32, {1, 3, 40, 40}))}}, o);
  EXPECT_FALSE(bad.ok()) << "a feed of the wrong shape is rejected";
}

TEST(Verify, TightToleranceMakesCpuRoundingAMismatch) {
  // Tests must be able to fail: rtol = atol = 0 turns cpu's float rounding
  // (oneDNN convolutions accumulate in another order) into a mismatch.
  ir::Model m = Seed(examples::SeedLayout::kNchw);
  VerifyOptions o;
  o.tolerances.rtol = 0;
  o.tolerances.atol = 0;
  auto r = Verify(m, RandomFeeds(m), o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_FALSE(r->outputs[0].ok());
  EXPECT_FALSE(r->ok());
}

}  // namespace
}  // namespace kiln::verify
