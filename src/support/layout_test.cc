#include "support/layout.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

Tensor Iota(const Shape& shape) {
  std::vector<float> v;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
  return Tensor::FromVector<float>(DType::kFloat32, shape, v);
}

TEST(Layout, ChannelsLastStridesAndDensity) {
  EXPECT_EQ(StridesInOrder({2, 3, 4, 5}, kChannelsLast), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_EQ(StridesInOrder({2, 3, 4, 5}, kRowMajor), (std::vector<int64_t>{60, 20, 5, 1}));
  Tensor x = Iota({2, 3, 4, 5});
  Tensor cl = ToOrder(x, kChannelsLast);
  EXPECT_TRUE(IsDenseInOrder(cl, kChannelsLast));
  EXPECT_FALSE(IsDenseInOrder(cl, kRowMajor));
  EXPECT_EQ(cl.strides(), (std::vector<int64_t>{60, 1, 15, 3}));
  // Same logical values: element [n,c,h,w] is n*60 + c*20 + h*5 + w.
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(cl.GetAsDouble(i), static_cast<double>(i));
  // Stored NHWC: memory position 1 is channel 1 of pixel (0,0), i.e. 20.
  EXPECT_EQ(cl.data<float>()[1], 20.f);
  Tensor back = ToOrder(cl, kRowMajor);
  EXPECT_TRUE(back.is_contiguous());
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(back.data<float>()[i], static_cast<float>(i));
}

TEST(Layout, SizeOneDimsMatchEveryOrder) {
  Tensor s = Iota({1, 8, 1, 1});
  EXPECT_TRUE(IsDenseInOrder(s, kRowMajor));
  EXPECT_TRUE(IsDenseInOrder(s, kChannelsLast));
}

TEST(Layout, FindOrderOfViews) {
  Tensor x = Iota({2, 3, 4, 5});
  DimOrder o;
  ASSERT_TRUE(FindOrder(x, &o));
  EXPECT_EQ(OrderName(o, 4), "NCHW");
  // An NHWC buffer transposed to NCHW without a copy is channels-last.
  Tensor nhwc = Iota({2, 4, 5, 3});
  ASSERT_TRUE(FindOrder(nhwc.Permuted({0, 3, 1, 2}), &o));
  EXPECT_EQ(OrderName(o, 4), "NHWC");
  // Another permutation: found from the strides.
  ASSERT_TRUE(FindOrder(x.Permuted({1, 0, 2, 3}), &o));
  EXPECT_EQ(OrderName(o, 4), "(1,0,2,3)");
  // A slice with gaps is in no order.
  Tensor gap = x.View({2, 3, 4, 2}, x.strides(), 0);
  EXPECT_FALSE(FindOrder(gap, &o));
}

TEST(Layout, PermutedOrderPredictsTheViewsLayout) {
  Tensor nhwc = Iota({1, 4, 5, 3});
  DimOrder o;
  ASSERT_TRUE(FindOrder(nhwc.Permuted({0, 3, 1, 2}), &o));
  EXPECT_EQ(PermutedOrder(kRowMajor, {0, 3, 1, 2}), o);
  // Channels-last NCHW transposed back to NHWC is row-major NHWC.
  EXPECT_EQ(PermutedOrder(kChannelsLast, {0, 2, 3, 1}), kRowMajor);
  Tensor cl = ToOrder(Iota({1, 3, 4, 5}), kChannelsLast);
  EXPECT_TRUE(cl.Permuted({0, 2, 3, 1}).is_contiguous());
}

TEST(Layout, AllocateInOrder) {
  auto t = AllocateInOrder(DType::kFloat32, {1, 3, 4, 5}, kChannelsLast);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->shape(), (Shape{1, 3, 4, 5}));
  EXPECT_TRUE(IsDenseInOrder(*t, kChannelsLast));
  EXPECT_FALSE(AllocateInOrder(DType::kFloat32, {3, 4}, kChannelsLast).ok());
}

// CopyToOrder fills a preallocated tensor with the same logical values:
// from row-major to channels-last, from a transposed view, and back.
TEST(Layout, CopyToOrderKeepsEveryValue) {
  const Tensor nchw = Iota({2, 3, 4, 5});
  const Tensor view = Iota({2, 4, 5, 3}).Permuted({0, 3, 1, 2});  // channels-last already: a plain copy
  const Tensor sliced = Iota({3, 2, 4, 5}).Permuted({1, 0, 2, 3});  // dense in no rank-4 order we ask for
  for (const Tensor& src : {nchw, view, sliced})
    for (const DimOrder& order : {kChannelsLast, kRowMajor}) {
      auto dst = AllocateInOrder(DType::kFloat32, src.shape(), order);
      ASSERT_TRUE(dst.ok());
      CopyToOrder(src, order, *dst);
      ASSERT_TRUE(IsDenseInOrder(*dst, order));
      const Tensor got = dst->Contiguous(), want = src.Contiguous();  // logical order
      ASSERT_EQ(got.shape(), want.shape());
      for (int64_t i = 0; i < want.numel(); ++i)
        ASSERT_EQ(got.data<float>()[i], want.data<float>()[i]) << OrderName(order, 4) << " at " << i;
    }
}

}  // namespace
}  // namespace kiln
