// The seed models (src/examples/seed.h): the NHWC model fed x and the NCHW
// model fed x transposed are the same network, so their reference outputs
// must agree to 1e-6, the property whose violation motivates kiln. Also
// checks that the two really share weights and that the output is not
// degenerate (a network of zeros would agree trivially).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "examples/seed.h"
#include "ir/builder.h"
#include "kiln/session.h"
#include "onnx/onnx_io.h"
#include "runtime/session_internal.h"

namespace kiln {
namespace {

using examples::SeedLayout;

Tensor SeedImageNhwc(DType dtype) {
  ir::SeededRng rng(7);
  auto t = ir::RandomTensor(dtype, examples::SeedInputShape(SeedLayout::kNhwc), rng, -1, 1);
  EXPECT_TRUE(t.ok());
  return *t;
}

std::unique_ptr<Session> SeedSession(SeedLayout layout, DType dtype) {
  examples::SeedOptions o;
  o.layout = layout;
  o.dtype = dtype;
  auto m = examples::BuildSeedModel(o);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  // Through the ONNX file format, as users get it (`kiln example seed`).
  auto bytes = onnx_io::SerializeModel(*m);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto s = Session::CreateFromBytes(bytes->data(), bytes->size());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

void ExpectLayoutsAgree(DType dtype, double tol) {
  auto nhwc = SeedSession(SeedLayout::kNhwc, dtype);
  auto nchw = SeedSession(SeedLayout::kNchw, dtype);
  ASSERT_TRUE(nhwc && nchw);
  Tensor x = SeedImageNhwc(dtype);
  Tensor xt = x.Permuted({0, 3, 1, 2}).Contiguous();
  ASSERT_EQ(xt.shape(), examples::SeedInputShape(SeedLayout::kNchw));
  auto a = nhwc->Run({{examples::kSeedInputName, x}});
  auto b = nchw->Run({{examples::kSeedInputName, xt}});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const Tensor& ya = (*a)[0];
  const Tensor& yb = (*b)[0];
  ASSERT_EQ(ya.shape(), examples::SeedOutputShape());
  ASSERT_EQ(yb.shape(), examples::SeedOutputShape());
  ASSERT_EQ(ya.dtype(), dtype);
  double worst = 0;
  int64_t positive = 0;
  for (int64_t i = 0; i < ya.numel(); ++i) {
    worst = std::max(worst, std::fabs(ya.GetAsDouble(i) - yb.GetAsDouble(i)));
    positive += ya.GetAsDouble(i) > 0;
  }
  EXPECT_LE(worst, tol);
  // Not degenerate: a good share of both signs after the last Conv.
  EXPECT_GT(positive, ya.numel() / 10);
  EXPECT_LT(positive, ya.numel() * 9 / 10);
}

TEST(Seed, NhwcAndNchwAgreeFloat32) { ExpectLayoutsAgree(DType::kFloat32, 1e-6); }
// float16 models: same weights rounded to float16, computed by the reference
// in double and rounded once per node, so both layouts round identically.
TEST(Seed, NhwcAndNchwAgreeFloat16) { ExpectLayoutsAgree(DType::kFloat16, 1e-6); }

// Transposing x the wrong way (HWC read as CHW) must NOT agree: the test
// above can tell a layout bug from a match.
TEST(Seed, WrongLayoutIsDetected) {
  auto nhwc = SeedSession(SeedLayout::kNhwc, DType::kFloat32);
  auto nchw = SeedSession(SeedLayout::kNchw, DType::kFloat32);
  ASSERT_TRUE(nhwc && nchw);
  Tensor x = SeedImageNhwc(DType::kFloat32);
  Tensor wrong = Tensor::Zeros(DType::kFloat32, examples::SeedInputShape(SeedLayout::kNchw));
  std::memcpy(wrong.raw(), x.Contiguous().raw(), x.nbytes());  // same bytes, wrong strides
  auto a = nhwc->Run({{examples::kSeedInputName, x}});
  auto b = nchw->Run({{examples::kSeedInputName, wrong}});
  ASSERT_TRUE(a.ok() && b.ok());
  double worst = 0;
  for (int64_t i = 0; i < (*a)[0].numel(); ++i) worst = std::max(worst, std::fabs((*a)[0].GetAsDouble(i) - (*b)[0].GetAsDouble(i)));
  EXPECT_GT(worst, 1e-2);
}

TEST(Seed, SameWeightsInBothLayouts) {
  examples::SeedOptions o;
  auto nhwc = examples::BuildSeedModel(o);
  o.layout = SeedLayout::kNchw;
  auto nchw = examples::BuildSeedModel(o);
  ASSERT_TRUE(nhwc.ok() && nchw.ok());
  ASSERT_EQ(nhwc->graph.initializers.size(), nchw->graph.initializers.size());
  for (const auto& [name, t] : nhwc->graph.initializers) {
    auto it = nchw->graph.initializers.find(name);
    ASSERT_NE(it, nchw->graph.initializers.end()) << name;
    ASSERT_EQ(t.nbytes(), it->second.nbytes()) << name;
    EXPECT_EQ(std::memcmp(t.Contiguous().raw(), it->second.Contiguous().raw(), t.nbytes()), 0) << name;
  }
  // The NHWC model is the NCHW one plus the Transpose.
  EXPECT_EQ(nhwc->graph.nodes.size(), nchw->graph.nodes.size() + 1);
  EXPECT_EQ(nhwc->graph.nodes[0].op_type, "Transpose");
}

// `kiln example seed` writes a model `kiln run` accepts, in every variant.
TEST(Seed, CliWritesRunnableModels) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("kiln_seed_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* layout : {"nhwc", "nchw"})
    for (const char* dtype : {"float32", "float16"}) {
      std::string f = (dir / (std::string(layout) + "_" + dtype + ".onnx")).string();
      std::string make = std::string(KILN_CLI_PATH) + " example seed --layout " + layout + " --dtype " + dtype + " -o " + f;
      ASSERT_EQ(std::system(make.c_str()), 0) << make;
      auto s = Session::Create(f);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_EQ((*s)->inputs()[0].dtype, std::string(dtype) == "float16" ? DType::kFloat16 : DType::kFloat32);
      std::string run = std::string(KILN_CLI_PATH) + " run --quiet " + f + " > /dev/null";
      EXPECT_EQ(std::system(run.c_str()), 0) << run;
    }
  std::string bad = std::string(KILN_CLI_PATH) + " example seed --layout chwn -o " + (dir / "x.onnx").string() + " 2>/dev/null";
  EXPECT_NE(std::system(bad.c_str()), 0);
  fs::remove_all(dir);
}

// `kiln demo` (what `make demo` runs): both seed models on cpu, verified
// against the reference, and the two layouts against each other.
TEST(Seed, DemoVerifiesBothLayoutsOnCpu) {
  namespace fs = std::filesystem;
  const fs::path out = fs::temp_directory_path() / ("kiln_demo_" + std::to_string(::getpid()) + ".txt");
  const std::string cmd = std::string(KILN_CLI_PATH) + " demo > " + out.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  fs::remove(out);
  EXPECT_NE(text.find("== model_nhwc"), std::string::npos) << text;
  EXPECT_NE(text.find("== model_nchw"), std::string::npos) << text;
  EXPECT_EQ(text.find("MISMATCH"), std::string::npos) << text;
  EXPECT_NE(text.find("the layouts agree"), std::string::npos) << text;
  EXPECT_NE(text.find("demo: ok"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln
