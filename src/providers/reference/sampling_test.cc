// Tests of GridSample and RoiAlign on the reference provider. Every expected
// value is worked by hand from the spec (comments show the arithmetic).
//
// Most GridSample cases sample the row X = [1, 2, 3, 4] of shape (1, 1, 1, 4)
// with grid points (g, 0): the height axis then maps exactly onto row 0 (y = 0
// under both align_corners) with weight 1, so only the width axis counts:
//   align_corners=0: x = ((g + 1) * 4 - 1) / 2 = 2g + 1.5, border [-0.5, 3.5]
//   align_corners=1: x = (g + 1) / 2 * 3 = 1.5(g + 1),   border [0, 3]
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using ir::Attribute;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToDoubles;
using testing::ToInts;

Attribute Mode(const std::string& m) { return Attribute::String("mode", m); }
Attribute Pad(const std::string& p) { return Attribute::String("padding_mode", p); }
Attribute Align(int64_t a) { return Attribute::Int("align_corners", a); }

// Grid (1, 1, K, 2) of points (g, 0).
Tensor RowGrid(const std::vector<float>& gx) {
  std::vector<float> v;
  for (float g : gx) v.push_back(g), v.push_back(0);
  return F32({1, 1, static_cast<int64_t>(gx.size()), 2}, v);
}
Tensor Row() { return F32({1, 1, 1, 4}, {1, 2, 3, 4}); }

std::vector<double> RunOp(const std::string& op, std::vector<Tensor> in, std::vector<Attribute> attrs, int64_t opset,
                        Shape* shape = nullptr) {
  auto out = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  if (shape) *shape = (*out)[0].shape();
  return ToDoubles((*out)[0]);
}
std::vector<double> Gs(std::vector<float> gx, std::vector<Attribute> attrs, int64_t opset = 16) {
  return RunOp("GridSample", {Row(), RowGrid(gx)}, attrs, opset);
}

// Elementwise within 1e-5 (the float inputs carry float rounding).
auto Approx(std::vector<double> v) { return Pointwise(DoubleNear(1e-5), v); }

// ---------------------------------------------------------------- GridSample

TEST(GridSample, BilinearZeros) {
  // align_corners=0: g=-1 -> x=-0.5: 0.5*pad(0) + 0.5*1; g=0 -> 1.5: (2+3)/2;
  // g=0.5 -> 2.5; g=1 -> 3.5: 0.5*4 + 0.5*pad; g=-0.8 -> -0.1: 0.9*1;
  // g=1.5 -> 4.5: both taps in the padding.
  EXPECT_THAT(Gs({-1, 0, 0.5f, 1, -0.8f, 1.5f}, {}), Approx({0.5, 2.5, 3.5, 2, 0.9, 0}));
  // align_corners=1: -1 -> 0; 0 -> 1.5; 1 -> 3; -0.5 -> 0.75: 0.25*1+0.75*2;
  // 1.2 -> 3.3: 0.7*4; -1.4 -> -0.6: 0.4*1.
  EXPECT_THAT(Gs({-1, 0, 1, -0.5f, 1.2f, -1.4f}, {Align(1)}), Approx({1, 2.5, 4, 1.75, 2.8, 0.4}));
  // Explicit attributes give the defaults' result.
  EXPECT_THAT(Gs({0}, {Mode("bilinear"), Pad("zeros"), Align(0)}), ElementsAre(2.5));
}

TEST(GridSample, BilinearTwoDAndCoordinateOrder) {
  // X = [[1, 2], [3, 4]], align_corners=1: grid (x, y) -> pixel (x+1)/2, (y+1)/2.
  // (0,0) -> center 2.5; (1,-1) -> top right 2; (-1,1) -> bottom left 3;
  // (0,-0.5) -> x=0.5, y=0.25: rows 1.5, 3.5 -> 0.75*1.5 + 0.25*3.5 = 2.
  Shape s;
  EXPECT_THAT(RunOp("GridSample", {F32({1, 1, 2, 2}, {1, 2, 3, 4}), F32({1, 2, 2, 2}, {0, 0, 1, -1, -1, 1, 0, -0.5f})},
                  {Align(1)}, 16, &s),
              Approx({2.5, 2, 3, 2}));
  EXPECT_EQ(s, (Shape{1, 1, 2, 2}));
}

