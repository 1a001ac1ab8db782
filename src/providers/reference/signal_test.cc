// Tests of the signal kernels: small transforms worked out by hand (or by
// the DFT sum written independently with std::complex), and the windows'
// closed forms evaluated at a few points.
#include <complex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToDoubles;

MATCHER_P(Near, tol, "") { return std::abs(std::get<0>(arg) - std::get<1>(arg)) <= tol; }

// Interleaved (re, im) of a complex vector.
std::vector<double> Interleave(const std::vector<std::complex<double>>& v) {
  std::vector<double> out;
  for (auto c : v) { out.push_back(c.real()); out.push_back(c.imag()); }
  return out;
}

TEST(Dft, RealSignalAndOnesided) {
  Tensor x = F32({1, 4, 1}, {1, 2, 3, 4});
  auto r = RunNode("DFT", {x}, {}, 1, 17);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 4, 2}));
  // X = [10, -2+2i, -2, -2-2i]
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-5), std::vector<double>{10, 0, -2, 2, -2, 0, -2, -2}));
  auto o = RunNode("DFT", {x}, {ir::Attribute::Int("onesided", 1)}, 1, 17);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ((*o)[0].shape(), (Shape{1, 3, 2}));
  EXPECT_THAT(ToDoubles((*o)[0]), Pointwise(Near(1e-5), std::vector<double>{10, 0, -2, 2, -2, 0}));
}

TEST(Dft, DftLengthTruncatesAndPads) {
  Tensor x = F32({1, 4, 1}, {1, 2, 3, 4});
  auto t = RunNode("DFT", {x, I64({}, {2})}, {}, 1, 17);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_THAT(ToDoubles((*t)[0]), Pointwise(Near(1e-5), std::vector<double>{3, 0, -1, 0}));
  auto p = RunNode("DFT", {x, I64({}, {6})}, {}, 1, 17);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<std::complex<double>> want;
  for (int k = 0; k < 6; ++k) {
    std::complex<double> s = 0;
    for (int n = 0; n < 4; ++n) s += static_cast<double>(n + 1) * std::polar(1.0, -2 * M_PI * k * n / 6.0);
    want.push_back(s);
  }
  EXPECT_EQ((*p)[0].shape(), (Shape{1, 6, 2}));
  EXPECT_THAT(ToDoubles((*p)[0]), Pointwise(Near(1e-5), Interleave(want)));
}

TEST(Dft, InverseOfComplexInput) {
  Tensor X = F32({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2});
  auto r = RunNode("DFT", {X}, {ir::Attribute::Int("inverse", 1)}, 1, 17);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-5), std::vector<double>{1, 0, 2, 0, 3, 0, 4, 0}));
}

TEST(Dft, OtherAxis) {
  // rows [1,2] and [3,4]; transform along axis 2 (within each row).
  Tensor x = F32({1, 2, 2, 1}, {1, 2, 3, 4});
  auto r = RunNode("DFT", {x}, {ir::Attribute::Int("axis", 2)}, 1, 17);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-5), std::vector<double>{3, 0, -1, 0, 7, 0, -1, 0}));
  // Along axis 1 (down the columns).
  auto c = RunNode("DFT", {x}, {ir::Attribute::Int("axis", 1)}, 1, 17);
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(ToDoubles((*c)[0]), Pointwise(Near(1e-5), std::vector<double>{4, 0, 6, 0, -2, 0, -2, 0}));
}

TEST(Dft, Errors) {
  auto bad_last = RunNode("DFT", {F32({1, 4, 3}, {})}, {}, 1, 17);
  ASSERT_FALSE(bad_last.ok());
  EXPECT_THAT(bad_last.status().message(), HasSubstr("node 'n0'"));
  auto bad_axis = RunNode("DFT", {F32({1, 4, 1}, {})}, {ir::Attribute::Int("axis", 2)}, 1, 17);
  ASSERT_FALSE(bad_axis.ok());
  EXPECT_THAT(bad_axis.status().message(), HasSubstr("axis"));
}

TEST(Stft, FramesWithoutWindow) {
  Tensor s = F32({1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto r = RunNode("STFT", {s, I64({}, {2}), Tensor(), I64({}, {4})}, {}, 1, 17);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 3, 3, 2}));
  // Frames [0..3], [2..5], [4..7]: X0 = sum, X1 = -2+2i, X2 = -2.
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-4), std::vector<double>{6, 0, -2, 2, -2, 0, 14, 0, -2, 2, -2, 0,
                                                                            22, 0, -2, 2, -2, 0}));
  auto two = RunNode("STFT", {s, I64({}, {2}), Tensor(), I64({}, {4})}, {ir::Attribute::Int("onesided", 0)}, 1, 17);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ((*two)[0].shape(), (Shape{1, 3, 4, 2}));
}

