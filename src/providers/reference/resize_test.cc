// Tests of Resize and Upsample on the reference provider. Expected values are
// worked out by hand from the spec's formulas (the arithmetic is in the
// comments) or from an independent separable formula written in the test:
// out[i][j] = sum_p sum_q R_i[p] C_j[q] x[p][q], with the 1-D weights R, C
// derived by hand for each case.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "ops/op_registry.h"
#include "runtime/session_internal.h"
#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using ::testing::FloatNear;
using ir::Attribute;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToFloats;

const Tensor kNone;  // an omitted optional input

Result<Tensor> RunOp(int64_t opset, const std::vector<Tensor>& inputs, const std::vector<Attribute>& attrs,
                   const std::string& op = "Resize") {
  KILN_ASSIGN_OR_RETURN(auto outs, RunNode(op, inputs, attrs, 1, opset));
  return outs[0];
}

// 1-D weights over input positions for each output position.
using Weights = std::vector<std::vector<double>>;

// The separable n-linear/n-cubic formula for a [1,1,H,W] input.
std::vector<float> Separable(const std::vector<float>& x, int64_t h, int64_t w, const Weights& rows, const Weights& cols) {
  std::vector<float> out;
  for (const auto& r : rows)
    for (const auto& c : cols) {
      double acc = 0;
      for (int64_t p = 0; p < h; ++p)
        for (int64_t q = 0; q < w; ++q) acc += r[static_cast<size_t>(p)] * c[static_cast<size_t>(q)] * x[static_cast<size_t>(p * w + q)];
      out.push_back(static_cast<float>(acc));
    }
  return out;
}

// The spec's cubic kernel, written out as the two polynomials of its text.
double Cubic(double s, double a) {
  s = std::fabs(s);
  if (s <= 1) return (a + 2) * s * s * s - (a + 3) * s * s + 1;
  if (s < 2) return a * s * s * s - 5 * a * s * s + 8 * a * s - 4 * a;
  return 0;
}

MATCHER_P(NearAll, expected, "") {
  if (arg.size() != expected.size()) return false;
  for (size_t i = 0; i < arg.size(); ++i)
    if (std::fabs(arg[i] - expected[i]) > 1e-5f) {
      *result_listener << "index " << i << ": " << arg[i] << " vs " << expected[i];
      return false;
    }
  return true;
}

// --- nearest --------------------------------------------------------------