TEST(GridSample, BatchAndChannels) {
  // X (2, 2, 1, 2): n0 = [1,2], [3,4]; n1 = [5,6], [7,8]. Batch 0 samples the
  // left pixel (x=-1), batch 1 the right one (x=1), align_corners=1.
  Shape s;
  EXPECT_THAT(RunOp("GridSample", {F32({2, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({2, 1, 1, 2}, {-1, 0, 1, 0})},
                  {Align(1)}, 16, &s),
              Approx({1, 3, 6, 8}));
  EXPECT_EQ(s, (Shape{2, 2, 1, 1}));
}

TEST(GridSample, BilinearBorder) {
  // align_corners=0, locations outside [-0.5, 3.5] clamp to [0, 3]:
  // -1 -> -0.5 (on the border; tap -1 reads the edge): 1; -2 -> -2.5 -> 0: 1;
  // 1.5 -> 4.5 -> 3: 4; 1 -> 3.5: 4; 0.25 -> 2: 3; -0.8 -> -0.1: 1; 0.1 -> 1.7: 2.7.
  EXPECT_THAT(Gs({-1, -2, 1.5f, 1, 0.25f, -0.8f, 0.1f}, {Pad("border")}), Approx({1, 1, 4, 4, 3, 1, 2.7}));
  // align_corners=1: -1.4 -> -0.6 -> 0: 1; 1.4 -> 3.6 -> 3: 4.
  EXPECT_THAT(Gs({-1.4f, 1.4f}, {Pad("border"), Align(1)}), Approx({1, 4}));
}

TEST(GridSample, BilinearReflection) {
  // align_corners=0, border [-0.5, 3.5] (range 4):
  // -1.5 -> -1.5 reflects by -0.5 to 0.5: 1.5; 1.5 -> 4.5 by 3.5 to 2.5: 3.5;
  // 2.5 -> 6.5: 3 past 3.5 -> 0.5: 1.5; -3 -> -4.5: one full range past -0.5,
  // so it lands on 3.5: 0.5*4 + 0.5*reflect(tap 4 -> 3) = 4; -0.8 -> -0.1
  // (inside, tap -1 reflects to 0): 1; 4 -> 9.5: 6 past 3.5 -> once through
  // the range and 2 back from -0.5 -> 1.5: 2.5.
  EXPECT_THAT(Gs({-1.5f, 1.5f, 2.5f, -3, -0.8f, 4}, {Pad("reflection")}), Approx({1.5, 3.5, 1.5, 4, 1, 2.5}));
  // align_corners=1, border [0, 3]: -1.4 -> -0.6 -> 0.6: 1.6; 1.4 -> 3.6 -> 2.4: 3.4;
  // -3 -> -3 -> 3: 4; 3 -> 6 -> 0: 1.
  EXPECT_THAT(Gs({-1.4f, 1.4f, -3, 3}, {Pad("reflection"), Align(1)}), Approx({1.6, 3.4, 4, 1}));
  // The spec's example on 1x1 pixels: X (1,1,1,2) = [10, 20], align_corners=1,
  // normalized -3.5 reflects by -1 to 1.5, then by 1 to 0.5 -> x = 0.75: 17.5.
  EXPECT_THAT(RunOp("GridSample", {F32({1, 1, 1, 2}, {10, 20}), RowGrid({-3.5f})}, {Pad("reflection"), Align(1)}, 16),
              Approx({17.5}));
}

TEST(GridSample, Nearest) {
  // align_corners=0: -1 -> -0.5 -> 0 (halfway rounds to even): 1; 0 -> 1.5 -> 2: 3;
  // 0.5 -> 2.5 -> 2: 3; -0.5 -> 0.5 -> 0: 1; 0.3 -> 2.1 -> 2: 3;
  // 1 -> 3.5 -> 4: padding 0; -0.3 -> 0.9 -> 1: 2.
  EXPECT_THAT(Gs({-1, 0, 0.5f, -0.5f, 0.3f, 1, -0.3f}, {Mode("nearest")}), Approx({1, 3, 3, 1, 3, 0, 2}));
  // align_corners=1: 0 -> 1.5 -> 2: 3; 1 -> 3: 4; -1 -> 0: 1; -0.6 -> 0.6 -> 1: 2.
  EXPECT_THAT(Gs({0, 1, -1, -0.6f}, {Mode("nearest"), Align(1)}), Approx({3, 4, 1, 2}));
  // Border: 1 -> 3.5 -> 4 -> clamps to 3: 4; -2 -> -2.5 -> -2 -> 0: 1.
  EXPECT_THAT(Gs({1, -2}, {Mode("nearest"), Pad("border")}), Approx({4, 1}));
  // Reflection (align_corners=0): 1.5 -> 4.5 -> 4 -> reflects by 3.5 to 3: 4;
  // -1.5 -> -1.5 -> -2 -> reflects by -0.5 to 1: 2; 2 -> 5.5 -> 6 -> 1: 2.
  EXPECT_THAT(Gs({1.5f, -1.5f, 2}, {Mode("nearest"), Pad("reflection")}), Approx({4, 2, 2}));
}

// Keys cubic weights (a = -0.75) of the taps at -1, 0, 1, 2 for fraction t:
//   t = 0.5:  -0.09375, 0.59375, 0.59375, -0.09375
//   t = 0.75: -0.03515625, 0.26171875, 0.87890625, -0.10546875
//   t = 0.3:  -0.11025, 0.83125, 0.32625, -0.04725
TEST(GridSample, Bicubic) {
  // Zeros, align_corners=0:
  //  -1 -> -0.5 (t=.5, taps -2..1 = 0,0,1,2): 0.59375 - 0.1875 = 0.40625
  //  -0.5 -> 0.5 (taps -1..2 = 0,1,2,3): 0.59375 + 1.1875 - 0.28125 = 1.5
  //   0 -> 1.5 (taps 1,2,3,4): 2.5
  //   0.125 -> 1.75 (t=.75, taps 1,2,3,4): -0.03515625 + 0.5234375 + 2.63671875 - 0.421875 = 2.703125
  //   1 -> 3.5 (taps 3,4,0,0): -0.28125 + 2.375 = 2.09375
  EXPECT_THAT(Gs({-1, -0.5f, 0, 0.125f, 1}, {Mode("bicubic")}),
              Approx({0.40625, 1.5, 2.5, 2.703125, 2.09375}));
  // Border, align_corners=0: -1 -> -0.5 (taps clamp to 1,1,1,2):
  //   -0.09375 + 0.59375 + 0.59375 - 0.1875 = 0.90625;
  //   -2 -> -2.5 -> 0 (t=0: only tap 0, weight 1): 1; 1 -> 3.5 (taps 3,4,4,4): 4.09375.
  EXPECT_THAT(Gs({-1, -2, 1}, {Mode("bicubic"), Pad("border")}), Approx({0.90625, 1, 4.09375}));
  // Reflection, align_corners=1: -1 -> 0: 1; -1.2 -> -0.3 -> 0.3 (t=.3, tap -1
  // reflects to 1: values 2,1,2,3): -0.2205 + 0.83125 + 0.6525 - 0.14175 = 1.1215.
  EXPECT_THAT(Gs({-1, -1.2f}, {Mode("bicubic"), Pad("reflection"), Align(1)}), Approx({1, 1.1215}));
  // Zeros, align_corners=1: 0 -> 1.5: 2.5.
  EXPECT_THAT(Gs({0}, {Mode("bicubic"), Align(1)}), Approx({2.5}));
}

TEST(GridSample, Opset20NamesAndNd) {
  // Opset 20 renames the modes: linear, cubic.
  EXPECT_THAT(Gs({0, 0.125f}, {Mode("linear")}, 20), Approx({2.5, 2.75}));
  EXPECT_THAT(Gs({0.125f}, {Mode("cubic")}, 20), Approx({2.703125}));
  EXPECT_THAT(Gs({0.5f}, {Mode("nearest")}, 20), Approx({3}));
  // 1-D (rank 3): X (1,1,4), grid (1,2,1): 0 -> 1.5: 2.5; 1 -> 3.5: 2.
  Shape s;
  EXPECT_THAT(RunOp("GridSample", {F32({1, 1, 4}, {1, 2, 3, 4}), F32({1, 2, 1}, {0, 1})}, {}, 20, &s),
              Approx({2.5, 2}));
  EXPECT_EQ(s, (Shape{1, 1, 2}));
  // 3-D (rank 5): X (1,1,2,2,2) = 1..8 at d*4 + h*2 + w, align_corners=1, grid
  // (x, y, z): center -> mean 4.5; (1,-1,-1) -> w=1: 2; (-1,-1,1) -> d=1: 5;
  // (-1,1,-1) -> h=1: 3.
  std::vector<float> x8 = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_THAT(RunOp("GridSample", {F32({1, 1, 2, 2, 2}, x8), F32({1, 1, 1, 4, 3}, {0, 0, 0, 1, -1, -1, -1, -1, 1, -1, 1, -1})},
                  {Align(1)}, 20, &s),
              Approx({4.5, 2, 5, 3}));
  EXPECT_EQ(s, (Shape{1, 1, 1, 1, 4}));
  // 3-D nearest: (0.2, -1, 1) -> w = 0.6 -> 1, h = 0, d = 1: element 5 = 6.
  EXPECT_THAT(RunOp("GridSample", {F32({1, 1, 2, 2, 2}, x8), F32({1, 1, 1, 1, 3}, {0.2f, -1, 1})},
                  {Mode("nearest"), Align(1)}, 20),
              Approx({6}));
}

TEST(GridSample, DTypes) {
  // Half, bfloat16 and double give the float results (the grid may differ in type).
  auto half = RunNode("GridSample", {Tensor::FromVector<Float16>(DType::kFloat16, {1, 1, 1, 4}, {Float16(1.f), Float16(2.f), Float16(3.f), Float16(4.f)}),
                                     Tensor::FromVector<Float16>(DType::kFloat16, {1, 1, 1, 2}, {Float16(0.f), Float16(0.f)})},
                      {}, 1, 16);
  ASSERT_TRUE(half.ok()) << half.status().ToString();
  EXPECT_EQ((*half)[0].dtype(), DType::kFloat16);
  EXPECT_THAT(ToDoubles((*half)[0]), ElementsAre(2.5));
  auto bf = RunNode("GridSample", {Tensor::FromVector<BFloat16>(DType::kBFloat16, {1, 1, 1, 4}, {BFloat16(1.f), BFloat16(2.f), BFloat16(3.f), BFloat16(4.f)}),
                                   Tensor::FromVector<double>(DType::kFloat64, {1, 1, 1, 2}, {-1, 0})},
                    {}, 1, 16);
  ASSERT_TRUE(bf.ok()) << bf.status().ToString();
  EXPECT_EQ((*bf)[0].dtype(), DType::kBFloat16);
  EXPECT_THAT(ToDoubles((*bf)[0]), ElementsAre(0.5));
  auto f64 = RunNode("GridSample", {Tensor::FromVector<double>(DType::kFloat64, {1, 1, 1, 4}, {1, 2, 3, 4}), RowGrid({0.125f})},
                     {Mode("bicubic")}, 1, 16);
  ASSERT_TRUE(f64.ok()) << f64.status().ToString();
  EXPECT_EQ((*f64)[0].dtype(), DType::kFloat64);
  EXPECT_THAT(ToDoubles((*f64)[0]), Pointwise(DoubleNear(1e-12), std::vector<double>{2.703125}));
  // Integer X: computed in floating point, rounded at the end (1.5 -> 2, 3.5 -> 4);
  // nearest copies int64 values exactly.
  auto i32 = RunNode("GridSample", {Tensor::FromVector<int32_t>(DType::kInt32, {1, 1, 1, 4}, {1, 2, 3, 4}), RowGrid({-0.5f, 0.5f})},
                     {}, 1, 16);
  ASSERT_TRUE(i32.ok()) << i32.status().ToString();
  EXPECT_THAT(ToInts((*i32)[0]), ElementsAre(2, 4));
  const int64_t big = (int64_t{1} << 53) + 1;
  auto i64 = RunNode("GridSample", {Tensor::FromVector<int64_t>(DType::kInt64, {1, 1, 1, 2}, {big, 7}), RowGrid({-0.5f})},
                     {Mode("nearest")}, 1, 16);
  ASSERT_TRUE(i64.ok()) << i64.status().ToString();
  EXPECT_EQ((*i64)[0].data<int64_t>()[0], big);
}

TEST(GridSample, NonFiniteGrid) {
  // A NaN location is undefined: NaN out. An infinite one under zeros lies in
  // the padding (0); under border it clamps onto the edge pixel.
  const float inf = std::numeric_limits<float>::infinity();
  auto nan = Gs({std::numeric_limits<float>::quiet_NaN(), inf}, {});
  ASSERT_EQ(nan.size(), 2u);
  EXPECT_TRUE(std::isnan(nan[0]));
  EXPECT_EQ(nan[1], 0);
  EXPECT_THAT(Gs({inf, -inf}, {Pad("border")}), ElementsAre(4, 1));
}

TEST(GridSample, Errors) {
  // grid's last dim must be the number of spatial dims.
  auto bad = RunNode("GridSample", {Row(), F32({1, 1, 1, 3}, {0, 0, 0})}, {}, 1, 16);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'n0' (GridSample)"));
  auto batch = RunNode("GridSample", {Row(), F32({2, 1, 1, 2}, {0, 0, 0, 0})}, {}, 1, 16);
  ASSERT_FALSE(batch.ok());
  EXPECT_THAT(batch.status().message(), HasSubstr("batch"));
  // Opset 16 is 4-D only and spells the modes bilinear/bicubic.
  auto rank3 = RunNode("GridSample", {F32({1, 1, 4}, {1, 2, 3, 4}), F32({1, 1, 1}, {0})}, {}, 1, 16);
  ASSERT_FALSE(rank3.ok());
  auto name = RunNode("GridSample", {Row(), RowGrid({0})}, {Mode("linear")}, 1, 16);
  ASSERT_FALSE(name.ok());
  EXPECT_THAT(name.status().message(), HasSubstr("linear"));
}

// ------------------------------------------------------------------ RoiAlign
//
// X (1, 1, 4, 4) holds v(h, w) = 4h + w + 1, which bilinear interpolation
// reproduces exactly: a sampling point (y, x) on the map reads 4y + x + 1
// (y, x clamped to [0, 3]; points beyond -1 or 4 read 0).

Tensor Map(int64_t n = 1, int64_t c = 1) {
  std::vector<float> v;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int h = 0; h < 4; ++h)
        for (int w = 0; w < 4; ++w) v.push_back(static_cast<float>(4 * h + w + 1 + 100 * b + 1000 * ch));
  return F32({n, c, 4, 4}, v);
}
Attribute Ratio(int64_t s) { return Attribute::Int("sampling_ratio", s); }
std::vector<Attribute> OutHW(int64_t h, int64_t w, std::vector<Attribute> more) {
  more.push_back(Attribute::Int("output_height", h));
  more.push_back(Attribute::Int("output_width", w));
  return more;
}
Attribute Coord(const std::string& m) { return Attribute::String("coordinate_transformation_mode", m); }

std::vector<double> Roi(std::vector<float> box, std::vector<Attribute> attrs, int64_t opset, Shape* shape = nullptr) {
  const int64_t n = static_cast<int64_t>(box.size() / 4);
  return RunOp("RoiAlign", {Map(), F32({n, 4}, box), I64({n}, std::vector<int64_t>(static_cast<size_t>(n), 0))}, attrs, opset,
             shape);
}

TEST(RoiAlign, AvgOutputHalfPixel) {
  // Opset 10 (no pixel shift). Box [0,0,2,2], 1x1 bin of size 2, ratio 2:
  // points 0.5, 1.5 each way -> mean y = mean x = 1 -> 4 + 1 + 1 = 6.
  Shape s;
  EXPECT_THAT(Roi({0, 0, 2, 2}, {Ratio(2)}, 10, &s), Approx({6}));
  EXPECT_EQ(s, (Shape{1, 1, 1, 1}));
  // The same explicitly at opset 16.
  EXPECT_THAT(Roi({0, 0, 2, 2}, {Ratio(2), Coord("output_half_pixel")}, 16), Approx({6}));
  // spatial_scale 0.5 maps [0,0,4,4] onto the same box.
  EXPECT_THAT(Roi({0, 0, 4, 4}, {Ratio(2), Attribute::Float("spatial_scale", 0.5f)}, 10), Approx({6}));
  // Box [0,0,4,4], ratio 2: points 1, 3 -> 4*2 + 2 + 1 = 11.
  EXPECT_THAT(Roi({0, 0, 4, 4}, {Ratio(2)}, 10), Approx({11}));
  // x and y are the box's columns 0/2 and 1/3: [0,0,2,4] is 2 wide, 4 tall;
  // ratio 1: point (y=2, x=1) -> 8 + 1 + 1 = 10.
  EXPECT_THAT(Roi({0, 0, 2, 4}, {Ratio(1)}, 10), Approx({10}));
}

TEST(RoiAlign, AvgHalfPixel) {
  // Opset 16 default half_pixel: box [0,0,2,2] becomes [-0.5, 1.5]: points 0, 1
  // -> mean y = mean x = 0.5 -> 2 + 0.5 + 1 = 3.5.
  EXPECT_THAT(Roi({0, 0, 2, 2}, {Ratio(2)}, 16), Approx({3.5}));
  EXPECT_THAT(Roi({0, 0, 2, 2}, {Ratio(2), Coord("half_pixel")}, 16), Approx({3.5}));
}

TEST(RoiAlign, AdaptiveSamplingRatio) {
  // Box [0,0,4,4], 1x1, ratio 0 -> ceil(4/1) = 4 points: 0.5, 1.5, 2.5, 3.5
  // (3.5 clamps to 3) -> mean 1.875 -> 4*1.875 + 1.875 + 1 = 10.375
  // (a fixed ratio 1 or 2 gives 11, ratio 3 about 10.44).
  EXPECT_THAT(Roi({0, 0, 4, 4}, {}, 10), Approx({10.375}));
  EXPECT_THAT(Roi({0, 0, 4, 4}, {Ratio(1)}, 10), Approx({11}));
  // 2x2 output: bins of 2, ceil(4/2) = 2 points: 0.5, 1.5 (mean 1) or 2.5, 3->3
  // (mean 2.75): [4+1+1, 4+2.75+1, 11+1+1, 11+2.75+1].
  Shape s;
  EXPECT_THAT(Roi({0, 0, 4, 4}, OutHW(2, 2, {}), 10, &s), Approx({6, 7.75, 13, 14.75}));
  EXPECT_EQ(s, (Shape{1, 1, 2, 2}));
  // Height and width adapt separately: [0,0,4,2] 1x1 -> 2 rows (0.5, 1.5: mean 1),
  // 4 columns (mean 1.875): 4 + 1.875 + 1 = 6.875.
  EXPECT_THAT(Roi({0, 0, 4, 2}, {}, 10), Approx({6.875}));
}

TEST(RoiAlign, MalformedRoi) {
  // output_half_pixel forces an empty box to 1x1: [1,1,1,1] -> bin 1, ratio
  // ceil(1) = 1: point 1.5 -> 6 + 1.5 + 1 = 8.5.
  EXPECT_THAT(Roi({1, 1, 1, 1}, {}, 10), Approx({8.5}));
  // half_pixel keeps it empty: adaptive ratio ceil(0) = 0 samples -> 0; a fixed
  // ratio 2 samples the point 0.5 four times: 2 + 0.5 + 1 = 3.5.
  EXPECT_THAT(Roi({1, 1, 1, 1}, {}, 16), Approx({0}));
  EXPECT_THAT(Roi({1, 1, 1, 1}, {Ratio(2)}, 16), Approx({3.5}));
}

TEST(RoiAlign, SamplesBeyondTheMap) {
  // Points beyond -1 read 0; points in [-1, 0) clamp to 0.
  EXPECT_THAT(Roi({-4, -4, -2, -2}, {Ratio(2)}, 10), Approx({0}));
  EXPECT_THAT(Roi({-1, -1, 0, 0}, {Ratio(2)}, 10), Approx({1}));
  // [-2,0,0,2]: x = -1.5 (0) or -0.5 (-> 0); y = 0.5, 1.5: the zeros still
  // count in the mean: (0 + 0 + 3 + 7) / 4 = 2.5.
  EXPECT_THAT(Roi({-2, 0, 0, 2}, {Ratio(2)}, 10), Approx({2.5}));
}

TEST(RoiAlign, Max) {
  // Max of the sampling points' bilinear values: box [0,0,4,4], ratio 2,
  // points (1|3, 1|3) -> 6, 8, 14, 16 -> 16 (avg 11).
  EXPECT_THAT(Roi({0, 0, 4, 4}, {Ratio(2), Mode("max")}, 10), Approx({16}));
  // half_pixel: points -0.5 + 1 = 0.5 and 2.5 -> max at (2.5, 2.5): 10 + 2.5 + 1 = 13.5.
  EXPECT_THAT(Roi({0, 0, 4, 4}, {Ratio(2), Mode("max")}, 16), Approx({13.5}));
  // 2x2 bins of [0,0,4,4], adaptive ratio 2 -> each bin's last point:
  // (1.5, 1.5) -> 8.5; (1.5, 3) -> 10; (3, 1.5) -> 14.5; (3, 3) -> 16.
  EXPECT_THAT(Roi({0, 0, 4, 4}, OutHW(2, 2, {Mode("max")}), 10), Approx({8.5, 10, 14.5, 16}));
  // Negative data: the max is the least negative point, not 0.
  auto neg = RunOp("RoiAlign", {F32({1, 1, 1, 2}, {-4, -2}), F32({1, 4}, {0, 0, 2, 1}), I64({1}, {0})},
                 {Ratio(2), Mode("max")}, 10);
  // points x = 0.5 (-3), 1.5 (-> 1: -2); y = 0.25, 0.75 (-> 0).
  EXPECT_THAT(neg, Approx({-2}));
}

TEST(RoiAlign, BatchIndicesAndChannels) {
  // X (2, 2, 4, 4): plane (n, c) = v + 100n + 1000c. Two copies of [0,0,2,2]
  // (value 6 in plane v) from batch 1 then batch 0; output (roi, c).
  Shape s;
  EXPECT_THAT(RunOp("RoiAlign", {Map(2, 2), F32({2, 4}, {0, 0, 2, 2, 0, 0, 2, 2}), I64({2}, {1, 0})}, {Ratio(2)}, 10, &s),
              Approx({106, 1106, 6, 1006}));
  EXPECT_EQ(s, (Shape{2, 2, 1, 1}));
}

TEST(RoiAlign, DTypes) {
  std::vector<Float16> xh;
  std::vector<BFloat16> xb;
  std::vector<double> xd;
  for (int i = 0; i < 16; ++i) {
    xh.push_back(Float16(static_cast<float>(i + 1)));
    xb.push_back(BFloat16(static_cast<float>(i + 1)));
    xd.push_back(i + 1);
  }
  auto h = RunNode("RoiAlign", {Tensor::FromVector<Float16>(DType::kFloat16, {1, 1, 4, 4}, xh),
                                Tensor::FromVector<Float16>(DType::kFloat16, {1, 4}, {Float16(0.f), Float16(0.f), Float16(2.f), Float16(2.f)}),
                                I64({1}, {0})},
                   {Ratio(2)}, 1, 10);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ((*h)[0].dtype(), DType::kFloat16);
  EXPECT_THAT(ToDoubles((*h)[0]), ElementsAre(6));
  auto b = RunNode("RoiAlign", {Tensor::FromVector<BFloat16>(DType::kBFloat16, {1, 1, 4, 4}, xb),
                                Tensor::FromVector<BFloat16>(DType::kBFloat16, {1, 4}, {BFloat16(0.f), BFloat16(0.f), BFloat16(2.f), BFloat16(2.f)}),
                                I64({1}, {0})},
                   {Ratio(2)}, 1, 16);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)[0].dtype(), DType::kBFloat16);
  EXPECT_THAT(ToDoubles((*b)[0]), ElementsAre(3.5));
  auto d = RunNode("RoiAlign", {Tensor::FromVector<double>(DType::kFloat64, {1, 1, 4, 4}, xd),
                                Tensor::FromVector<double>(DType::kFloat64, {1, 4}, {0, 0, 4, 4}), I64({1}, {0})},
                   {}, 1, 10);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ((*d)[0].dtype(), DType::kFloat64);
  EXPECT_THAT(ToDoubles((*d)[0]), Pointwise(DoubleNear(1e-12), std::vector<double>{10.375}));
}

