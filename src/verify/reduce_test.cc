// reduce (src/verify/reduce.h) on the seed models under a deliberately faulty
// provider (test-only, registered here as verify_test.cc does): the cpu
// provider whose Resize writes its channels-last result into a buffer
// labelled channels-first (faulty_resize_write) or reads a channels-last
// input with channels-first strides (faulty_resize_read). The reproducers
// are checked by replaying them as backend tests (conformance.h) and by
// verify on the faulty and the real cpu provider.
#include "verify/reduce.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "examples/seed.h"
#include "support/faulty_provider.h"
#include "ir/builder.h"
#include "onnx/onnx_io.h"
#include "providers/cpu/register.h"
#include "providers/reference/register.h"
#include "runtime/provider.h"
#include "support/layout.h"
#include "verify/conformance.h"
#include "verify/verify.h"

namespace kiln::verify {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;

// ---- the faulty providers (the minimum of verify_test.cc's) ------------------------

using kiln::testing::RandomFeeds;
using kiln::testing::RegisterFaultyProviders;
ir::Model Seed(examples::SeedLayout layout) { return kiln::testing::SeedModel(layout); }

ReduceResult RunReduce(const ir::Model& m, const std::string& provider, std::vector<std::string>* log = nullptr) {
  RegisterFaultyProviders();
  ReduceOptions o;
  o.provider = provider;
  if (log) o.log = [log](const std::string& l) { log->push_back(l); };
  auto r = Reduce(m, RandomFeeds(m), o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ReduceResult{};
}

std::vector<std::string> OpTypes(const ir::Model& m) {
  std::vector<std::string> ops;
  for (const ir::Node& n : m.graph.nodes) ops.push_back(n.op_type);
  return ops;
}

bool VerifyOk(const ir::Model& m, const std::map<std::string, Datum>& feeds, const std::string& provider) {
  VerifyOptions o;
  o.provider = provider;
  auto r = Verify(m, feeds, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() && r->ok();
}

class DeltaReduceDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln_reduce_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Outcome Replay(const std::string& provider) {
    ConformanceCase c;
    c.name = "reduced";
    c.dir = dir_.string();
    ConformanceOptions o;
    o.provider = provider;
    o.isolate = false;
    ConformanceResult r = RunCase(c, o);
    reason_ = r.reason;
    return r.outcome;
  }
  fs::path dir_;
  std::string reason_;
};

// ---- the seed model under the faulty providers ----------------------------------------

TEST_F(DeltaReduceDir, SeedNhwcReducesToAChainFromTheTransposeToTheResize) {
  for (const char* provider : {"faulty_resize_write", "faulty_resize_read"}) {
    SCOPED_TRACE(provider);
    std::vector<std::string> log;
    ReduceResult r = RunReduce(Seed(examples::SeedLayout::kNhwc), provider, &log);
    ASSERT_TRUE(r.failed_initially);
    EXPECT_THAT(r.initial_description, HasSubstr("MISMATCH"));
    EXPECT_EQ(r.original_nodes, 5u);
    EXPECT_EQ(r.failing_node, "upsample");
    EXPECT_THAT(r.protected_nodes, Contains("to_nchw (Transpose)"));
    const ir::Model& m = r.reduced.model;
    EXPECT_LE(m.graph.nodes.size(), 4u);
    EXPECT_EQ(r.kept_nodes.size(), m.graph.nodes.size());
    EXPECT_EQ(r.kept_nodes.size() + r.replaced + r.bypassed + r.dead, r.original_nodes);
    EXPECT_THAT(OpTypes(m), Contains("Transpose"));
    EXPECT_THAT(OpTypes(m), Contains("Resize"));
    EXPECT_EQ(m.graph.nodes.front().op_type, "Transpose");
    EXPECT_EQ(m.graph.nodes.back().op_type, "Resize");
    EXPECT_THAT(r.final_description, HasSubstr("misplaced values"));
    EXPECT_FALSE(log.empty());
    EXPECT_GT(r.oracle_calls, 1);

    // Fails on the faulty provider, passes on cpu, in memory...
    EXPECT_FALSE(VerifyOk(m, r.reduced.feeds, provider));
    EXPECT_TRUE(VerifyOk(m, r.reduced.feeds, "cpu"));

    // ...and as a backend-test folder.
    ASSERT_TRUE(WriteReproducer(r.reduced, dir_.string()).ok());
    ASSERT_TRUE(fs::exists(dir_ / "model.onnx"));
    ASSERT_TRUE(fs::exists(dir_ / "test_data_set_0" / "input_0.pb"));
    ASSERT_TRUE(fs::exists(dir_ / "test_data_set_0" / "output_0.pb"));
    EXPECT_EQ(Replay("reference"), Outcome::kPassed) << reason_;
    EXPECT_EQ(Replay(provider), Outcome::kFailed) << reason_;
    auto loaded = onnx_io::LoadModelFile((dir_ / "model.onnx").string());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_EQ(loaded->graph.nodes.size(), m.graph.nodes.size());
    EXPECT_FALSE(VerifyOk(*loaded, r.reduced.feeds, provider));
    fs::remove_all(dir_);
  }
}

TEST_F(DeltaReduceDir, ALargerGraphStillReducesToTheSmallChain) {
  // The seed network with an unrelated branch on the input, a side branch on
  // conv1, and more nodes after the Resize, with several outputs.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 16, 16, 3});
  auto t = b.AddNode("Transpose", {x}, {ir::Attribute::Ints("perm", {0, 3, 1, 2})}, "to_nchw");
  auto w1 = b.AddRandomInitializer("w1", DType::kFloat32, {8, 3, 3, 3}, -0.5, 0.5);
  auto c1 = b.AddNode("Conv", {t, w1}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})}, "conv1");
  auto r1 = b.AddNode("Relu", {c1}, {}, "relu1");
  auto w2 = b.AddRandomInitializer("w2", DType::kFloat32, {8, 8, 3, 3}, -0.5, 0.5);
  auto c2 = b.AddNode("Conv", {r1, w2}, {ir::Attribute::Ints("pads", {1, 1, 1, 1}), ir::Attribute::Ints("strides", {2, 2})}, "conv2");
  auto scales = b.AddInitializer("scales", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 2, 2}));
  auto rs = b.AddNode("Resize", {c2, "", scales}, {ir::Attribute::String("mode", "nearest")}, "upsample");
  auto s = b.AddNode("Sigmoid", {rs}, {}, "sig");
  auto w3 = b.AddRandomInitializer("w3", DType::kFloat32, {4, 8, 1, 1}, -0.5, 0.5);
  auto c3 = b.AddNode("Conv", {s, w3}, {}, "conv3");
  auto th = b.AddNode("Tanh", {c3}, {}, "tanh");
  b.AddOutput(th);
  // Unrelated: x -> Abs -> Neg -> ReduceSum.
  auto a = b.AddNode("Abs", {x}, {}, "abs");
  auto n = b.AddNode("Neg", {a}, {}, "neg");
  auto rsum = b.AddNode("ReduceSum", {n}, {ir::Attribute::Int("keepdims", 0)}, "sum");
  b.AddOutput(rsum);
  // A side branch on relu1.
  auto side = b.AddNode("Sigmoid", {r1}, {}, "side_sig");
  auto side2 = b.AddNode("Mul", {side, r1}, {}, "side_mul");
  b.AddOutput(side2);
  auto m = b.Build();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (const char* provider : {"faulty_resize_write", "faulty_resize_read"}) {
    SCOPED_TRACE(provider);
    ReduceResult r = RunReduce(*m, provider);
    ASSERT_TRUE(r.failed_initially);
    EXPECT_EQ(r.original_nodes, 13u);
    EXPECT_EQ(r.failing_node, "upsample");
    const ir::Model& red = r.reduced.model;
    EXPECT_LE(red.graph.nodes.size(), 4u) << ir::ToText(red);
    EXPECT_THAT(OpTypes(red), Contains("Transpose"));
    EXPECT_THAT(OpTypes(red), Contains("Resize"));
    EXPECT_EQ(red.graph.outputs.size(), 1u) << "only the mismatching output is kept";
    EXPECT_FALSE(VerifyOk(red, r.reduced.feeds, provider));
    EXPECT_TRUE(VerifyOk(red, r.reduced.feeds, "cpu"));
    ASSERT_TRUE(WriteReproducer(r.reduced, dir_.string()).ok());
    EXPECT_EQ(Replay("reference"), Outcome::kPassed) << reason_;
    EXPECT_EQ(Replay(provider), Outcome::kFailed) << reason_;
    fs::remove_all(dir_);
  }
}

