// The graph fuzzer (fuzz_grammar.h, fuzz_shapes.h, fuzz.h): determinism,
// variety, validity (kiln's loader and reference provider run every graph
// with the declared output shapes; the ONNX checker accepts them when
// python3-onnx is installed), and that the differential run catches a
// deliberately faulty provider and writes a reproducer `kiln conformance`
// replays.
#include "verify/fuzz.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "onnx/onnx_io.h"
#include "runtime/session_internal.h"
#include "support/faulty_provider.h"
#include "verify/conformance.h"
#include "verify/fuzz_shapes.h"

namespace kiln::verify {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

fs::path TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("kiln_fuzz_test_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// ---- shapes -----------------------------------------------------------------

TEST(FuzzShapes, SliceFollowsTheSpecClamping) {
  EXPECT_EQ(SliceOutSize(10, 0, kMax, 1), 10);
  EXPECT_EQ(SliceOutSize(10, 2, 8, 3), 2);       // 2, 5
  EXPECT_EQ(SliceOutSize(10, -3, kMax, 1), 3);
  EXPECT_EQ(SliceOutSize(10, kMax, kMin, -1), 10);  // the whole axis reversed
  EXPECT_EQ(SliceOutSize(10, -1, -11, -2), 5);   // 9, 7, 5, 3, 1
  EXPECT_EQ(SliceOutSize(10, 5, 5, 1), 0);
  EXPECT_EQ(SliceOutSize(10, 3, 7, -1), 0);
  EXPECT_EQ(SliceOutSize(4, 20, -20, -1), 4);
}

TEST(FuzzShapes, WindowsAndPads) {
  EXPECT_EQ(WindowOutSize(9, {3, 2, 1, 1, 1}), 5);
  EXPECT_EQ(WindowOutSize(8, {3, 2, 1, 0, 0}, false), 3);
  EXPECT_EQ(WindowOutSize(8, {3, 2, 1, 0, 0}, true), 4);
  EXPECT_EQ(WindowOutSize(5, {3, 1, 2, 0, 0}), 1);   // dilated kernel spans 5
  EXPECT_EQ(WindowOutSize(4, {3, 1, 2, 0, 0}), 0);
  EXPECT_FALSE(CeilModeLastWindowStartsInside(4, {2, 2, 1, 0, 1}));  // the 3rd window would start at 4, in the right pad
  EXPECT_TRUE(CeilModeLastWindowStartsInside(8, {3, 2, 1, 0, 0}));
  int64_t b = 0, e = 0;
  SamePads(9, 3, 2, 1, true, &b, &e);  // out 5, total pad 2
  EXPECT_EQ(b, 1);
  EXPECT_EQ(e, 1);
  SamePads(8, 4, 1, 1, true, &b, &e);  // total 3: the odd one at the end
  EXPECT_EQ(b, 1);
  EXPECT_EQ(e, 2);
  SamePads(8, 4, 1, 1, false, &b, &e);
  EXPECT_EQ(b, 2);
  EXPECT_EQ(e, 1);
  EXPECT_EQ(ConvTransposeOutSize(5, {3, 2, 1, 1, 1}, 1), 10);
  Shape s;
  EXPECT_TRUE(BroadcastShapes({2, 3, 4, 5}, {3, 1, 1}, &s));
  EXPECT_EQ(s, (Shape{2, 3, 4, 5}));
  EXPECT_FALSE(BroadcastShapes({2, 3, 4, 5}, {3, 1}, &s));
  EXPECT_EQ(PermuteShape({1, 2, 3, 4}, {0, 3, 1, 2}), (Shape{1, 4, 2, 3}));
  EXPECT_EQ(InversePermutation({0, 3, 1, 2}), (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(FlattenShape({2, 3, 4, 5}, 0), (Shape{1, 120}));
  EXPECT_EQ(FlattenShape({2, 3, 4, 5}, 4), (Shape{120, 1}));
}

// ---- grammar ----------------------------------------------------------------

std::string Serialized(uint64_t seed) {
  auto m = GenerateGraph(seed);
  EXPECT_TRUE(m.ok()) << "seed " << seed << ": " << m.status().ToString();
  if (!m.ok()) return "";
  auto bytes = onnx_io::SerializeModel(*m);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *bytes : "";
}

TEST(FuzzGrammar, SameSeedGivesTheSameModel) {
  for (uint64_t seed : {1ull, 2ull, 77ull, 123456789ull}) {
    const std::string a = Serialized(seed), b = Serialized(seed);
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a, b) << "seed " << seed;
    auto m = GenerateGraph(seed);
    ASSERT_TRUE(m.ok());
    auto f1 = GenerateFeeds(*m, seed), f2 = GenerateFeeds(*m, seed);
    ASSERT_TRUE(f1.ok() && f2.ok());
    for (const auto& [name, t] : *f1)
      for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.GetAsDouble(i), f2->at(name).GetAsDouble(i));
  }
  std::set<std::string> distinct;
  for (uint64_t seed = 1; seed <= 20; ++seed) distinct.insert(Serialized(seed));
  EXPECT_EQ(distinct.size(), 20u) << "different seeds should give different graphs";
}

TEST(FuzzGrammar, ABatchCoversEveryProductionAndOp) {
  std::map<std::string, int> productions, ops;
  int nhwc = 0, multi_output = 0;
  const int kGraphs = 400;
  FuzzOptions o;
  o.float16_probability = 0.25;
  for (uint64_t seed = 1; seed <= kGraphs; ++seed) {
    auto m = GenerateGraph(seed, o);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    std::string list = m->metadata["kiln.fuzz.productions"] + " ";
    for (size_t p = 0, q; (q = list.find(' ', p)) != std::string::npos; p = q + 1)
      if (q > p) ++productions[list.substr(p, q - p)];
    for (const ir::Node& n : m->graph.nodes) ++ops[n.op_type];
    nhwc += list.find("InputNHWC") != std::string::npos;
    multi_output += m->graph.outputs.size() > 1;
  }
  for (const std::string& p : FuzzProductionNames()) EXPECT_GT(productions[p], 0) << "production " << p << " never drawn";
  for (const char* op : {"Transpose", "Conv", "ConvTranspose", "Resize", "MaxPool", "AveragePool", "GlobalAveragePool",
                         "Concat", "Split", "Slice", "Pad", "Add", "Mul", "Sub", "Div", "Sigmoid", "HardSwish", "Clip",
                         "Relu", "LeakyRelu", "HardSigmoid", "BatchNormalization", "Reshape", "Flatten", "Squeeze",
                         "Unsqueeze", "MatMul", "Gemm", "Softmax", "ReduceMean"})
    EXPECT_GT(ops[op], 0) << op << " never generated";
  EXPECT_GT(nhwc, kGraphs * 6 / 10) << "most graphs should take an NHWC input";
  EXPECT_GT(multi_output, kGraphs / 3);
}

// Every graph loads and runs on the reference provider, and its outputs have
// the shapes the generator declared (the bookkeeping agrees with kiln's
// shape inference and kernels).
TEST(FuzzGrammar, EveryGraphRunsOnTheReferenceWithTheDeclaredShapes) {
  for (uint64_t seed = 1; seed <= 250; ++seed) {
    auto m = GenerateGraph(seed);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    auto feeds = GenerateFeeds(*m, seed);
    ASSERT_TRUE(feeds.ok());
    std::vector<Shape> declared;
    for (const ir::Value& v : m->graph.outputs) {
      Shape s;
      for (const ir::Dim& d : *v.type.shape) s.push_back(d.value);
      declared.push_back(s);
    }
    auto s = CreateSessionFromModel(*m);
    ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << s.status().ToString();
    auto out = (*s)->Run(*feeds);
    ASSERT_TRUE(out.ok()) << "seed " << seed << ": " << out.status().ToString();
    for (size_t j = 0; j < out->size(); ++j) {
      EXPECT_EQ((*out)[j].shape(), declared[j]) << "seed " << seed << " output " << j;
      const Tensor& t = (*out)[j];
      for (int64_t i = 0; i < t.numel(); ++i) ASSERT_TRUE(std::isfinite(t.GetAsDouble(i))) << "seed " << seed;
    }
  }
}

// The ONNX checker, with strict shape inference, on a batch exported to
// files (skipped when python3-onnx is not installed).
TEST(FuzzGrammar, TheOnnxCheckerAcceptsABatch) {
  if (std::system("/usr/bin/python3 -c 'import onnx' >/dev/null 2>&1") != 0) GTEST_SKIP() << "python3-onnx not installed";
  fs::path dir = TempDir("checker");
  FuzzOptions half;
  half.float16_probability = 1;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    auto m = GenerateGraph(seed);
    ASSERT_TRUE(m.ok());
    ASSERT_TRUE(onnx_io::SaveModelFile(*m, (dir / ("seed_" + std::to_string(seed) + ".onnx")).string()).ok());
    // The float16 variant must be as valid (every T of every op agrees).
    if (seed <= 60) {
      auto h = GenerateGraph(seed, half);
      ASSERT_TRUE(h.ok()) << h.status().ToString();
      ASSERT_EQ(h->graph.inputs[0].type.dtype, DType::kFloat16);
      ASSERT_TRUE(onnx_io::SaveModelFile(*h, (dir / ("seed_" + std::to_string(seed) + "_f16.onnx")).string()).ok());
    }
  }
  const fs::path script = dir / "check.py";
  std::ofstream(script) << "import glob, sys, onnx\n"
                           "bad = 0\n"
                           "for p in sorted(glob.glob(sys.argv[1] + '/*.onnx')):\n"
                           "    try:\n"
                           "        onnx.checker.check_model(onnx.load(p), full_check=True)\n"
                           "    except Exception as e:\n"
                           "        bad += 1\n"
                           "        print(p, str(e).splitlines()[0][:300])\n"
                           "sys.exit(1 if bad else 0)\n";
  const std::string log = (dir / "log.txt").string();
  const int rc = std::system(("/usr/bin/python3 " + script.string() + " " + dir.string() + " > " + log + " 2>&1").c_str());
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << text;
  fs::remove_all(dir);
}

TEST(Fuzz, ParsesLevels) {
  EXPECT_EQ(*ParseFuzzLevels("all-levels"), (std::vector<std::string>{"disable", "basic", "extended", "all"}));
  EXPECT_EQ(*ParseFuzzLevels("basic,all"), (std::vector<std::string>{"basic", "all"}));
  EXPECT_FALSE(ParseFuzzLevels("fast").ok());
}

// The real cpu provider agrees on a small batch, and really runs the layout
// sensitive ops itself (not all on its fallback).
TEST(Fuzz, CpuAgreesOnASmallBatchAndRunsTheOpsItself) {
  FuzzConfig c;
  c.seed = 500;
  c.count = 40;
  c.levels = {"disable", "all"};
  c.threads = 1;
  FuzzSummary s = RunFuzz(c);
  for (const FuzzFailure& f : s.failures) ADD_FAILURE() << FormatFuzzFailure(f);
  EXPECT_EQ(s.passed, 40);
  std::map<std::string, int> on_cpu;
  for (uint64_t seed = 500; seed < 540; ++seed) {
    auto m = GenerateGraph(seed);
    ASSERT_TRUE(m.ok());
    SessionOptions o;
    o.provider = "cpu";
    o.opt_level = "disable";
    auto session = CreateSessionFromModel(*m, o);
    ASSERT_TRUE(session.ok());
    const auto& providers = (*session)->impl().executor->node_providers();
    const ir::Graph& g = (*session)->impl().executor->model().graph;
    for (size_t i = 0; i < providers.size() && i < g.nodes.size(); ++i)
      if (providers[i] == "cpu") ++on_cpu[g.nodes[i].op_type];
  }
  for (const char* op : {"Conv", "Transpose", "Resize", "Concat"}) EXPECT_GT(on_cpu[op], 0) << op << " never ran on cpu";
}

// The shared faulty provider (tests/support): on channels-last input its
// Resize writes a channels-last result into a buffer labelled row-major.
TEST(Fuzz, FindsAFaultyResizeAndWritesAReplayableReproducer) {
  testing::RegisterFaultyProviders();
  fs::path out = TempDir("faulty");
  FuzzConfig c;
  c.seed = 1;
  c.count = 60;
  c.provider = "faulty_resize_write";
  c.levels = {"all"};
  c.threads = 1;
  c.out_dir = out.string();
  c.isolate = false;  // the test provider lives in this process only
  FuzzSummary s = RunFuzz(c);
  ASSERT_GT(s.failed, 0) << "no graph of 60 caught the mislabelled Resize output";
  const FuzzFailure& f = s.failures.front();
  EXPECT_EQ(f.level, "all");
  EXPECT_FALSE(f.output.empty());
  EXPECT_THAT(FormatFuzzFailure(f), HasSubstr("seed " + std::to_string(f.seed)));
  EXPECT_THAT(f.divergence, HasSubstr("Resize")) << FormatFuzzFailure(f);
  ASSERT_FALSE(f.reproducer.empty());
  EXPECT_TRUE(fs::exists(fs::path(f.reproducer) / "model.onnx"));
  EXPECT_TRUE(fs::exists(fs::path(f.reproducer) / "test_data_set_0" / "input_0.pb"));
  EXPECT_TRUE(fs::exists(fs::path(f.reproducer) / "test_data_set_0" / "output_0.pb"));
  // Reduced by kiln reduce: fewer nodes than the whole graph (in full/), the Resize kept.
  EXPECT_THAT(f.reduction, HasSubstr("reduced from")) << FormatFuzzFailure(f);
  auto reduced = onnx_io::LoadModelFile((fs::path(f.reproducer) / "model.onnx").string());
  auto whole = onnx_io::LoadModelFile((fs::path(f.reproducer) / "full" / "model.onnx").string());
  ASSERT_TRUE(reduced.ok() && whole.ok());
  EXPECT_LT(reduced->graph.nodes.size(), whole->graph.nodes.size());
  bool kept_resize = false;
  for (const ir::Node& n : reduced->graph.nodes) kept_resize = kept_resize || n.op_type == "Resize";
  EXPECT_TRUE(kept_resize);
  std::ifstream readme(fs::path(f.reproducer) / "README.txt");
  std::string text((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("--opt-level all"));
  // Both replay as backend tests: the reference passes them, the faulty provider fails them.
  for (const fs::path& dir : {fs::path(f.reproducer), fs::path(f.reproducer) / "full"}) {
    ConformanceCase test{"seed_" + std::to_string(f.seed), "fuzz", dir.string()};
    ConformanceOptions o;
    o.isolate = false;
    o.provider = "reference";
    ConformanceResult ref = RunCase(test, o);
    EXPECT_EQ(ref.outcome, Outcome::kPassed) << dir << ": " << ref.reason;
    o.provider = "faulty_resize_write";
    EXPECT_EQ(RunCase(test, o).outcome, Outcome::kFailed) << dir;
  }
  // Every failure named a graph with a Resize; every graph without one passed.
  for (const FuzzFailure& g : s.failures) {
    auto m = GenerateGraph(g.seed);
    ASSERT_TRUE(m.ok());
    bool has_resize = false;
    for (const ir::Node& n : m->graph.nodes) has_resize = has_resize || n.op_type == "Resize";
    EXPECT_TRUE(has_resize) << FormatFuzzFailure(g);
  }
  fs::remove_all(out);
}

TEST(Fuzz, SkippedSeedsAreNotRun) {
  FuzzConfig c;
  c.seed = 10;
  c.count = 3;
  c.skip_seeds = {11};
  c.isolate = false;
  FuzzSummary s = RunFuzz(c);
  EXPECT_EQ(s.skipped, 1);
  EXPECT_EQ(s.passed + s.failed, 2);
}

}  // namespace
}  // namespace kiln::verify
