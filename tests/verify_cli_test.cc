// `kiln verify` end to end: the binary (KILN_CLI_PATH) on the seed models
// written by `kiln example seed`, on the real cpu provider: the compare table,
// --per-node (tapped plan, fused values, nodes alone), --sweep, --inputs
// position, --json parsed back, and exit codes 0/1/2. The faulty providers
// that prove verify finds real bugs are test-only (src/verify/verify_test.cc);
// here a zero tolerance makes cpu's rounding the mismatch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "examples/seed.h"
#include "ir/builder.h"
#include "support/npy.h"
#include "support/cli.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using kiln::testing::RunKiln;


class VerifyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln_verify_cli_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    for (const char* layout : {"nhwc", "nchw"}) {
      std::string out;
      ASSERT_EQ(RunKiln(std::string("example seed --layout ") + layout + " -o " + Path(std::string(layout) + ".onnx"), &out), 0) << out;
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& rel) { return (dir_ / rel).string(); }
  int Verify(const std::string& args, std::string* out) { return RunKiln("verify " + args, out); }
  nlohmann::json Json(const std::string& rel) {
    std::ifstream in(dir_ / rel);
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  fs::path dir_;
};

TEST_F(VerifyCli, SeedModelsAgreeOnCpu) {
  for (const char* m : {"nhwc.onnx", "nchw.onnx"}) {
    std::string out;
    EXPECT_EQ(Verify(Path(m), &out), 0) << out;
    EXPECT_THAT(out, HasSubstr("cpu (opt level all) against reference, random inputs (seed 0)"));
    EXPECT_THAT(out, HasSubstr("max|ref|"));
    EXPECT_THAT(out, HasSubstr("output: ok  [rtol 0.001 atol 0.0001]"));
    EXPECT_THAT(out, HasSubstr("verdict: ok (1 of 1 outputs ok)"));
    EXPECT_THAT(out, Not(HasSubstr("per node")));
  }
}

TEST_F(VerifyCli, PerNodeTapsThePlan) {
  std::string out;
  EXPECT_EQ(Verify(Path("nhwc.onnx") + " --per-node", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("per node: 4 nodes in the cpu plan, 4 values compared with the reference, 0 disagree"));
  EXPECT_THAT(out, HasSubstr("fuse_conv_activation: conv1 + Relu -> FusedConv(Relu)"));
  EXPECT_THAT(out, HasSubstr("'conv1_out' (Conv 'conv1'): fused into node 'conv1' (FusedConv)"));
  EXPECT_THAT(out, HasSubstr("upsample"));
  EXPECT_THAT(out, HasSubstr("verdict: ok (1 of 1 outputs ok; 4 of 4 tapped values ok)"));
  EXPECT_THAT(out, Not(HasSubstr("first divergence")));
}

TEST_F(VerifyCli, JsonReport) {
  std::string out;
  EXPECT_EQ(Verify(Path("nhwc.onnx") + " --per-node --json " + Path("v.json"), &out), 0) << out;
  nlohmann::json j = Json("v.json");
  ASSERT_FALSE(j.is_discarded()) << "JSON did not parse";
  EXPECT_EQ(j["verdict"], "ok");
  EXPECT_EQ(j["provider"], "cpu");
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "output");
  EXPECT_EQ(j["outputs"][0]["verdict"], "ok");
  EXPECT_FALSE(j["outputs"][0].contains("ref_file"));
  EXPECT_TRUE(j["outputs"][0]["metrics"].contains("cosine"));
  const nlohmann::json& pn = j["per_node"];
  ASSERT_EQ(pn["nodes"].size(), 4u);
  EXPECT_EQ(pn["nodes"][3]["name"], "upsample");
  EXPECT_EQ(pn["nodes"][3]["input_layouts"][0], "NHWC");
  EXPECT_EQ(pn["nodes"][3]["alone"]["ran"], true);
  EXPECT_EQ(pn["nodes"][3]["alone"]["introduces_error"], false);
  ASSERT_EQ(pn["absorbed"].size(), 1u);
  EXPECT_EQ(pn["absorbed"][0]["how"], "fused");
  EXPECT_EQ(pn["absorbed"][0]["into"], "conv1");
  EXPECT_TRUE(pn["first_divergence"].is_null());
  EXPECT_TRUE(j["sweep"].is_null());
}