TEST(DeltaReduce, WithoutLayoutProducersTheOracleAloneDecides) {
  // The cpu Conv writes channels-last too, so without the Transpose kept the
  // faulty Resize still fails behind a Conv: the smallest reproducer is
  // Conv -> Resize, fed the recorded conv input.
  RegisterFaultyProviders();
  ir::Model m = Seed(examples::SeedLayout::kNhwc);
  ReduceOptions o;
  o.provider = "faulty_resize_write";
  o.keep_layout_producers = false;
  auto r = Reduce(m, RandomFeeds(m), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->failed_initially);
  EXPECT_EQ(OpTypes(r->reduced.model), (std::vector<std::string>{"Conv", "Resize"}));
  ASSERT_EQ(r->reduced.replaced_inputs.size(), 1u);
  EXPECT_EQ(r->reduced.replaced_inputs[0], "relu1_out");
  EXPECT_FALSE(VerifyOk(r->reduced.model, r->reduced.feeds, "faulty_resize_write"));
}

TEST(DeltaReduce, AModelThatDoesNotFailHasNothingToReduce) {
  ReduceResult r = RunReduce(Seed(examples::SeedLayout::kNhwc), "cpu");
  EXPECT_FALSE(r.failed_initially);
  EXPECT_EQ(r.oracle_calls, 1);
  EXPECT_TRUE(r.kept_nodes.empty());
}