TEST(RoiAlign, Errors) {
  // batch_indices out of range (values are only known at run time).
  auto high = RunNode("RoiAlign", {Map(), F32({1, 4}, {0, 0, 2, 2}), I64({1}, {1})}, {}, 1, 16);
  ASSERT_FALSE(high.ok());
  EXPECT_THAT(high.status().message(), HasSubstr("'n0' (RoiAlign)"));
  EXPECT_THAT(high.status().message(), HasSubstr("batch_indices[0] = 1"));
  auto neg = RunNode("RoiAlign", {Map(), F32({2, 4}, {0, 0, 2, 2, 0, 0, 2, 2}), I64({2}, {0, -1})}, {}, 1, 16);
  ASSERT_FALSE(neg.ok());
  EXPECT_THAT(neg.status().message(), HasSubstr("batch_indices[1] = -1"));
  // Non-finite or absurd boxes are refused, not looped over.
  auto nan = RunNode("RoiAlign", {Map(), F32({1, 4}, {0, 0, std::numeric_limits<float>::quiet_NaN(), 2}), I64({1}, {0})}, {}, 1, 16);
  ASSERT_FALSE(nan.ok());
  EXPECT_THAT(nan.status().message(), HasSubstr("non-finite"));
  auto huge = RunNode("RoiAlign", {Map(), F32({1, 4}, {0, 0, 1e9f, 1e9f}), I64({1}, {0})}, {}, 1, 16);
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.status().message(), HasSubstr("sampling grid"));
  // rois must have 4 columns; batch_indices one per row.
  auto cols = RunNode("RoiAlign", {Map(), F32({1, 3}, {0, 0, 2}), I64({1}, {0})}, {}, 1, 16);
  ASSERT_FALSE(cols.ok());
  auto rows = RunNode("RoiAlign", {Map(), F32({1, 4}, {0, 0, 2, 2}), I64({2}, {0, 0})}, {}, 1, 16);
  ASSERT_FALSE(rows.ok());
  // Bad attributes.
  auto mode = RunNode("RoiAlign", {Map(), F32({1, 4}, {0, 0, 2, 2}), I64({1}, {0})}, {Mode("median")}, 1, 16);
  ASSERT_FALSE(mode.ok());
  EXPECT_THAT(mode.status().message(), HasSubstr("median"));
}

}  // namespace
}  // namespace kiln
