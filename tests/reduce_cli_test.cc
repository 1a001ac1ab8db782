// `kiln reduce` end to end: the binary (KILN_CLI_PATH) on the seed model
// written by `kiln example seed`. The faulty providers that make the seed
// model fail exist only in the test binary (src/verify/reduce_test.cc drives
// that case through the library); here --check commands that inspect the
// candidate (`kiln inspect` node counts and op types) make it interesting,
// and the real cpu provider is the model that does not fail. Checks the
// backend-test folder it writes (replayed with `kiln conformance`) and the
// exit codes 0/1/2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;


using kiln::testing::RunKiln;
using kiln::testing::Shell;

class ReduceCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln_reduce_cli_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::string out;
    ASSERT_EQ(RunKiln("example seed --layout nhwc -o " + Path("seed.onnx"), &out), 0) << out;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& rel) { return (dir_ / rel).string(); }
  // A check script: `body` runs with $1 = the candidate and $K = kiln.
  std::string Script(const std::string& name, const std::string& body) {
    const std::string p = Path(name);
    std::ofstream f(p);
    f << "#!/bin/sh\nK='" << KILN_CLI_PATH << "'\n" << body << "\n";
    f.close();
    fs::permissions(p, fs::perms::owner_all);
    return p;
  }
  fs::path dir_;
};

TEST_F(ReduceCli, AModelThatDoesNotFailExits1) {
  std::string out;
  EXPECT_EQ(RunKiln("reduce " + Path("seed.onnx") + " --provider cpu -o " + Path("out"), &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("does not fail on cpu"));
  EXPECT_THAT(out, HasSubstr("nothing to reduce"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "model.onnx"));
  out.clear();
  EXPECT_EQ(RunKiln("reduce " + Path("seed.onnx") + " -o " + Path("out") + " --check false", &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("does not exit 0"));
}

TEST_F(ReduceCli, CheckCountingNodesWithInspectStopsAtItsThreshold) {
  // Interesting while the candidate has at least 3 nodes.
  const std::string check = Script("at_least_3.sh",
                                   "n=$(\"$K\" inspect --no-graph \"$1\" | sed -n 's/^ops: \\([0-9]*\\) nodes.*/\\1/p')\n"
                                   "test -n \"$n\" && test \"$n\" -ge 3");
  std::string out;
  ASSERT_EQ(RunKiln("reduce " + Path("seed.onnx") + " -o " + Path("out") + " --check " + check, &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("reduced 5 -> 3 nodes"));
  EXPECT_THAT(out, HasSubstr("interesting: --check"));
  EXPECT_THAT(out, HasSubstr("on cpu: every output agrees with the reference"));
  std::string info;
  ASSERT_EQ(RunKiln("inspect --no-graph " + Path("out/model.onnx"), &info), 0) << info;
  EXPECT_THAT(info, HasSubstr("ops: 3 nodes"));
}

TEST_F(ReduceCli, WritesABackendTestThatConformanceReplays) {
  // Interesting while the candidate holds a Transpose and a Resize.
  const std::string check = Script("t_and_r.sh",
                                   "\"$K\" inspect --no-graph \"$1\" > \"$1.txt\" || exit 1\n"
                                   "grep -q '^  Transpose ' \"$1.txt\" && grep -q '^  Resize ' \"$1.txt\"");
  std::string out;
  ASSERT_EQ(RunKiln("reduce " + Path("seed.onnx") + " -o " + Path("out") + " --seed 7 --check " + check, &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("reduced 5 -> 2 nodes"));
  EXPECT_THAT(out, HasSubstr("kept: to_nchw (Transpose), upsample (Resize)"));
  EXPECT_THAT(out, HasSubstr("conv2_out float32[1,32,10,10] (recorded reference value)"));
  EXPECT_THAT(out, HasSubstr("replay: kiln conformance"));
  // The ONNX backend-test layout: the model, its inputs in graph order, the reference's outputs.
  EXPECT_TRUE(fs::exists(dir_ / "out" / "model.onnx"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "test_data_set_0" / "input_0.pb"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "test_data_set_0" / "input_1.pb"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "test_data_set_0" / "input_2.pb"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "test_data_set_0" / "output_0.pb"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "test_data_set_0" / "output_1.pb"));
  std::string rep;
  EXPECT_EQ(RunKiln("conformance " + Path("out"), &rep), 0) << rep;
  EXPECT_THAT(rep, HasSubstr("1 passed, 0 failed"));
  rep.clear();
  EXPECT_EQ(RunKiln("conformance --provider cpu " + Path("out"), &rep), 0) << rep;
  EXPECT_THAT(rep, HasSubstr("1 passed, 0 failed"));
  // The recorded input of the reproducer is what `kiln run` feeds with --seed 7.
  std::string run;
  ASSERT_EQ(RunKiln("run " + Path("seed.onnx") + " --seed 7 --save-inputs " + Path("inputs") + " --quiet", &run), 0) << run;
  std::string cmp;
  EXPECT_EQ(RunKiln("compare " + Path("inputs/input.npy") + " " + Path("out/test_data_set_0/input_0.pb") + " --atol 0 --rtol 0", &cmp), 0)
      << cmp;
  // A second reduce into the same folder replaces it.
  out.clear();
  ASSERT_EQ(RunKiln("reduce " + Path("seed.onnx") + " -o " + Path("out") + " --check " + check, &out), 0) << out;
}

TEST_F(ReduceCli, UsageAndLoadErrorsExit2) {
  std::string out;
  EXPECT_EQ(RunKiln("reduce " + Path("seed.onnx"), &out), 2) << "no -o";
  out.clear();
  EXPECT_EQ(RunKiln("reduce " + Path("missing.onnx") + " -o " + Path("out"), &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("kiln reduce: error"));
  out.clear();
  EXPECT_EQ(RunKiln("reduce " + Path("seed.onnx") + " -o " + Path("out") + " --input nosuch=" + Path("x.npy"), &out), 2) << out;
  out.clear();
  EXPECT_EQ(RunKiln("reduce " + Path("seed.onnx") + " -o " + Path("out") + " --provider no_such_provider", &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("unknown provider"));
  out.clear();
  EXPECT_EQ(RunKiln("reduce " + Path("seed.onnx") + " -o " + Path("out") + " --max-checks 0", &out), 2) << out;
}

}  // namespace
}  // namespace kiln