TEST(Stft, Window) {
  Tensor s = F32({1, 8, 1}, {0, 1, 2, 3, 4, 5, 6, 7});
  auto r = RunNode("STFT", {s, I64({}, {4}), F32({4}, {0, 1, 1, 0})}, {}, 1, 17);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 2, 3, 2}));
  // Frame 0 windowed: [0,1,2,0] -> 3, -2-i, 1. Frame 1: [0,5,6,0] -> 11, -6-5i, 1.
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-4), std::vector<double>{3, 0, -2, -1, 1, 0, 11, 0, -6, -5, 1, 0}));
  auto bad = RunNode("STFT", {s, I64({}, {4}), F32({4}, {1, 1, 1, 1}), I64({}, {3})}, {}, 1, 17);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("node 'n0'"));
}

TEST(Windows, HannPeriodicAndSymmetric) {
  auto p = RunNode("HannWindow", {I64({}, {4})}, {}, 1, 17);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)[0].dtype(), DType::kFloat32);
  EXPECT_THAT(ToDoubles((*p)[0]), Pointwise(Near(1e-6), std::vector<double>{0, 0.5, 1, 0.5}));
  auto s = RunNode("HannWindow", {I64({}, {4})}, {ir::Attribute::Int("periodic", 0)}, 1, 17);
  ASSERT_TRUE(s.ok());
  EXPECT_THAT(ToDoubles((*s)[0]), Pointwise(Near(1e-6), std::vector<double>{0, 0.75, 0.75, 0}));
}

TEST(Windows, HammingAndBlackmanWithDType) {
  const double a = 25.0 / 46.0, b = 21.0 / 46.0;
  auto h = RunNode("HammingWindow", {I64({}, {4})}, {ir::Attribute::Int("output_datatype", 11)}, 1, 17);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ((*h)[0].dtype(), DType::kFloat64);
  EXPECT_THAT(ToDoubles((*h)[0]), Pointwise(Near(1e-12), std::vector<double>{a - b, a, a + b, a}));
  auto k = RunNode("BlackmanWindow", {I64({}, {4})}, {}, 1, 17);
  ASSERT_TRUE(k.ok());
  EXPECT_THAT(ToDoubles((*k)[0]), Pointwise(Near(1e-6), std::vector<double>{0, 0.34, 1, 0.34}));
  // Symmetric Blackman of 3: N' = 2, middle point is cos(pi)=-1 -> 0.42 + 0.5 + 0.08.
  auto k3 = RunNode("BlackmanWindow", {I64({}, {3})}, {ir::Attribute::Int("periodic", 0)}, 1, 17);
  ASSERT_TRUE(k3.ok());
  EXPECT_THAT(ToDoubles((*k3)[0]), Pointwise(Near(1e-6), std::vector<double>{0, 1, 0}));
  auto neg = RunNode("HannWindow", {I64({}, {-1})}, {}, 1, 17);
  ASSERT_FALSE(neg.ok());
  EXPECT_THAT(neg.status().message(), HasSubstr("node 'n0'"));
}

TEST(MelWeightMatrix, SpecExample) {
  // The spec's example: 8 mel bins, 16-point DFT, 8192 Hz, edges 0..4096 Hz.
  Tensor i32 = Tensor::FromVector<int32_t>(DType::kInt32, {}, {8});
  auto r = RunNode("MelWeightMatrix",
                   {i32, Tensor::FromVector<int32_t>(DType::kInt32, {}, {16}), Tensor::FromVector<int32_t>(DType::kInt32, {}, {8192}),
                    F32({}, {0}), F32({}, {4096})},
                   {}, 1, 17);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].shape(), (Shape{9, 8}));
  std::vector<double> want(72, 0.0);
  // Rows 0-5 per the spec: (0,0) (0,1) (1,2) (1,3) (2,4) (3,5) (4,6) (5,7) are 1.
  for (auto [row, col] : std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}})
    want[static_cast<size_t>(row * 8 + col)] = 1.0;
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-6), want));
}

}  // namespace
}  // namespace kiln