TEST(ResizeTest, NearestUpsample2xHalfPixel) {
  // half_pixel: x_ori = (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25;
  // round_prefer_floor (clamped to the edge) picks 0, 0, 1, 1.
  auto y = RunOp(13, {F32({1, 1, 2, 2}, {1, 2, 3, 4}), kNone, F32({4}, {1, 1, 2, 2})}, {Attribute::String("mode", "nearest")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (Shape{1, 1, 4, 4}));
  EXPECT_THAT(ToFloats(*y), ElementsAre(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4));
}

// kiln's motivating bug: a 2x nearest Resize reading an NHWC tensor that was
// transposed to NCHW. Every output must come from its own channel.
TEST(ResizeTest, NearestUpsampleOfTransposedNhwcView) {
  const int64_t n = 2, h = 2, w = 3, c = 4;
  Tensor nhwc = Tensor::Zeros(DType::kFloat32, {n, h, w, c});
  for (int64_t i = 0; i < nhwc.numel(); ++i) nhwc.data<float>()[i] = static_cast<float>(i);
  Tensor nchw = nhwc.Permuted({0, 3, 1, 2});  // a strided view, not a copy
  ASSERT_FALSE(nchw.is_contiguous());
  auto y = RunOp(13, {nchw, kNone, F32({4}, {1, 1, 2, 2})}, {Attribute::String("mode", "nearest")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->shape(), (Shape{n, c, 2 * h, 2 * w}));
  // out[b][ch][oy][ox] = nhwc[b][oy / 2][ox / 2][ch] (2x half_pixel nearest repeats).
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t oy = 0; oy < 2 * h; ++oy)
        for (int64_t ox = 0; ox < 2 * w; ++ox) {
          const int64_t out_lin = ((b * c + ch) * 2 * h + oy) * 2 * w + ox;
          const int64_t in_lin = ((b * h + oy / 2) * w + ox / 2) * c + ch;
          ASSERT_EQ(y->GetAsDouble(out_lin), static_cast<double>(in_lin)) << "b" << b << " c" << ch << " y" << oy << " x" << ox;
        }
}

// The same bug through a graph: NHWC input -> Transpose -> Resize.
TEST(ResizeTest, NearestUpsampleAfterTransposeNode) {
  ir::Model m;
  m.opsets[""] = 13;
  m.graph.name = "nhwc_resize";
  m.graph.inputs.push_back({"x", ir::TypeInfo::Tensor(DType::kFloat32, ir::DimsFromShape({1, 2, 2, 3}))});
  m.graph.initializers["scales"] = F32({4}, {1, 1, 2, 2});
  ir::Node t;
  t.name = "to_nchw";
  t.op_type = "Transpose";
  t.inputs = {"x"};
  t.outputs = {"x_nchw"};
  t.attrs["perm"] = Attribute::Ints("perm", {0, 3, 1, 2});
  ir::Node r;
  r.name = "up";
  r.op_type = "Resize";
  r.inputs = {"x_nchw", "", "scales"};
  r.outputs = {"y"};
  r.attrs["mode"] = Attribute::String("mode", "nearest");
  m.graph.nodes = {t, r};
  m.graph.outputs.push_back({"y", {}});
  auto session = CreateSessionFromModel(std::move(m));
  if (!session.ok() && session.status().code() == StatusCode::kUnimplemented) GTEST_SKIP() << session.status().ToString();
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  Tensor x = Tensor::Zeros(DType::kFloat32, {1, 2, 2, 3});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i);
  auto outs = (*session)->Run({{"x", x}}, {});
  ASSERT_TRUE(outs.ok()) << outs.status().ToString();
  const Tensor& y = (*outs)[0];
  ASSERT_EQ(y.shape(), (Shape{1, 3, 4, 4}));
  for (int64_t ch = 0; ch < 3; ++ch)
    for (int64_t oy = 0; oy < 4; ++oy)
      for (int64_t ox = 0; ox < 4; ++ox)
        ASSERT_EQ(y.GetAsDouble((ch * 4 + oy) * 4 + ox), static_cast<double>(((oy / 2) * 2 + ox / 2) * 3 + ch));
}

TEST(ResizeTest, NearestModes) {
  // asymmetric, 3 -> 4: x_ori = x * 3/4 = 0, 0.75, 1.5, 2.25.
  const Tensor x = F32({1, 3}, {10, 20, 30});
  const Tensor sizes = I64({2}, {1, 4});
  auto run = [&](const std::string& nm) {
    auto y = RunOp(13, {x, kNone, kNone, sizes},
                 {Attribute::String("mode", "nearest"), Attribute::String("coordinate_transformation_mode", "asymmetric"),
                  Attribute::String("nearest_mode", nm)});
    EXPECT_TRUE(y.ok()) << y.status().ToString();
    return y.ok() ? ToFloats(*y) : std::vector<float>{};
  };
  EXPECT_THAT(run("round_prefer_floor"), ElementsAre(10, 20, 20, 30));  // 0, 1, 1 (tie down), 2
  EXPECT_THAT(run("round_prefer_ceil"), ElementsAre(10, 20, 30, 30));   // 0, 1, 2 (tie up), 2
  EXPECT_THAT(run("floor"), ElementsAre(10, 10, 20, 30));               // 0, 0, 1, 2
  EXPECT_THAT(run("ceil"), ElementsAre(10, 20, 30, 30));                // 0, 1, 2, 3 -> clamped to 2
}

// Sizes 13 -> 15: output 7's source coordinate is exactly a whole number
// (half_pixel: 7.5 * 13/15 - 0.5 = 6) or a half (tf_half_pixel_for_nn:
// 7.5 * 13/15 = 6.5). Dividing by a rounded 15/13 gave 6.000000000000001
// and 6.500000000000001, and ceil / round_prefer_floor picked 7 instead of
// 6 (fuzz seeds 1455 and 1223, where ONNX Runtime disagreed).
TEST(ResizeTest, NearestExactTiesFromSizes) {
  std::vector<float> v;
  for (int i = 0; i < 13; ++i) v.push_back(static_cast<float>(i));
  const Tensor x = F32({1, 13}, v);
  const Tensor sizes = I64({2}, {1, 15});
  auto pick7 = [&](const std::string& coord, const std::string& nm) {
    // tf_half_pixel_for_nn exists up to opset 11, whose roi and scales are
    // required (empty) inputs.
    const bool v11 = coord == "tf_half_pixel_for_nn";
    auto y = RunOp(v11 ? 11 : 13, {x, v11 ? F32({0}, {}) : kNone, v11 ? F32({0}, {}) : kNone, sizes},
                   {Attribute::String("mode", "nearest"), Attribute::String("coordinate_transformation_mode", coord),
                    Attribute::String("nearest_mode", nm)});
    EXPECT_TRUE(y.ok()) << y.status().ToString();
    return y.ok() ? ToFloats(*y)[7] : -1.0f;
  };
  EXPECT_EQ(pick7("half_pixel", "ceil"), 6);                          // ceil(6) = 6
  EXPECT_EQ(pick7("half_pixel", "floor"), 6);
  EXPECT_EQ(pick7("tf_half_pixel_for_nn", "round_prefer_floor"), 6);  // tie 6.5 -> 6
  EXPECT_EQ(pick7("tf_half_pixel_for_nn", "round_prefer_ceil"), 7);   // tie 6.5 -> 7
}

