// Tests of the pool ops. Every expected value is worked by hand from the
// spec's window definition (comments show the windows).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using ir::Attribute;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToFloats;
using testing::ToInts;

std::vector<float> Iota(int n, float start = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

Attribute K(std::vector<int64_t> k) { return Attribute::Ints("kernel_shape", std::move(k)); }
Attribute S(std::vector<int64_t> s) { return Attribute::Ints("strides", std::move(s)); }
Attribute P(std::vector<int64_t> p) { return Attribute::Ints("pads", std::move(p)); }

std::vector<float> Run1(const std::string& op, Tensor x, std::vector<Attribute> attrs, int64_t opset = 12, Shape* shape = nullptr) {
  auto out = RunNode(op, {std::move(x)}, attrs, 1, opset);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  if (shape) *shape = (*out)[0].shape();
  return ToFloats((*out)[0]);
}

// x = 1..16 in 4x4: a window's max is its bottom-right cell.
TEST(MaxPool, DefaultStridesAndShape) {
  Shape s;
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 4, 4}, Iota(16)), {K({2, 2})}, 12, &s), ElementsAre(6, 7, 8, 10, 11, 12, 14, 15, 16));
  EXPECT_EQ(s, (Shape{1, 1, 3, 3}));
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 4, 4}, Iota(16)), {K({2, 2}), S({2, 2})}), ElementsAre(6, 8, 14, 16));
  // Old opset (1) without the later attributes.
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 4, 4}, Iota(16)), {K({2, 2}), S({2, 2})}, 1), ElementsAre(6, 8, 14, 16));
}

// x = 1..9 in 3x3, 3x3 window, pad 1: the max of each cell's neighbourhood.
TEST(MaxPool, Pads) {
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 3, 3}, Iota(9)), {K({3, 3}), P({1, 1, 1, 1})}), ElementsAre(5, 6, 6, 8, 9, 9, 8, 9, 9));
  // Padding is never the max, even when every value is negative.
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 2}, {-3, -4}), {K({2}), P({1, 1})}), ElementsAre(-3, -3, -4));
}

TEST(MaxPool, CeilMode) {
  // 4x4, 3x3 window, stride 2: floor gives 1x1, ceil 2x2 with clipped windows.
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 4, 4}, Iota(16)), {K({3, 3}), S({2, 2})}), ElementsAre(11));
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 4, 4}, Iota(16)), {K({3, 3}), S({2, 2}), Attribute::Int("ceil_mode", 1)}),
              ElementsAre(11, 12, 15, 16));
  // [1..5], pads 1, window 2, stride 2: ceil would give 4 windows but the 4th
  // starts in the end padding, so it is dropped: [pad,1] [2,3] [4,5].
  Shape s;
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 5}, Iota(5)), {K({2}), S({2}), P({1, 1}), Attribute::Int("ceil_mode", 1)}, 12, &s),
              ElementsAre(1, 3, 5));
  EXPECT_EQ(s, (Shape{1, 1, 3}));
}

// Dilation 2 on 4x4: taps (i, j), (i, j+2), (i+2, j), (i+2, j+2).
TEST(MaxPool, Dilations) {
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 4, 4}, Iota(16)), {K({2, 2}), Attribute::Ints("dilations", {2, 2})}),
              ElementsAre(11, 12, 15, 16));
}

TEST(MaxPool, AutoPad) {
  // 1-D [1..5], window 2: SAME_UPPER pads the end, SAME_LOWER the start.
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 5}, Iota(5)), {K({2}), Attribute::String("auto_pad", "SAME_UPPER")}), ElementsAre(2, 3, 4, 5, 5));
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 5}, Iota(5)), {K({2}), Attribute::String("auto_pad", "SAME_LOWER")}), ElementsAre(1, 2, 3, 4, 5));
  // Stride 2: ceil(5/2) = 3 outputs, total pad 1 at the end: [1,2] [3,4] [5,pad].
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 5}, Iota(5)), {K({2}), S({2}), Attribute::String("auto_pad", "SAME_UPPER")}), ElementsAre(2, 4, 5));
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 5}, Iota(5)), {K({2}), S({2}), Attribute::String("auto_pad", "VALID")}), ElementsAre(2, 4));
}