TEST(DeltaReduce, UnknownProviderIsAnError) {
  ir::Model m = Seed(examples::SeedLayout::kNhwc);
  ReduceOptions o;
  o.provider = "no_such_provider";
  auto r = Reduce(m, RandomFeeds(m), o);
  EXPECT_FALSE(r.ok());
}

// A custom oracle: interesting while the candidate holds a Resize.
class HasOp final : public Oracle {
 public:
  explicit HasOp(std::string op) : op_(std::move(op)) {}
  Result<Verdict> Check(const CandidateModel& c) override {
    ++calls;
    Verdict v;
    for (const ir::Node& n : c.model.graph.nodes) v.interesting = v.interesting || n.op_type == op_;
    return v;
  }
  int calls = 0;

 private:
  std::string op_;
};

TEST(DeltaReduce, ACustomOracleShrinksToTheOneNodeItWants) {
  ir::Model m = Seed(examples::SeedLayout::kNhwc);
  HasOp oracle("Resize");
  ReduceOptions o;
  auto feeds = RandomFeeds(m);
  auto r = Reduce(m, feeds, o, &oracle);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->failed_initially);
  EXPECT_EQ(r->failing_node, "") << "no provider to ask";
  EXPECT_EQ(OpTypes(r->reduced.model), (std::vector<std::string>{"Resize"}));
  EXPECT_EQ(r->oracle_calls, oracle.calls);
  // The Resize reads conv2's recorded output, so it computes the original output.
  auto rec = RecordReferenceValues(m, feeds);
  ASSERT_TRUE(rec.ok());
  ASSERT_EQ(r->reduced.replaced_inputs, (std::vector<std::string>{"conv2_out"}));
  const Tensor& fed = r->reduced.feeds.at("conv2_out").tensor();
  CompareResult same = Compare(rec->at("conv2_out").tensor(), fed, Tolerance{});
  EXPECT_TRUE(same.ok) << same.reason;
}

