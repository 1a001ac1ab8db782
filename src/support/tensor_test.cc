#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/tensor.h"

namespace kiln {
namespace {

TEST(Tensor, AllocateZeroFilledContiguous) {
  auto t = Tensor::Allocate(DType::kFloat32, {2, 3, 4});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->numel(), 24);
  EXPECT_EQ(t->strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(t->is_contiguous());
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(t->data<float>()[i], 0.0f);
}

TEST(Tensor, OverflowingShapeIsAnError) {
  auto t = Tensor::Allocate(DType::kFloat32, {int64_t{1} << 40, int64_t{1} << 40});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("overflows"), std::string::npos);
  auto neg = Tensor::Allocate(DType::kFloat32, {2, -1});
  EXPECT_FALSE(neg.ok());
  auto huge = Tensor::Allocate(DType::kFloat32, {int64_t{1} << 40});
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
}

TEST(Tensor, PermutedIsAViewAndContiguousMaterializes) {
  // x[n][h][w][c] = 1000n + 100h + 10w + c, shape [1,2,2,3] (NHWC)
  Tensor x = Tensor::Zeros(DType::kFloat32, {1, 2, 2, 3});
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 2; ++w)
      for (int c = 0; c < 3; ++c) x.data<float>()[(h * 2 + w) * 3 + c] = static_cast<float>(100 * h + 10 * w + c);
  Tensor nchw = x.Permuted({0, 3, 1, 2});
  EXPECT_EQ(nchw.shape(), (Shape{1, 3, 2, 2}));
  EXPECT_FALSE(nchw.is_contiguous());
  EXPECT_EQ(nchw.storage(), x.storage());
  // element [0][c][h][w] in row-major order of the view
  EXPECT_EQ(nchw.GetAsDouble(0 * 4 + 1 * 2 + 0), 100.0);  // c=0 h=1 w=0
  EXPECT_EQ(nchw.GetAsDouble(2 * 4 + 1 * 2 + 1), 112.0);  // c=2 h=1 w=1
  Tensor dense = nchw.Contiguous();
  EXPECT_TRUE(dense.is_contiguous());
  EXPECT_NE(dense.storage(), x.storage());
  EXPECT_EQ(dense.data<float>()[2 * 4 + 1 * 2 + 1], 112.0f);
}

TEST(Tensor, ViewWithOffsetReadsTheSlice) {
  Tensor x = Tensor::FromVector<int64_t>(DType::kInt64, {2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor col = x.View({2}, {3}, 1);  // column 1
  EXPECT_EQ(col.GetAsDouble(0), 1);
  EXPECT_EQ(col.GetAsDouble(1), 4);
  Tensor c = col.Clone();
  EXPECT_EQ(c.data<int64_t>()[1], 4);
}

TEST(Tensor, StringsCloneDeep) {
  Tensor s = Tensor::FromVector<std::string>(DType::kString, {2}, {"a", "bc"});
  Tensor c = s.Clone();
  c.data<std::string>()[0] = "z";
  EXPECT_EQ(s.data<std::string>()[0], "a");
  EXPECT_EQ(c.data<std::string>()[1], "bc");
}

TEST(Half, Float16RoundTripAndRounding) {
  EXPECT_EQ(Float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(Float16(-2.0f).bits, 0xc000);
  EXPECT_EQ(Float16(65504.0f).bits, 0x7bff);                     // max finite
  EXPECT_EQ(Float16(65520.0f).bits, 0x7c00);                     // rounds to inf
  EXPECT_EQ(Float16(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(static_cast<float>(Float16(std::nanf("")))));
  EXPECT_EQ(static_cast<float>(Float16::FromBits(0x0001)), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(Float16(std::ldexp(1.0f, -24)).bits, 0x0001);
  EXPECT_EQ(Float16(std::ldexp(1.0f, -26)).bits, 0x0000);        // below half the smallest: 0
  // 1 + 2^-11 is exactly halfway between 1 and 1+2^-10: ties to even (1.0).
  EXPECT_EQ(Float16(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  EXPECT_EQ(Float16(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  for (uint32_t b = 0; b < 0x7c00; ++b) EXPECT_EQ(Float16(static_cast<float>(Float16::FromBits(static_cast<uint16_t>(b)))).bits, b);
}

TEST(Half, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(static_cast<float>(BFloat16::FromBits(0x4049)), 3.140625f);
  EXPECT_EQ(BFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);   // tie -> even
  EXPECT_EQ(BFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::nanf("")))));
}

}  // namespace
}  // namespace kiln