TEST(ResizeTest, NearestCopiesInt64Exactly) {
  const int64_t big = (int64_t{1} << 60) + 1;  // not representable as a double
  auto y = RunOp(13, {I64({1, 2}, {big, -big}), kNone, F32({2}, {1, 2})}, {});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->dtype(), DType::kInt64);
  const int64_t* p = y->data<int64_t>();
  EXPECT_EQ(p[0], big);
  EXPECT_EQ(p[1], big);
  EXPECT_EQ(p[2], -big);
  EXPECT_EQ(p[3], -big);
}

TEST(ResizeTest, TfHalfPixelForNnOpset11) {
  // x_ori = (x + 0.5) / scale. Rows 4 -> 3 (scale 0.75): 0.67, 2, 3.33 -> 1, 2, 3.
  // Cols 4 -> 2 (scale 0.5): 1, 3.
  std::vector<float> v;
  for (int i = 1; i <= 16; ++i) v.push_back(static_cast<float>(i));
  auto y = RunOp(11, {F32({1, 1, 4, 4}, v), F32({0}, {}), F32({0}, {}), I64({4}, {1, 1, 3, 2})},
               {Attribute::String("mode", "nearest"), Attribute::String("coordinate_transformation_mode", "tf_half_pixel_for_nn")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_THAT(ToFloats(*y), ElementsAre(6, 8, 10, 12, 14, 16));
}

// --- linear -----------------------------------------------------------------

TEST(ResizeTest, LinearHalfPixelUpsample) {
  // 2 -> 4: x_ori = -0.25, 0.25, 0.75, 1.25; the edge is replicated, so the
  // weights over (x0, x1) are (1,0), (.75,.25), (.25,.75), (0,1).
  const Weights w = {{1, 0}, {.75, .25}, {.25, .75}, {0, 1}};
  const std::vector<float> x = {1, 2, 3, 4};
  auto y = RunOp(13, {F32({1, 1, 2, 2}, x), kNone, F32({4}, {1, 1, 2, 2})}, {Attribute::String("mode", "linear")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_THAT(ToFloats(*y), NearAll(Separable(x, 2, 2, w, w)));
}

TEST(ResizeTest, LinearAlignCornersSizes) {
  // 2 -> 4 with sizes: x_ori = x * (2 - 1) / (4 - 1) = 0, 1/3, 2/3, 1.
  const Weights w = {{1, 0}, {2. / 3, 1. / 3}, {1. / 3, 2. / 3}, {0, 1}};
  const std::vector<float> x = {1, 2, 3, 4};
  auto y = RunOp(13, {F32({1, 1, 2, 2}, x), kNone, kNone, I64({4}, {1, 1, 4, 4})},
               {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", "align_corners")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_THAT(ToFloats(*y), NearAll(Separable(x, 2, 2, w, w)));
}

TEST(ResizeTest, LinearAlignCornersDownsampleUsesUnroundedLength) {
  // Opset 13 test data: cols 4 -> floor(2.4) = 2, and align_corners divides
  // by 2.4 - 1 (not 2 - 1): x_ori(1) = 3 / 1.4 = 2.142857 -> 1 + 2.142857.
  // Rows 2 -> floor(1.2) = 1: x_ori(0) = 0.
  auto y = RunOp(13, {F32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), kNone, F32({4}, {1, 1, 0.6f, 0.6f})},
               {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", "align_corners")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (Shape{1, 1, 1, 2}));
  EXPECT_THAT(ToFloats(*y), NearAll(std::vector<float>{1, static_cast<float>(1 + 3 / (4 * 0.6f - 1.0))}));
}

TEST(ResizeTest, LinearAsymmetric) {
  // 2 -> 4: x_ori = x / 2 = 0, 0.5, 1, 1.5 (1.5 reads x1 and the replicated edge).
  auto y = RunOp(13, {F32({1, 2}, {10, 20}), kNone, F32({2}, {1, 2})},
               {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", "asymmetric")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_THAT(ToFloats(*y), ElementsAre(10, 15, 20, 20));
}

TEST(ResizeTest, LinearPytorchHalfPixelLengthOne) {
  // Cols 4 -> 1: pytorch_half_pixel maps to 0 (column 0). Rows 4 -> 3, scale
  // 0.75: (y + 0.5) / 0.75 - 0.5 = 1/6, 1.5, 17/6; column 0 is 1, 5, 9, 13,
  // linear in y: 1 + 4 * y_ori.
  std::vector<float> v;
  for (int i = 1; i <= 16; ++i) v.push_back(static_cast<float>(i));
  auto y = RunOp(13, {F32({1, 1, 4, 4}, v), kNone, kNone, I64({4}, {1, 1, 3, 1})},
               {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", "pytorch_half_pixel")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_THAT(ToFloats(*y), NearAll(std::vector<float>{1 + 4.f / 6, 7, 1 + 4 * 17.f / 6}));
}

TEST(ResizeTest, HalfPixelSymmetricOpset19) {
  // 4 -> floor(2.4) = 2 at scale 0.6: adjustment = 2 / 2.4, offset =
  // 2 * (1 - 2/2.4) = 1/3; x_ori = 1/3 + (x + 0.5) / 0.6 - 0.5 = 2/3, 7/3.
  // On 1, 2, 3, 4 that is 1 + x_ori. Plain half_pixel gives 1/3, 2.
  const Tensor x = F32({1, 4}, {1, 2, 3, 4});
  const Tensor scales = F32({2}, {1, 0.6f});
  auto sym = RunOp(19, {x, kNone, scales},
                 {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", "half_pixel_symmetric")});
  ASSERT_TRUE(sym.ok()) << sym.status().ToString();
  const double s = 0.6f;
  const double off = 2 * (1 - 2 / (4 * s));
  EXPECT_THAT(ToFloats(*sym), NearAll(std::vector<float>{static_cast<float>(1 + off + 0.5 / s - 0.5),
                                                         static_cast<float>(1 + off + 1.5 / s - 0.5)}));
  auto half = RunOp(19, {x, kNone, scales}, {Attribute::String("mode", "linear")});
  ASSERT_TRUE(half.ok());
  EXPECT_THAT(ToFloats(*half), NearAll(std::vector<float>{static_cast<float>(1 + 0.5 / s - 0.5), static_cast<float>(1 + 1.5 / s - 0.5)}));
}

TEST(ResizeTest, TfCropAndResizeWithExtrapolation) {
  // x[i][j] = 1 + 4i + j is linear, so bilinear sampling is exact:
  // f(y, x) = 1 + 4y + x. roi starts (0.4, 0.6), ends (1.2, 1.7), 4 -> 3:
  // y = 1.2 + k * 0.8 * 3 / 2 = 1.2, 2.4, 3.6; x = 1.8 + k * 1.1 * 3 / 2 = 1.8, 3.45, 5.1.
  // Past index 3 the output is extrapolation_value (10).
  std::vector<float> v;
  for (int i = 1; i <= 16; ++i) v.push_back(static_cast<float>(i));
  auto y = RunOp(13, {F32({1, 1, 4, 4}, v), F32({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f}), kNone, I64({4}, {1, 1, 3, 3})},
               {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", "tf_crop_and_resize"),
                Attribute::Float("extrapolation_value", 10)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  const double y0 = 0.4f * 3, y1 = y0 + (1.2f - 0.4f) * 1.5;
  const double x0 = 0.6f * 3;
  EXPECT_THAT(ToFloats(*y), NearAll(std::vector<float>{static_cast<float>(1 + 4 * y0 + x0), 10, 10,
                                                       static_cast<float>(1 + 4 * y1 + x0), 10, 10, 10, 10, 10}));
}

TEST(ResizeTest, TfCropAndResizeInside) {
  // roi (0.4, 0.6) -> (0.6, 0.8): y = 1.2, 1.5, 1.8; x = 1.8, 2.1, 2.4.
  std::vector<float> v;
  for (int i = 1; i <= 16; ++i) v.push_back(static_cast<float>(i));
  auto y = RunOp(13, {F32({1, 1, 4, 4}, v), F32({8}, {0, 0, 0.4f, 0.6f, 1, 1, 0.6f, 0.8f}), kNone, I64({4}, {1, 1, 3, 3})},
               {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", "tf_crop_and_resize")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  std::vector<float> e;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double yy = 0.4f * 3 + i * (0.6f - 0.4f) * 1.5, xx = 0.6f * 3 + j * (0.8f - 0.6f) * 1.5;
      e.push_back(static_cast<float>(1 + 4 * yy + xx));
    }
  EXPECT_THAT(ToFloats(*y), NearAll(e));
}

TEST(ResizeTest, LinearUint8RoundsToNearest) {
  // 2 -> 4 asymmetric on (0, 255): 0, 127.5, 255, 255; 127.5 rounds to 128.
  Tensor x = Tensor::FromVector<uint8_t>(DType::kUint8, {1, 2}, {0, 255});
  auto y = RunOp(13, {x, kNone, F32({2}, {1, 2})},
               {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", "asymmetric")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->dtype(), DType::kUint8);
  EXPECT_THAT(ToFloats(*y), ElementsAre(0, 128, 255, 255));
}

// --- cubic ------------------------------------------------------------------

TEST(ResizeTest, CubicHalfPixelUpsample1D) {
  // 4 -> 8, half_pixel: x_ori = (x + 0.5) / 2 - 0.5. The taps are
  // floor(x_ori) - 1 .. floor(x_ori) + 2 (clamped to the edge), weights
  // Cubic(x_ori - tap) with A = -0.75.
  const std::vector<float> x = {1, 4, 2, 8};
  auto y = RunOp(13, {F32({1, 4}, x), kNone, F32({2}, {1, 2})}, {Attribute::String("mode", "cubic")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  std::vector<float> e;
  for (int o = 0; o < 8; ++o) {
    const double xo = (o + 0.5) / 2 - 0.5;
    const int f = static_cast<int>(std::floor(xo));
    double acc = 0;
    for (int t = f - 1; t <= f + 2; ++t) acc += Cubic(xo - t, -0.75) * x[static_cast<size_t>(std::clamp(t, 0, 3))];
    e.push_back(static_cast<float>(acc));
  }
  EXPECT_THAT(ToFloats(*y), NearAll(e));
}

TEST(ResizeTest, CubicCoeffAAndExcludeOutside) {
  // A = -0.5, exclude_outside: taps outside [0, 4) get weight 0 and the rest
  // are renormalized (here at x_ori = -0.25 and 0.25 near the left edge).
  const std::vector<float> x = {1, 4, 2, 8};
  auto y = RunOp(13, {F32({1, 4}, x), kNone, F32({2}, {1, 2})},
               {Attribute::String("mode", "cubic"), Attribute::Float("cubic_coeff_a", -0.5f), Attribute::Int("exclude_outside", 1)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  std::vector<float> e;
  for (int o = 0; o < 8; ++o) {
    const double xo = (o + 0.5) / 2 - 0.5;
    const int f = static_cast<int>(std::floor(xo));
    double acc = 0, sum = 0;
    for (int t = f - 1; t <= f + 2; ++t) {
      if (t < 0 || t > 3) continue;
      acc += Cubic(xo - t, -0.5) * x[static_cast<size_t>(t)];
      sum += Cubic(xo - t, -0.5);
    }
    e.push_back(static_cast<float>(acc / sum));
  }
  EXPECT_THAT(ToFloats(*y), NearAll(e));
}

// --- opset 18: axes, keep_aspect_ratio_policy, antialias ----------------------

TEST(ResizeTest, AxesSubset) {
  // axes = [-1]: only the last axis is resized (2x nearest); scales has one value.
  auto y = RunOp(18, {F32({1, 2, 2}, {1, 2, 3, 4}), kNone, F32({1}, {2})},
               {Attribute::String("mode", "nearest"), Attribute::Ints("axes", {-1})});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (Shape{1, 2, 4}));
  EXPECT_THAT(ToFloats(*y), ElementsAre(1, 1, 2, 2, 3, 3, 4, 4));
  // axes [2, 3] with sizes on a 4-D input.
  auto z = RunOp(18, {F32({1, 1, 2, 2}, {1, 2, 3, 4}), kNone, kNone, I64({2}, {4, 2})},
               {Attribute::String("mode", "nearest"), Attribute::Ints("axes", {2, 3})});
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  EXPECT_EQ(z->shape(), (Shape{1, 1, 4, 2}));
  EXPECT_THAT(ToFloats(*z), ElementsAre(1, 2, 1, 2, 3, 4, 3, 4));
}

TEST(ResizeTest, KeepAspectRatioPolicy) {
  const Tensor x = F32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor sizes = I64({2}, {4, 4});
  auto run = [&](const std::string& policy) {
    return RunOp(18, {x, kNone, kNone, sizes},
               {Attribute::String("mode", "nearest"), Attribute::Ints("axes", {2, 3}),
                Attribute::String("keep_aspect_ratio_policy", policy)});
  };
  // not_larger: scale = min(4/2, 4/4) = 1 -> [2, 4], the input itself.
  auto a = run("not_larger");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->shape(), (Shape{1, 1, 2, 4}));
  EXPECT_THAT(ToFloats(*a), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  // not_smaller: scale = max(2, 1) = 2 -> [4, 8].
  auto b = run("not_smaller");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->shape(), (Shape{1, 1, 4, 8}));
  // stretch: exactly the sizes.
  auto c = run("stretch");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->shape(), (Shape{1, 1, 4, 4}));
  // Lengths round half up: 3x5 to fit 2x2 -> scale 0.4 -> 1.2 -> 1, 2.0 -> 2.
  auto d = RunOp(18, {F32({3, 5}, std::vector<float>(15, 1)), kNone, kNone, I64({2}, {2, 2})},
               {Attribute::String("keep_aspect_ratio_policy", "not_larger")});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->shape(), (Shape{1, 2}));
  // 2x5 to cover 3x3 -> scale 1.5 -> 3, 7.5 -> 8.
  auto e = RunOp(18, {F32({2, 5}, std::vector<float>(10, 1)), kNone, kNone, I64({2}, {3, 3})},
               {Attribute::String("keep_aspect_ratio_policy", "not_smaller")});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->shape(), (Shape{3, 8}));
}

TEST(ResizeTest, AntialiasLinearDownsample) {
  // 4 -> 2 (scale 0.5), half_pixel: x_ori = 0.5, 2.5. The triangle filter is
  // stretched 2x: taps at x_ori - 1.5 .. x_ori + 1.5 with weights
  // 1 - |d| * 0.5 = .25, .75, .75, .25, normalized to /2; the left tap of
  // x_ori = 0.5 (index -1) reads the edge.
  const std::vector<float> x = {1, 2, 3, 4};
  auto y = RunOp(18, {F32({1, 4}, x), kNone, F32({2}, {1, 0.5f})},
               {Attribute::String("mode", "linear"), Attribute::Int("antialias", 1)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_THAT(ToFloats(*y), NearAll(std::vector<float>{.5f * 1 + .375f * 2 + .125f * 3, .125f * 2 + .375f * 3 + .5f * 4}));
  // Without antialias: plain linear at 0.5 and 2.5.
  auto z = RunOp(18, {F32({1, 4}, x), kNone, F32({2}, {1, 0.5f})}, {Attribute::String("mode", "linear")});
  ASSERT_TRUE(z.ok());
  EXPECT_THAT(ToFloats(*z), NearAll(std::vector<float>{1.5f, 3.5f}));
}

TEST(ResizeTest, AntialiasCubicDownsample) {
  // 8 -> 4 (scale 0.5): the cubic kernel is stretched 2x, Cubic(0.5 * d) for
  // taps d in (-4, 4) around x_ori, normalized; edge taps read the edge.
  const std::vector<float> x = {3, 1, 4, 1, 5, 9, 2, 6};
  auto y = RunOp(18, {F32({1, 8}, x), kNone, F32({2}, {1, 0.5f})},
               {Attribute::String("mode", "cubic"), Attribute::Int("antialias", 1)});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  std::vector<float> e;
  for (int o = 0; o < 4; ++o) {
    const double xo = (o + 0.5) / 0.5 - 0.5;  // 0.5, 2.5, 4.5, 6.5
    double acc = 0, sum = 0;
    for (int t = -10; t <= 20; ++t) {
      const double w = Cubic(0.5 * (t - xo), -0.75);
      if (w == 0) continue;
      acc += w * x[static_cast<size_t>(std::clamp(t, 0, 7))];
      sum += w;
    }
    e.push_back(static_cast<float>(acc / sum));
  }
  EXPECT_THAT(ToFloats(*y), NearAll(e));
}

// --- opset 10 and Upsample ------------------------------------------------------

TEST(ResizeTest, Opset10IsAsymmetricFloor) {
  // x_ori = x / 3: 0, 1/3, 2/3, 1, 4/3, 5/3 -> floor 0, 0, 0, 1, 1, 1.
  auto y = RunOp(10, {F32({1, 2}, {1, 2}), F32({2}, {1, 3})}, {Attribute::String("mode", "nearest")});
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_THAT(ToFloats(*y), ElementsAre(1, 1, 1, 2, 2, 2));
  auto z = RunOp(10, {F32({1, 2}, {1, 2}), F32({2}, {1, 2})}, {Attribute::String("mode", "linear")});
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  EXPECT_THAT(ToFloats(*z), ElementsAre(1, 1.5f, 2, 2));
}

TEST(UpsampleTest, Opset7ScalesAttribute) {
  auto y = RunOp(7, {F32({1, 1, 2, 2}, {1, 2, 3, 4})}, {Attribute::String("mode", "nearest"), Attribute::Floats("scales", {1, 1, 2, 3})},
               "Upsample");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape(), (Shape{1, 1, 4, 6}));
  EXPECT_THAT(ToFloats(*y), ElementsAre(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4));
}

TEST(UpsampleTest, Opset9ScalesInputLinear) {
  // Asymmetric: x_ori = x / 2 = 0, 0.5, 1, 1.5 in both axes.
  const Weights w = {{1, 0}, {.5, .5}, {0, 1}, {0, 1}};
  const std::vector<float> x = {1, 2, 3, 4};
  auto y = RunOp(9, {F32({1, 1, 2, 2}, x), F32({4}, {1, 1, 2, 2})}, {Attribute::String("mode", "linear")}, "Upsample");
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_THAT(ToFloats(*y), NearAll(Separable(x, 2, 2, w, w)));
}

// --- errors -----------------------------------------------------------------------

void ExpectError(const Result<Tensor>& r, const std::string& what) {
  ASSERT_FALSE(r.ok()) << "expected an error about " << what;
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
  EXPECT_THAT(r.status().message(), HasSubstr(what));
}

TEST(ResizeTest, Errors) {
  const Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  ExpectError(RunOp(13, {x, kNone, F32({4}, {1, 1, 2, 2}), I64({4}, {1, 1, 4, 4})}, {}), "only one of");
  ExpectError(RunOp(13, {x}, {}), "must be given");
  ExpectError(RunOp(13, {x, kNone, F32({3}, {1, 2, 2})}, {}), "scales has 3 values");
  ExpectError(RunOp(13, {x, kNone, F32({4}, {1, 1, -2, 2})}, {}), "must be > 0");
  ExpectError(RunOp(13, {x, kNone, kNone, I64({4}, {1, 1, -1, 2})}, {}), "negative");
  ExpectError(RunOp(13, {x, kNone, kNone, I64({4}, {1, 1, 3, 3})},
                  {Attribute::String("coordinate_transformation_mode", "tf_crop_and_resize")}),
              "roi");
  ExpectError(RunOp(13, {x, F32({2}, {0, 1}), kNone, I64({4}, {1, 1, 3, 3})},
                  {Attribute::String("coordinate_transformation_mode", "tf_crop_and_resize")}),
              "roi has 2 values");
  ExpectError(RunOp(13, {x, kNone, F32({4}, {1, 1, 2, 2})}, {Attribute::String("mode", "bicubic")}), "mode 'bicubic'");
  ExpectError(RunOp(10, {x, F32({4}, {1, 1, 2, 2})}, {Attribute::String("mode", "cubic")}), "mode 'cubic'");
  ExpectError(RunOp(13, {x, kNone, F32({4}, {1, 1, 2, 2})}, {Attribute::String("nearest_mode", "nearest")}), "nearest_mode");
  ExpectError(RunOp(13, {x, kNone, F32({4}, {1, 1, 2, 2})},
                  {Attribute::String("coordinate_transformation_mode", "tf_half_pixel_for_nn")}),
              "removed in opset 13");
  ExpectError(RunOp(18, {x, kNone, F32({4}, {1, 1, 2, 2})},
                  {Attribute::String("coordinate_transformation_mode", "half_pixel_symmetric")}),
              "opset 19");
  ExpectError(RunOp(18, {x, kNone, F32({2}, {2, 2})}, {Attribute::Ints("axes", {2, -2})}), "twice");
  ExpectError(RunOp(18, {x, kNone, F32({1}, {2})}, {Attribute::Ints("axes", {4})}), "out of range");
  ExpectError(RunOp(18, {x, kNone, kNone, I64({2}, {2, 2})},
                  {Attribute::Ints("axes", {2, 3}), Attribute::String("keep_aspect_ratio_policy", "fit")}),
              "keep_aspect_ratio_policy");
  ExpectError(RunOp(13, {F32({1, 0}, {}), kNone, kNone, I64({2}, {1, 3})}, {}), "empty axis");
  ExpectError(RunOp(13, {x, kNone, F32({4}, {1, 1, 1e30f, 1e30f})}, {}), "too large");
  ExpectError(RunOp(7, {x}, {}, "Upsample"), "scales");
}

// --- shape inference ------------------------------------------------------------------

Result<ir::TypeInfo> InferResize(int64_t opset, const std::vector<ir::TypeInfo>& types, const std::vector<const Tensor*>& values,
                                 const std::vector<Attribute>& attrs = {}) {
  ir::Node n;
  n.name = "n0";
  n.op_type = "Resize";
  for (size_t i = 0; i < types.size(); ++i)
    n.inputs.push_back(types[i].kind == ir::TypeInfo::Kind::kUnknown ? "" : "in" + std::to_string(i));
  n.outputs = {"y"};
  for (const auto& a : attrs) n.attrs[a.name] = a;
  std::vector<const ir::TypeInfo*> tp;
  for (const auto& t : types) tp.push_back(&t);
  std::vector<const Tensor*> vals = values;
  vals.resize(types.size(), nullptr);
  ops::InferContext ctx(n, opset, tp, vals);
  const ops::OpSchema* s = ops::OpRegistry::Global().Find("", "Resize", opset);
  if (!s) return Internal("no schema");
  KILN_RETURN_IF_ERROR(ops::InferNode(*s, ctx));
  return ctx.outputs()[0];
}

TEST(ResizeInferTest, ShapesFromScalesSizesAndUnknowns) {
  const ir::TypeInfo none;
  const ir::TypeInfo x = ir::TypeInfo::Tensor(DType::kFloat32, ir::DimsFromShape({1, 3, 4, 5}));
  const ir::TypeInfo s4 = ir::TypeInfo::Tensor(DType::kFloat32, ir::DimsFromShape({4}));
  const ir::TypeInfo i4 = ir::TypeInfo::Tensor(DType::kInt64, ir::DimsFromShape({4}));
  const Tensor scales = F32({4}, {1, 1, 0.6f, 2.5f});
  // floor(4 * 0.6) = 2, floor(5 * 2.5) = 12.
  auto a = InferResize(13, {x, none, s4}, {nullptr, nullptr, &scales});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->ToString(), "float32[1,3,2,12]");
  // Unknown scales value: the resized dims are unknown (all, without axes).
  auto b = InferResize(13, {x, none, s4}, {});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->ToString(), "float32[?,?,?,?]");
  // Sizes known with a symbolic batch dim: sizes decide every dim.
  ir::TypeInfo xs = x;
  (*xs.shape)[0] = ir::Dim::Symbol("N");
  const Tensor sizes = I64({4}, {1, 3, 8, 10});
  auto c = InferResize(13, {xs, none, none, i4}, {nullptr, nullptr, nullptr, &sizes});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->ToString(), "float32[1,3,8,10]");
  // Opset 18 axes keep the untouched symbolic dim.
  const Tensor sizes2 = I64({2}, {8, 10});
  auto d = InferResize(18, {xs, none, none, ir::TypeInfo::Tensor(DType::kInt64, ir::DimsFromShape({2}))},
                       {nullptr, nullptr, nullptr, &sizes2}, {Attribute::Ints("axes", {2, 3})});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->ToString(), "float32[N,3,8,10]");
  // An empty scales input (dims [0]) with unknown value counts as absent.
  const ir::TypeInfo empty = ir::TypeInfo::Tensor(DType::kFloat32, ir::DimsFromShape({0}));
  auto e = InferResize(13, {x, empty, empty, i4}, {nullptr, nullptr, nullptr, &sizes});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->ToString(), "float32[1,3,8,10]");
}

}  // namespace
}  // namespace kiln