TEST(DeltaReduce, ACommandOracleSeesTheCandidatePath) {
  ir::Model m = Seed(examples::SeedLayout::kNhwc);
  const fs::path scratch = fs::temp_directory_path() / ("kiln_reduce_cmd_" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  // grep finds the op type's bytes in the serialized model.
  auto oracle = MakeCommandOracle("grep -q Relu", scratch.string());
  auto r = Reduce(m, RandomFeeds(m), ReduceOptions{}, oracle.get());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->failed_initially);
  EXPECT_EQ(OpTypes(r->reduced.model), (std::vector<std::string>{"Relu"}));
  auto never = MakeCommandOracle("false", scratch.string());
  auto n = Reduce(m, RandomFeeds(m), ReduceOptions{}, never.get());
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(n->failed_initially);
  fs::remove_all(scratch);
}

TEST(DeltaReduce, BuildCandidateReplacesRemovedProducersAndKeepsSinks) {
  ir::Model m = Seed(examples::SeedLayout::kNhwc);
  auto feeds = RandomFeeds(m);
  auto rec = RecordReferenceValues(m, feeds);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  Candidate c;
  c.fate.assign(m.graph.nodes.size(), NodeFate::kKept);
  c.bypass_input.assign(m.graph.nodes.size(), -1);
  c.fate[1] = NodeFate::kReplaced;  // conv1: relu1 reads its recorded output
  auto cm = BuildCandidate(m, *rec, feeds, c);
  ASSERT_TRUE(cm.ok()) << cm.status().ToString();
  EXPECT_EQ(cm->model.graph.nodes.size(), 4u);
  ASSERT_EQ(cm->replaced_inputs, (std::vector<std::string>{"conv1_out"}));
  std::vector<std::string> outs;
  for (const auto& v : cm->model.graph.outputs) outs.push_back(v.name);
  // The Transpose lost its reader: its value is a sink output.
  EXPECT_EQ(outs, (std::vector<std::string>{"output", "to_nchw_out"}));
  // Dropping that output makes the Transpose dead.
  c.dropped_outputs = {"to_nchw_out"};
  cm = BuildCandidate(m, *rec, feeds, c);
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ(OpTypes(cm->model), (std::vector<std::string>{"Relu", "Conv", "Resize"}));
  EXPECT_EQ(cm->normalized.fate[0], NodeFate::kDead);
  EXPECT_EQ(cm->feeds.count("input"), 0u);
  EXPECT_EQ(cm->feeds.count("conv1_out"), 1u);
  // A bypassed Relu: conv2 reads conv1's output.
  Candidate bypass;
  bypass.fate.assign(m.graph.nodes.size(), NodeFate::kKept);
  bypass.bypass_input.assign(m.graph.nodes.size(), -1);
  bypass.fate[2] = NodeFate::kBypassed;
  bypass.bypass_input[2] = 0;
  cm = BuildCandidate(m, *rec, feeds, bypass);
  ASSERT_TRUE(cm.ok());
  ASSERT_EQ(cm->model.graph.nodes.size(), 4u);
  EXPECT_EQ(cm->model.graph.nodes[2].inputs[0], "conv1_out");
  EXPECT_TRUE(cm->replaced_inputs.empty());
  // Nothing left: an error.
  Candidate none = c;
  none.fate.assign(m.graph.nodes.size(), NodeFate::kReplaced);
  EXPECT_FALSE(BuildCandidate(m, *rec, feeds, none).ok());
}

}  // namespace
}  // namespace kiln::verify