// x = [[1,9,2],[3,4,8],[7,5,6]] twice (two channels), window 2x2, stride 1.
// Maxima 9@(0,1), 9@(0,1), 7@(2,0), 8@(1,2); row-major index h*3+w,
// column-major h + w*3; the second channel adds 9.
TEST(MaxPool, IndicesAndStorageOrder) {
  std::vector<float> plane = {1, 9, 2, 3, 4, 8, 7, 5, 6};
  std::vector<float> x = plane;
  x.insert(x.end(), plane.begin(), plane.end());
  for (int64_t order : {0, 1}) {
    auto out = RunNode("MaxPool", {F32({1, 2, 3, 3}, x)}, {K({2, 2}), Attribute::Int("storage_order", order)}, 2, 12);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(9, 9, 7, 8, 9, 9, 7, 8));
    EXPECT_EQ((*out)[1].dtype(), DType::kInt64);
    if (order == 0) EXPECT_THAT(ToInts((*out)[1]), ElementsAre(1, 1, 6, 5, 10, 10, 15, 14));
    else EXPECT_THAT(ToInts((*out)[1]), ElementsAre(3, 3, 2, 7, 12, 12, 11, 16));
  }
  // Indices ignore the padding: [5, 1] with pad 1 at the start, window 2.
  auto padded = RunNode("MaxPool", {F32({1, 1, 2}, {5, 1})}, {K({2}), P({1, 0})}, 2, 12);
  ASSERT_TRUE(padded.ok()) << padded.status().ToString();
  EXPECT_THAT(ToInts((*padded)[1]), ElementsAre(0, 0));
}

TEST(MaxPool, Int8AndUint8) {
  auto s8 = RunNode("MaxPool", {Tensor::FromVector<int8_t>(DType::kInt8, {1, 1, 4}, {-128, -5, 3, -1})}, {K({2})}, 1, 12);
  ASSERT_TRUE(s8.ok()) << s8.status().ToString();
  EXPECT_EQ((*s8)[0].dtype(), DType::kInt8);
  EXPECT_THAT(ToInts((*s8)[0]), ElementsAre(-5, 3, 3));
  auto u8 = RunNode("MaxPool", {Tensor::FromVector<uint8_t>(DType::kUint8, {1, 1, 3}, {200, 255, 1})}, {K({2}), P({0, 1})}, 1, 12);
  ASSERT_TRUE(u8.ok()) << u8.status().ToString();
  EXPECT_THAT(ToInts((*u8)[0]), ElementsAre(255, 255, 1));
}

TEST(MaxPool, ThreeD) {
  Shape s;
  EXPECT_THAT(Run1("MaxPool", F32({1, 1, 2, 2, 3}, Iota(12)), {K({2, 2, 2})}, 12, &s), ElementsAre(11, 12));
  EXPECT_EQ(s, (Shape{1, 1, 1, 1, 2}));
}

TEST(MaxPool, Errors) {
  auto no_k = RunNode("MaxPool", {F32({1, 1, 4}, Iota(4))}, {}, 1, 12);
  ASSERT_FALSE(no_k.ok());
  EXPECT_THAT(no_k.status().message(), HasSubstr("'n0' (MaxPool)"));
  EXPECT_THAT(no_k.status().message(), HasSubstr("kernel_shape"));
  auto rank2 = RunNode("MaxPool", {F32({2, 2}, Iota(4))}, {K({2})}, 1, 12);
  ASSERT_FALSE(rank2.ok());
  EXPECT_THAT(rank2.status().message(), HasSubstr("rank"));
  auto big_pad = RunNode("MaxPool", {F32({1, 1, 4}, Iota(4))}, {K({2}), P({2, 0})}, 1, 12);
  ASSERT_FALSE(big_pad.ok());
  EXPECT_THAT(big_pad.status().message(), HasSubstr("pads"));
  auto bad_order = RunNode("MaxPool", {F32({1, 1, 4}, Iota(4))}, {K({2}), Attribute::Int("storage_order", 2)}, 1, 12);
  ASSERT_FALSE(bad_order.ok());
  EXPECT_THAT(bad_order.status().message(), HasSubstr("storage_order"));
  auto bad_len = RunNode("MaxPool", {F32({1, 1, 4, 4}, Iota(16))}, {K({2, 2}), S({1})}, 1, 12);
  ASSERT_FALSE(bad_len.ok());
  EXPECT_THAT(bad_len.status().message(), HasSubstr("strides"));
  auto bad_type = RunNode("AveragePool", {I64({1, 1, 2}, {1, 2})}, {K({2})}, 1, 12);
  ASSERT_FALSE(bad_type.ok());
  EXPECT_THAT(bad_type.status().message(), HasSubstr("dtype"));
}

