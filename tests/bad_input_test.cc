// Bad input end to end: every case must come back as a Status (or a CLI exit
// code) whose message names the file, node, op or value at fault, never an
// abort. Lower layers have their own finer tests (onnx_io_test, graph_test,
// npy_test); these go through the public Session API and the CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "ir/builder.h"
#include "kiln/session.h"
#include "onnx/onnx_io.h"
#include "runtime/session_internal.h"
#include "support/cli.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

// x[N,3] float -> Relu -> y.
ir::Model ReluModel(int64_t opset = 17) {
  ir::GraphBuilder b(opset);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3)});
  auto y = b.AddNode("Relu", {x}, {});
  b.AddOutput(y);
  auto m = b.Build();
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

std::string ErrorOf(const Status& s) { return s.ToString(); }

template <typename T>
std::string CreateError(T&& model) {
  auto s = CreateSessionFromModel(std::forward<T>(model));
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : s.status().ToString();
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln_bad_input_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
  fs::path dir_;
};

using ModelFiles = TempDir;

TEST_F(ModelFiles, MissingFileNamesThePath) {
  auto s = Session::Create((dir_ / "nope.onnx").string());
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(ErrorOf(s.status()), HasSubstr("nope.onnx"));
}

TEST_F(ModelFiles, NotProtobufIsAnError) {
  auto s = Session::Create(Write("garbage.onnx", "this is not a protobuf \xff\xff\xff\xff"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(ErrorOf(s.status()), HasSubstr("garbage.onnx"));
}

TEST_F(ModelFiles, TruncatedModelIsAnError) {
  ir::Model m = ReluModel();
  std::string path = (dir_ / "full.onnx").string();
  ASSERT_TRUE(onnx_io::SaveModelFile(m, path).ok());
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 10u);
  // Every cut must fail cleanly or (if the cut lands between fields) load a
  // model that then fails validation; never crash.
  for (size_t cut : {bytes.size() / 4, bytes.size() / 2, bytes.size() - 3}) {
    auto s = Session::Create(Write("cut.onnx", bytes.substr(0, cut)));
    EXPECT_FALSE(s.ok()) << "cut at " << cut;
  }
}

TEST_F(ModelFiles, EmptyBytesAreAnError) {
  auto s = Session::CreateFromBytes("", 0);
  EXPECT_FALSE(s.ok());
}

TEST(ModelChecks, UnknownOpNamesNodeAndOp) {
  ir::Model m = ReluModel();
  m.graph.nodes[0].op_type = "Frobnicate";
  EXPECT_THAT(CreateError(m), AllOf(HasSubstr("Frobnicate"), HasSubstr(m.graph.nodes[0].name)));
}

TEST(ModelChecks, UnknownDomainIsNamed) {
  ir::Model m = ReluModel();
  m.graph.nodes[0].domain = "com.example";
  m.opsets["com.example"] = 1;
  EXPECT_THAT(CreateError(m), HasSubstr("com.example"));
}

TEST(ModelChecks, OpsetWithoutTheOpIsNamed) {
  // Relu exists since opset 1, but GridSample only since 16.
  ir::GraphBuilder b(11);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 1, 2, 2});
  auto g = b.AddInput("g", DType::kFloat32, Shape{1, 2, 2, 2});
  auto y = b.AddNode("GridSample", {x, g}, {});
  b.AddOutput(y);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  EXPECT_THAT(CreateError(*m), AllOf(HasSubstr("GridSample"), HasSubstr("11")));
}

TEST(ModelChecks, DanglingValueIsNamed) {
  ir::Model m = ReluModel();
  m.graph.nodes[0].inputs[0] = "ghost";
  EXPECT_THAT(CreateError(m), HasSubstr("ghost"));
}

TEST(ModelChecks, CycleIsAnError) {
  ir::Model m = ReluModel();
  ir::Node a = m.graph.nodes[0];
  a.name = "a";
  a.inputs = {"b_out"};
  a.outputs = {"a_out"};
  ir::Node b = a;
  b.name = "b";
  b.inputs = {"a_out"};
  b.outputs = {"b_out"};
  m.graph.nodes.push_back(a);
  m.graph.nodes.push_back(b);
  EXPECT_THAT(CreateError(m), HasSubstr("cycle"));
}

TEST(ModelChecks, InferenceMismatchNamesTheNode) {
  // Add of [2,3] and [4] cannot broadcast: caught before any kernel runs.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3});
  auto w = b.AddInput("w", DType::kFloat32, Shape{4});
  auto y = b.AddNode("Add", {x, w}, {});
  b.AddOutput(y);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  EXPECT_THAT(CreateError(*m), HasSubstr("Add"));
}

TEST(ModelChecks, InferenceOverflowNamesTheNode) {
  // Concat of two [2^62] inputs: the output dim 2^63 does not fit int64
  // (UBSan caught the unchecked sum; loader_fuzz found it).
  ir::GraphBuilder b(17);
  const int64_t big = int64_t{1} << 62;
  auto x = b.AddInput("x", DType::kFloat32, Shape{big});
  auto y = b.AddInput("y", DType::kFloat32, Shape{big});
  b.AddOutput(b.AddNode("Concat", {x, y}, {ir::Attribute::Int("axis", 0)}, 1, "join")[0]);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  const std::string e = CreateError(*m);
  EXPECT_THAT(e, HasSubstr("join"));
  EXPECT_THAT(e, HasSubstr("overflows"));
}

