// `kiln compare` end to end: the binary (KILN_CLI_PATH) on .npy and .pb files
// written here, exit codes 0/1/2, folder matching by file stem, tolerance
// options, and the --json report parsed back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/datum.h"
#include "onnx/onnx_io.h"
#include "support/npy.h"
#include "support/cli.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

int RunCompare(const std::string& args, std::string* output) { return kiln::testing::RunKiln("compare " + args, output); }


// 1x3x4x5 NCHW, values 1..60.
Tensor Ref() {
  std::vector<float> v(60);
  for (int i = 0; i < 60; ++i) v[i] = static_cast<float>(i + 1);
  return Tensor::FromVector<float>(DType::kFloat32, {1, 3, 4, 5}, v);
}

// Ref's NCHW buffer read as NHWC: test[0,c,h,w] = buffer[(h*5 + w)*3 + c].
Tensor ReadAsNhwc() {
  Tensor t = Tensor::Zeros(DType::kFloat32, {1, 3, 4, 5});
  for (int c = 0; c < 3; ++c)
    for (int h = 0; h < 4; ++h)
      for (int w = 0; w < 5; ++w) t.data<float>()[(c * 4 + h) * 5 + w] = static_cast<float>((h * 5 + w) * 3 + c + 1);
  return t;
}

Tensor F32(const Shape& s, const std::vector<float>& v) { return Tensor::FromVector<float>(DType::kFloat32, s, v); }

class CompareCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kiln_compare_cli_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Npy(const std::string& rel, const Tensor& t) {
    const fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    EXPECT_TRUE(npy::WriteFile(p.string(), t).ok());
    return p.string();
  }
  std::string Pb(const std::string& rel, const Tensor& t) {
    const fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    EXPECT_TRUE(onnx_io::WriteDatumFile(p.string(), Datum(t), p.stem().string()).ok());
    return p.string();
  }
  std::string Path(const std::string& rel) { return (dir_ / rel).string(); }
  nlohmann::json Json(const std::string& rel) {
    std::ifstream in(dir_ / rel);
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }

  fs::path dir_;
};