TEST_F(VerifyCli, ZeroToleranceIsAMismatch) {
  std::string out;
  EXPECT_EQ(Verify(Path("nchw.onnx") + " --rtol 0 --atol 0 --per-node --json " + Path("v.json"), &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("MISMATCH"));
  EXPECT_THAT(out, HasSubstr("verdict: MISMATCH (0 of 1 outputs ok"));
  EXPECT_THAT(out, HasSubstr("values that disagree:"));
  nlohmann::json j = Json("v.json");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["verdict"], "MISMATCH");
  EXPECT_GT(j["per_node"]["mismatched"].get<int>(), 0);
}

TEST_F(VerifyCli, PerOutputToleranceOverride) {
  std::string out;
  EXPECT_EQ(Verify(Path("nchw.onnx") + " --rtol 0 --atol 0 --tol output=0.001,0.0001", &out), 0) << out;
}

TEST_F(VerifyCli, PositionInputs) {
  std::string out;
  EXPECT_EQ(Verify(Path("nhwc.onnx") + " --inputs position --per-node", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("position inputs"));
  // 4800 elements: values k / 8192, the largest 4799 / 8192.
  EXPECT_THAT(out, HasSubstr("min=0 max=0.585815"));
}

TEST_F(VerifyCli, InputFromFile) {
  ir::SeededRng rng(1);
  auto t = ir::RandomTensor(DType::kFloat32, {1, 40, 40, 3}, rng, -1, 1);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(npy::WriteFile(Path("x.npy"), *t).ok());
  std::string out;
  EXPECT_EQ(Verify(Path("nhwc.onnx") + " --input input=" + Path("x.npy") + " --threads 1 --opt-level basic", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("cpu (opt level basic)"));
}

TEST_F(VerifyCli, Sweep) {
  std::string out;
  EXPECT_EQ(Verify(Path("nhwc.onnx") + " --sweep --json " + Path("v.json"), &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("sweep:"));
  EXPECT_THAT(out, HasSubstr("opt level disable on cpu"));
  EXPECT_THAT(out, HasSubstr("opt level all graph on reference"));
  EXPECT_THAT(out, HasSubstr("=> every opt level agrees with the reference"));
  nlohmann::json j = Json("v.json");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["sweep"]["levels"].size(), 5u);
}

TEST_F(VerifyCli, UsageAndLoadErrorsExitTwo) {
  const std::string m = Path("nhwc.onnx");
  for (const std::string& args : {Path("missing.onnx"), m + " --provider nope", m + " --inputs sideways", m + " --tol nosuch=1,1",
                                  m + " --input input=" + Path("missing.npy"), m + " --opt-level max", m + " --atol -1",
                                  m + " --shape input=1x3x40x40", std::string("")}) {
    std::string out;
    EXPECT_EQ(Verify(args, &out), 2) << args << "\n" << out;
    EXPECT_THAT(out, Not(HasSubstr("verdict")));
  }
}

TEST_F(VerifyCli, HelpDocumentsThePositionEncoding) {
  std::string out;
  EXPECT_EQ(RunKiln("verify --help", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("k / 2^e"));
  EXPECT_THAT(out, HasSubstr("--per-node"));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// The real CLI on the motivating bug: kiln_faulty is kiln with the test-only
// faulty Resize providers (tests/support/faulty_provider.h). verify names the
// Resize behind the NHWC Transpose and compare's diagnosis names the layout
// map; model_nchw fails the same way, since the cpu Conv in front of the
// Resize writes channels-last (the fault follows the layout the plan holds).
TEST_F(VerifyCli, FaultyProviderMismatchIsNamedByTheRealCli) {
  const std::string faulty = KILN_FAULTY_CLI_PATH;
  std::string out;
  EXPECT_EQ(testing::Shell(faulty + " verify " + Path("nhwc.onnx") + " --provider faulty_resize_write --per-node", &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("MISMATCH"));
  EXPECT_THAT(out, HasSubstr("test equals ref's NHWC data read as NCHW"));
  EXPECT_THAT(out, HasSubstr("first divergence: node 'upsample' (Resize) on faulty_resize_write, input layout NHWC, output misplaced values"));
  out.clear();
  EXPECT_EQ(testing::Shell(faulty + " verify " + Path("nchw.onnx") + " --provider faulty_resize_write --per-node", &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("first divergence: node 'upsample' (Resize) on faulty_resize_write, input layout NHWC"));
  // The plain kiln has no such provider.
  out.clear();
  EXPECT_EQ(Verify(Path("nhwc.onnx") + " --provider faulty_resize_write", &out), 2) << out;
}

}  // namespace
}  // namespace kiln