TEST(AveragePool, DefaultAndStrides) {
  // 2x2 blocks of 1..16 with stride 2: (1+2+5+6)/4 = 3.5, ...
  EXPECT_THAT(Run1("AveragePool", F32({1, 1, 4, 4}, Iota(16)), {K({2, 2}), S({2, 2})}), ElementsAre(3.5, 5.5, 11.5, 13.5));
  EXPECT_THAT(Run1("AveragePool", F32({1, 1, 4}, Iota(4)), {K({2})}, 1), ElementsAre(1.5, 2.5, 3.5));
}

// x = 1..9 in 3x3, 3x3 window, pad 1. Corner (0,0) holds 1,2,4,5 (sum 12):
// 12/4 = 3 without the padding, 12/9 with it; the centre is 45/9 = 5 both ways.
TEST(AveragePool, CountIncludePad) {
  std::vector<float> ex = Run1("AveragePool", F32({1, 1, 3, 3}, Iota(9)), {K({3, 3}), P({1, 1, 1, 1})});
  ASSERT_EQ(ex.size(), 9u);
  EXPECT_FLOAT_EQ(ex[0], 3);
  EXPECT_FLOAT_EQ(ex[1], (1 + 2 + 3 + 4 + 5 + 6) / 6.0f);
  EXPECT_FLOAT_EQ(ex[4], 5);
  std::vector<float> in =
      Run1("AveragePool", F32({1, 1, 3, 3}, Iota(9)), {K({3, 3}), P({1, 1, 1, 1}), Attribute::Int("count_include_pad", 1)});
  ASSERT_EQ(in.size(), 9u);
  EXPECT_FLOAT_EQ(in[0], 12 / 9.0f);
  EXPECT_FLOAT_EQ(in[1], 21 / 9.0f);
  EXPECT_FLOAT_EQ(in[4], 5);
}

// 4x4 of 1..16, 3x3 window, stride 2, ceil: windows rows {0-2, 2-3} x cols
// {0-2, 2-3}, clipped to the input and averaged over the cells they hold.
TEST(AveragePool, CeilMode) {
  EXPECT_THAT(Run1("AveragePool", F32({1, 1, 4, 4}, Iota(16)), {K({3, 3}), S({2, 2}), Attribute::Int("ceil_mode", 1)}),
              Pointwise(FloatNear(1e-6), std::vector<float>{6, 7.5, 12, 13.5}));
}

TEST(AveragePool, AutoPad) {
  // [1..5], window 2, SAME_UPPER: the last window holds 5 and the padding.
  EXPECT_THAT(Run1("AveragePool", F32({1, 1, 5}, Iota(5)), {K({2}), Attribute::String("auto_pad", "SAME_UPPER")}),
              ElementsAre(1.5, 2.5, 3.5, 4.5, 5));
  EXPECT_THAT(Run1("AveragePool", F32({1, 1, 5}, Iota(5)),
                   {K({2}), Attribute::String("auto_pad", "SAME_UPPER"), Attribute::Int("count_include_pad", 1)}),
              ElementsAre(1.5, 2.5, 3.5, 4.5, 2.5));
  EXPECT_THAT(Run1("AveragePool", F32({1, 1, 5}, Iota(5)), {K({2}), Attribute::String("auto_pad", "SAME_LOWER")}),
              ElementsAre(1, 1.5, 2.5, 3.5, 4.5));
}

TEST(AveragePool, ThreeDAndFloat64) {
  auto out = RunNode("AveragePool", {Tensor::FromVector<double>(DType::kFloat64, {1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
                     {K({2, 2, 2})}, 1, 12);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat64);
  EXPECT_THAT(testing::ToDoubles((*out)[0]), ElementsAre(4.5));
}

TEST(GlobalPools, AverageMaxLp) {
  // Two channels: [1,2,3,4] and [-1,-2,-6,3].
  Tensor x = F32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -6, 3});
  Shape s;
  EXPECT_THAT(Run1("GlobalAveragePool", x, {}, 1, &s), ElementsAre(2.5, -1.5));
  EXPECT_EQ(s, (Shape{1, 2, 1, 1}));
  EXPECT_THAT(Run1("GlobalMaxPool", x, {}, 1), ElementsAre(4, 3));
  // p = 2: sqrt(1+4+9+16) and sqrt(1+4+36+9); p = 1: sums of |x|.
  EXPECT_THAT(Run1("GlobalLpPool", x, {}, 2), Pointwise(FloatNear(1e-5), std::vector<float>{std::sqrt(30.0f), std::sqrt(50.0f)}));
  EXPECT_THAT(Run1("GlobalLpPool", x, {Attribute::Int("p", 1)}, 2), ElementsAre(10, 12));
  // Opset 1 wrote p as a float.
  EXPECT_THAT(Run1("GlobalLpPool", x, {Attribute::Float("p", 1.0f)}, 1), ElementsAre(10, 12));
  auto rank2 = RunNode("GlobalAveragePool", {F32({2, 2}, Iota(4))}, {}, 1, 1);
  ASSERT_FALSE(rank2.ok());
  EXPECT_THAT(rank2.status().message(), HasSubstr("'n0' (GlobalAveragePool)"));
}