TEST_F(CompareCli, IdenticalFilesExitZero) {
  std::string out;
  EXPECT_EQ(RunCompare(Npy("ref.npy", Ref()) + " " + Npy("test.npy", Ref()), &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("verdict: ok (1 of 1 outputs ok)"));
  EXPECT_THAT(out, Not(HasSubstr("diagnosis")));
}

TEST_F(CompareCli, NpyAgainstPb) {
  std::string out;
  EXPECT_EQ(RunCompare(Pb("y.pb", Ref()) + " " + Npy("y.npy", Ref()), &out), 0) << out;
}

TEST_F(CompareCli, LayoutBugExitsOneAndIsNamed) {
  std::string out;
  const std::string json = Path("report.json");
  EXPECT_EQ(RunCompare(Npy("ref/y.npy", Ref()) + " " + Npy("test/y.npy", ReadAsNhwc()) + " --json " + json, &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("MISMATCH"));
  EXPECT_THAT(out, HasSubstr("diagnosis: misplaced values: test equals ref's NCHW data read as NHWC"));
  EXPECT_THAT(out, HasSubstr("verdict: MISMATCH (0 of 1 outputs ok)"));
  nlohmann::json j = Json("report.json");
  ASSERT_FALSE(j.is_discarded()) << "JSON did not parse";
  EXPECT_EQ(j["verdict"], "MISMATCH");
  ASSERT_EQ(j["outputs"].size(), 1u);
  const nlohmann::json& o = j["outputs"][0];
  EXPECT_EQ(o["name"], "y");
  EXPECT_EQ(o["ref"]["shape"], (std::vector<int64_t>{1, 3, 4, 5}));
  EXPECT_DOUBLE_EQ(o["metrics"]["max_abs_ref"].get<double>(), 60);
  EXPECT_DOUBLE_EQ(o["metrics"]["sorted_max_diff"].get<double>(), 0);
  EXPECT_EQ(o["diagnosis"]["kind"], "index_map");
  EXPECT_EQ(o["diagnosis"]["sorted_values_agree"], true);
  EXPECT_EQ(o["diagnosis"]["map"]["type"], "ref_read_as_transposed");
  EXPECT_EQ(o["diagnosis"]["map"]["layout"], "NHWC");
  EXPECT_EQ(o["diagnosis"]["map"]["perm"], (std::vector<int64_t>{0, 2, 3, 1}));
}

TEST_F(CompareCli, JsonHoldsEveryMetric) {
  // ref [1,-2,3,4], test [1,-2.5,3,5]: see compare_test for the hand figures.
  std::string out;
  const std::string args = Npy("a.npy", F32({4}, {1, -2, 3, 4})) + " " + Npy("b.npy", F32({4}, {1, -2.5f, 3, 5})) + " --json " + Path("r.json");
  EXPECT_EQ(RunCompare(args, &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("worst [3]: ref 4, test 5"));
  EXPECT_THAT(out, HasSubstr("passes with atol >= 0.996 (rtol 0.001) or rtol >= 0.249975 (atol 0.0001)"));
  nlohmann::json j = Json("r.json");
  ASSERT_FALSE(j.is_discarded());
  const nlohmann::json& m = j["outputs"][0]["metrics"];
  EXPECT_DOUBLE_EQ(m["max_abs_ref"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(m["max_abs_diff"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(m["mean_abs_diff"].get<double>(), 0.375);
  EXPECT_DOUBLE_EQ(m["rel_error"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(m["sorted_max_diff"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(m["rms"].get<double>(), std::sqrt(1.25 / 4));
  EXPECT_DOUBLE_EQ(m["cosine"].get<double>(), 35 / std::sqrt(30 * 41.25));
  EXPECT_EQ(m["nan"]["ref"], 0);
  EXPECT_EQ(m["inf"]["test"], 0);
  EXPECT_EQ(m["bad_count"], 2);
  EXPECT_EQ(m["worst"]["index"], (std::vector<int64_t>{3}));
  EXPECT_DOUBLE_EQ(m["worst"]["test"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(m["min_atol"].get<double>(), 0.996);
  EXPECT_DOUBLE_EQ(j["outputs"][0]["tolerance"]["rtol"].get<double>(), 1e-3);
  EXPECT_EQ(j["outputs"][0]["diagnosis"]["kind"], "noise");
}

TEST_F(CompareCli, NonFiniteFiguresAreStringsInJson) {
  std::string out;
  const std::string args = Npy("a.npy", F32({2}, {0, 1})) + " " + Npy("b.npy", F32({2}, {1, 1})) + " --json " + Path("r.json");
  EXPECT_EQ(RunCompare(args, &out), 1) << out;
  nlohmann::json j = Json("r.json");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["outputs"][0]["metrics"]["min_rtol"], "inf");  // ref is 0 where it fails
}

TEST_F(CompareCli, FoldersMatchedByName) {
  Npy("ref/a.npy", Ref());
  Pb("ref/b.pb", F32({3}, {1, 2, 3}));
  Npy("ref/c.npy", Ref());
  Npy("test/a.npy", Ref());
  Npy("test/b.npy", F32({3}, {2, 4, 6}));
  Npy("test/d.npy", Ref());
  std::ofstream(Path("test/notes.txt")) << "not a tensor";
  std::string out;
  EXPECT_EQ(RunCompare(Path("ref") + " " + Path("test") + " --json " + Path("r.json"), &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("missing in test: c"));
  EXPECT_THAT(out, HasSubstr("missing in ref: d"));
  EXPECT_THAT(out, HasSubstr("scaled: test ~= 2 * ref"));
  EXPECT_THAT(out, HasSubstr("verdict: MISMATCH (1 of 2 outputs ok, 2 missing on one side)"));
  nlohmann::json j = Json("r.json");
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["outputs"].size(), 2u);
  EXPECT_EQ(j["outputs"][0]["name"], "a");
  EXPECT_EQ(j["outputs"][0]["verdict"], "ok");
  EXPECT_TRUE(j["outputs"][0]["diagnosis"].is_null());
  EXPECT_EQ(j["outputs"][1]["name"], "b");
  EXPECT_EQ(j["outputs"][1]["verdict"], "MISMATCH");
  EXPECT_EQ(j["outputs"][1]["diagnosis"]["kind"], "scaled");
  EXPECT_DOUBLE_EQ(j["outputs"][1]["diagnosis"]["scale"].get<double>(), 2);
  EXPECT_EQ(j["missing_in_test"], std::vector<std::string>{"c"});
  EXPECT_EQ(j["missing_in_ref"], std::vector<std::string>{"d"});
}

TEST_F(CompareCli, FoldersAllOkExitZero) {
  Npy("ref/a.npy", Ref());
  Npy("ref/b.npy", F32({2}, {1, 2}));
  Npy("test/a.npy", Ref());
  Pb("test/b.pb", F32({2}, {1, 2}));
  std::string out;
  EXPECT_EQ(RunCompare(Path("ref") + " " + Path("test"), &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("verdict: ok (2 of 2 outputs ok)"));
}

TEST_F(CompareCli, TolerancesGlobalAndPerOutput) {
  const std::string files = Npy("y.npy", F32({2}, {1, 2})) + " " + Npy("t/y.npy", F32({2}, {1, 2.125f}));
  std::string out;
  EXPECT_EQ(RunCompare(files, &out), 1) << out;
  out.clear();
  EXPECT_EQ(RunCompare(files + " --atol 0.125", &out), 0) << out;
  EXPECT_THAT(out, HasSubstr("[rtol 0.001 atol 0.125]"));
  out.clear();
  EXPECT_EQ(RunCompare(files + " --rtol 0.0625", &out), 0) << out;  // 0.125 <= 1e-4 + 0.0625 * 2
  out.clear();
  EXPECT_EQ(RunCompare(files + " --atol 0.125 --tol y=0,0.1", &out), 1) << out;  // per output wins
  out.clear();
  EXPECT_EQ(RunCompare(files + " --tol y=0,0.125", &out), 0) << out;
}

TEST_F(CompareCli, IntegersIgnoreGlobalToleranceButNotPerOutput) {
  Tensor a = Tensor::FromVector<int64_t>(DType::kInt64, {2}, {1, 2});
  Tensor b = Tensor::FromVector<int64_t>(DType::kInt64, {2}, {1, 3});
  const std::string files = Npy("idx.npy", a) + " " + Npy("t/idx.npy", b);
  std::string out;
  EXPECT_EQ(RunCompare(files + " --atol 1", &out), 1) << out;
  out.clear();
  EXPECT_EQ(RunCompare(files + " --tol idx=0,1", &out), 0) << out;
}

TEST_F(CompareCli, ShapeMismatchIsOne) {
  std::string out;
  Tensor nhwc = Ref().Permuted({0, 2, 3, 1}).Contiguous();
  EXPECT_EQ(RunCompare(Npy("y.npy", Ref()) + " " + Npy("t/y.npy", nhwc), &out), 1) << out;
  EXPECT_THAT(out, HasSubstr("shape [1,4,5,3], expected [1,3,4,5]"));
  EXPECT_THAT(out, HasSubstr("test is ref transposed to NHWC"));
}

TEST_F(CompareCli, UsageAndIoErrorsExitTwo) {
  const std::string ref = Npy("ref.npy", Ref());
  std::string out;
  EXPECT_EQ(RunCompare(ref + " " + Path("nope.npy"), &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("nope.npy"));
  EXPECT_THAT(out, HasSubstr("kiln compare: error:"));

  out.clear();
  std::ofstream(Path("garbage.npy")) << "this is not numpy";
  EXPECT_EQ(RunCompare(ref + " " + Path("garbage.npy"), &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("garbage.npy"));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;  // one clear line

  out.clear();
  std::ofstream(Path("y.txt")) << "1 2 3";
  EXPECT_EQ(RunCompare(ref + " " + Path("y.txt"), &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("unknown extension"));

  out.clear();
  fs::create_directories(Path("d"));
  EXPECT_EQ(RunCompare(ref + " " + Path("d"), &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("both be files or both be folders"));

  out.clear();
  fs::create_directories(Path("e"));
  EXPECT_EQ(RunCompare(Path("d") + " " + Path("e"), &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("holds no .npy or .pb file"));

  out.clear();
  EXPECT_EQ(RunCompare(ref + " " + ref + " --tol ref=abc,1", &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("abc"));
  out.clear();
  EXPECT_EQ(RunCompare(ref + " " + ref + " --tol other=0,1", &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("no output named 'other' (outputs: ref)"));
  out.clear();
  EXPECT_EQ(RunCompare(ref + " " + ref + " --atol -1", &out), 2) << out;
  out.clear();
  EXPECT_EQ(RunCompare(ref, &out), 2) << out;  // TEST missing
  out.clear();
  EXPECT_EQ(RunCompare(ref + " " + ref + " --json " + Path("no/such/dir/r.json"), &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("r.json"));
}

TEST_F(CompareCli, AmbiguousStemInAFolderExitsTwo) {
  Npy("ref/y.npy", Ref());
  Pb("ref/y.pb", Ref());
  Npy("test/y.npy", Ref());
  std::string out;
  EXPECT_EQ(RunCompare(Path("ref") + " " + Path("test"), &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("two files for output 'y'"));
}

TEST_F(CompareCli, UnreadableTensorInAFolderExitsTwo) {
  Npy("ref/y.npy", Ref());
  fs::create_directories(Path("test"));
  std::ofstream(Path("test/y.pb")) << "\xff\xff\xff\xff not a TensorProto";
  std::string out;
  EXPECT_EQ(RunCompare(Path("ref") + " " + Path("test"), &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("y.pb"));
  EXPECT_THAT(out, HasSubstr("output 'y' (test)"));
}

}  // namespace
}  // namespace kiln