TEST(ModelChecks, BadOptionsAreErrors) {
  SessionOptions bad_provider;
  bad_provider.provider = "warp-drive";
  auto s = CreateSessionFromModel(ReluModel(), bad_provider);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(ErrorOf(s.status()), HasSubstr("warp-drive"));
  SessionOptions bad_level;
  bad_level.opt_level = "max";
  auto t = CreateSessionFromModel(ReluModel(), bad_level);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(ErrorOf(t.status()), HasSubstr("max"));
}

class Feeds : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = CreateSessionFromModel(ReluModel());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    session_ = std::move(s).value();
  }
  std::string RunError(const std::map<std::string, Tensor>& feeds, const std::vector<std::string>& outputs = {}) {
    auto out = session_->Run(feeds, outputs);
    EXPECT_FALSE(out.ok());
    return out.ok() ? "" : out.status().ToString();
  }
  std::unique_ptr<Session> session_;
};

TEST_F(Feeds, GoodFeedRuns) {
  auto out = session_->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {-1, 2, -3, 4, -5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].data<float>()[0], 0.0f);
  EXPECT_EQ((*out)[0].data<float>()[5], 6.0f);
}

TEST_F(Feeds, WrongNameIsNamed) {
  EXPECT_THAT(RunError({{"z", Tensor::Zeros(DType::kFloat32, {1, 3})}}), AllOf(HasSubstr("'z'"), HasSubstr("x")));
}

TEST_F(Feeds, MissingInputIsNamed) { EXPECT_THAT(RunError({}), HasSubstr("'x'")); }

TEST_F(Feeds, WrongDtypeIsNamed) {
  EXPECT_THAT(RunError({{"x", Tensor::Zeros(DType::kInt32, {1, 3})}}), AllOf(HasSubstr("int32"), HasSubstr("float32")));
}

TEST_F(Feeds, WrongShapeIsNamed) {
  EXPECT_THAT(RunError({{"x", Tensor::Zeros(DType::kFloat32, {1, 4})}}), HasSubstr("[1,4]"));
  EXPECT_THAT(RunError({{"x", Tensor::Zeros(DType::kFloat32, {3})}}), HasSubstr("rank"));
}

TEST_F(Feeds, UndefinedTensorIsAnError) { EXPECT_THAT(RunError({{"x", Tensor()}}), HasSubstr("undefined")); }

TEST_F(Feeds, UnknownOutputIsNamed) {
  EXPECT_THAT(RunError({{"x", Tensor::Zeros(DType::kFloat32, {1, 3})}}, {"nope"}), HasSubstr("'nope'"));
}

// A shape that only exists at run time (ConstantOfShape fed a huge shape)
// must fail the run with a Status, not abort in an allocation.
TEST(Shapes, HugeRuntimeShapeIsAnError) {
  ir::GraphBuilder b(17);
  auto shape = b.AddInput("shape", DType::kInt64, Shape{2});
  auto y = b.AddNode("ConstantOfShape", {shape}, {});
  b.AddOutput(y);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  auto s = CreateSessionFromModel(*m);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  for (std::vector<int64_t> dims : {std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40}, {int64_t{1} << 40, 1}, {2, -3}}) {
    auto out = (*s)->Run({{"shape", Tensor::FromVector<int64_t>(DType::kInt64, {2}, dims)}});
    EXPECT_FALSE(out.ok()) << dims[0] << "x" << dims[1];
  }
  auto ok = (*s)->Run({{"shape", Tensor::FromVector<int64_t>(DType::kInt64, {2}, {2, 3})}});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ((*ok)[0].shape(), (Shape{2, 3}));
}

// The CLI turns each of these into a message and a non-zero exit code.
int RunCli(const std::string& args, std::string* output) { return kiln::testing::RunKiln(args, output); }

using Cli = TempDir;

TEST_F(Cli, MissingModelExitsTwo) {
  std::string out;
  EXPECT_EQ(RunCli("run " + (dir_ / "nope.onnx").string(), &out), 2);
  EXPECT_THAT(out, HasSubstr("nope.onnx"));
}

TEST_F(Cli, GarbageModelExitsTwo) {
  std::string out;
  EXPECT_EQ(RunCli("run " + Write("garbage.onnx", "not a model"), &out), 2);
  EXPECT_THAT(out, HasSubstr("garbage.onnx"));
}

TEST_F(Cli, BadShapeArgumentExitsTwo) {
  ir::Model m = ReluModel();
  std::string path = (dir_ / "relu.onnx").string();
  ASSERT_TRUE(onnx_io::SaveModelFile(m, path).ok());
  std::string out;
  EXPECT_EQ(RunCli("run " + path + " --shape x=2xbanana", &out), 2);
  EXPECT_THAT(out, HasSubstr("banana"));
  out.clear();
  EXPECT_EQ(RunCli("run " + path + " --shape x=2x3 --quiet", &out), 0) << out;
}

TEST(CliArgs, UnknownSubcommandIsNonZero) {
  std::string out;
  EXPECT_NE(RunCli("frobnicate", &out), 0);
}

}  // namespace
}  // namespace kiln