TEST(LpPool, PAndPads) {
  // [3, 4, 0], window 2: p=2 -> [5, 4]; p=1 -> [7, 4].
  EXPECT_THAT(Run1("LpPool", F32({1, 1, 3}, {3, 4, 0}), {K({2})}, 11), ElementsAre(5, 4));
  EXPECT_THAT(Run1("LpPool", F32({1, 1, 3}, {3, 4, 0}), {K({2}), Attribute::Int("p", 1)}, 11), ElementsAre(7, 4));
  // Pads are zeros: [pad,3] [3,4] [4,0] [0,pad].
  EXPECT_THAT(Run1("LpPool", F32({1, 1, 3}, {3, -4, 0}), {K({2}), P({1, 1})}, 11), ElementsAre(3, 5, 4, 0));
  EXPECT_THAT(Run1("LpPool", F32({1, 1, 4}, {3, 4, 6, 8}), {K({2}), S({2}), Attribute::Float("p", 2.0f)}, 1), ElementsAre(5, 10));
}

// x = [[5,6],[7,8]] with MaxPool (2x2, stride 2) indices of a 4x4 input.
TEST(MaxUnpool, DefaultAndOutputShape) {
  Tensor x = F32({1, 1, 2, 2}, {5, 6, 7, 8});
  Tensor ind = I64({1, 1, 2, 2}, {5, 7, 13, 15});
  auto out = RunNode("MaxUnpool", {x, ind}, {K({2, 2}), S({2, 2})}, 1, 11);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 1, 4, 4}));
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8));
  // output_shape 5x5: the same (row, col) positions (1,1) (1,3) (3,1) (3,3).
  auto big = RunNode("MaxUnpool", {x, ind, I64({4}, {1, 1, 5, 5})}, {K({2, 2}), S({2, 2})}, 1, 11);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ((*big)[0].shape(), (Shape{1, 1, 5, 5}));
  std::vector<float> y = ToFloats((*big)[0]);
  std::vector<float> want(25, 0);
  want[6] = 5;
  want[8] = 6;
  want[16] = 7;
  want[18] = 8;
  EXPECT_EQ(y, want);
  // Pads shrink the default shape: (2-1)*2 + 2 - 1 - 1 = 2 per axis.
  auto padded = RunNode("MaxUnpool", {F32({1, 1, 2}, {4, 9}), I64({1, 1, 2}, {0, 1})}, {K({2}), S({2}), P({1, 1})}, 1, 11);
  ASSERT_TRUE(padded.ok()) << padded.status().ToString();
  EXPECT_THAT(ToFloats((*padded)[0]), ElementsAre(4, 9));
}

TEST(MaxUnpool, Errors) {
  Tensor x = F32({1, 1, 2, 2}, {5, 6, 7, 8});
  auto oob = RunNode("MaxUnpool", {x, I64({1, 1, 2, 2}, {5, 7, 13, 16})}, {K({2, 2}), S({2, 2})}, 1, 11);
  ASSERT_FALSE(oob.ok());
  EXPECT_THAT(oob.status().message(), HasSubstr("'n0' (MaxUnpool)"));
  EXPECT_THAT(oob.status().message(), HasSubstr("16"));
  auto neg = RunNode("MaxUnpool", {x, I64({1, 1, 2, 2}, {5, 7, -1, 15})}, {K({2, 2}), S({2, 2})}, 1, 11);
  ASSERT_FALSE(neg.ok());
  auto shape = RunNode("MaxUnpool", {x, I64({1, 1, 4}, {0, 1, 2, 3})}, {K({2, 2}), S({2, 2})}, 1, 11);
  ASSERT_FALSE(shape.ok());
  auto small = RunNode("MaxUnpool", {x, I64({1, 1, 2, 2}, {5, 7, 13, 15}), I64({4}, {1, 1, 3, 3})}, {K({2, 2}), S({2, 2})}, 1, 11);
  ASSERT_FALSE(small.ok());
  EXPECT_THAT(small.status().message(), HasSubstr("output_shape"));
}

}  // namespace
}  // namespace kiln
