// Tests of Conv, ConvTranspose, ConvInteger and QLinearConv. Small cases are
// worked by hand; larger ones compare with naive formulas written here in a
// different shape from the kernel (Conv: gather from an explicitly padded
// copy of the input; ConvTranspose: gather, where the kernel scatters).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ir::Attribute;
using testing::F32;
using testing::RunNode;
using testing::ToFloats;
using testing::ToInts;

std::vector<float> Iota(int n, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

std::vector<float> Random(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

// 2-D conv by definition: pad X into a zero buffer, then
// y[b,m,i,j] = sum_{c,ki,kj} P[b, g*Cg+c, i*sh + ki*dh, j*sw + kj*dw] * W[m,c,ki,kj] + B[m].
std::vector<float> NaiveConv2D(const std::vector<float>& x, Shape xs, const std::vector<float>& w, Shape ws,
                               const std::vector<float>& bias, int64_t group, std::array<int64_t, 2> s,
                               std::array<int64_t, 2> d, std::array<int64_t, 4> pads, Shape* out_shape) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], M = ws[0], Cg = ws[1], KH = ws[2], KW = ws[3];
  const int64_t PH = H + pads[0] + pads[2], PW = W + pads[1] + pads[3];
  std::vector<double> p(static_cast<size_t>(N * C * PH * PW), 0.0);
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t x0 = 0; x0 < W; ++x0)
          p[static_cast<size_t>(((b * C + c) * PH + h + pads[0]) * PW + x0 + pads[1])] = x[static_cast<size_t>(((b * C + c) * H + h) * W + x0)];
  const int64_t OH = (PH - ((KH - 1) * d[0] + 1)) / s[0] + 1, OW = (PW - ((KW - 1) * d[1] + 1)) / s[1] + 1;
  *out_shape = {N, M, OH, OW};
  std::vector<float> y;
  for (int64_t b = 0; b < N; ++b)
    for (int64_t m = 0; m < M; ++m) {
      const int64_t g = m / (M / group);
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(m)];
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t ki = 0; ki < KH; ++ki)
              for (int64_t kj = 0; kj < KW; ++kj)
                acc += p[static_cast<size_t>(((b * C + g * Cg + c) * PH + i * s[0] + ki * d[0]) * PW + j * s[1] + kj * d[1])] *
                       w[static_cast<size_t>(((m * Cg + c) * KH + ki) * KW + kj)];
          y.push_back(static_cast<float>(acc));
        }
    }
  return y;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// The 5x5 input 0..24 with a 3x3 kernel of ones: each output is the sum of a
// 3x3 neighbourhood, e.g. the centre 6+7+8+11+12+13+16+17+18 = 108.
TEST(Conv, NoPadding) {
  auto out = RunNode("Conv", {F32({1, 1, 5, 5}, Iota(25)), F32({1, 1, 3, 3}, std::vector<float>(9, 1))}, {}, 1, 11);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(54, 63, 72, 99, 108, 117, 144, 153, 162));
}

TEST(Conv, PaddingOne) {
  auto out = RunNode("Conv", {F32({1, 1, 5, 5}, Iota(25)), F32({1, 1, 3, 3}, std::vector<float>(9, 1))},
                     {Attribute::Ints("pads", {1, 1, 1, 1}), Attribute::Ints("kernel_shape", {3, 3})}, 1, 11);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 1, 5, 5}));
  // Corner: 0+1+5+6 = 12; top edge middle: 1+2+3+6+7+8 = 27.
  std::vector<float> y = ToFloats((*out)[0]);
  EXPECT_EQ(y[0], 12);
  EXPECT_EQ(y[2], 27);
  EXPECT_EQ(y[12], 108);
  EXPECT_EQ(y[24], 18 + 19 + 23 + 24);  // bottom-right corner
}

TEST(Conv, StridesAsymmetricPadsDilationsGroupsBias) {
  struct Case {
    Shape xs, ws;
    int64_t group;
    std::array<int64_t, 2> s, d;
    std::array<int64_t, 4> pads;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{1, 1, 7, 5}, {1, 1, 3, 3}, 1, {2, 2}, {1, 1}, {1, 0, 1, 0}, false},
      {{2, 3, 6, 6}, {4, 3, 3, 2}, 1, {1, 2}, {1, 1}, {0, 1, 2, 0}, true},
      {{1, 2, 9, 8}, {3, 2, 3, 3}, 1, {1, 1}, {2, 3}, {1, 1, 1, 1}, true},
      {{1, 4, 5, 5}, {4, 1, 3, 3}, 4, {1, 1}, {1, 1}, {1, 1, 1, 1}, true},   // depthwise
      {{1, 4, 6, 5}, {6, 2, 2, 2}, 2, {2, 1}, {1, 2}, {0, 0, 1, 1}, false},  // groups
  };
  unsigned seed = 1;
  for (const Case& c : cases) {
    std::vector<float> x = Random(static_cast<size_t>(c.xs[0] * c.xs[1] * c.xs[2] * c.xs[3]), seed++);
    std::vector<float> w = Random(static_cast<size_t>(c.ws[0] * c.ws[1] * c.ws[2] * c.ws[3]), seed++);
    std::vector<float> b = c.bias ? Random(static_cast<size_t>(c.ws[0]), seed++) : std::vector<float>{};
    Shape want_shape;
    std::vector<float> want = NaiveConv2D(x, c.xs, w, c.ws, b, c.group, c.s, c.d, c.pads, &want_shape);
    std::vector<Tensor> in = {F32(c.xs, x), F32(c.ws, w)};
    if (c.bias) in.push_back(F32({c.ws[0]}, b));
    auto out = RunNode("Conv", in,
                       {Attribute::Int("group", c.group), Attribute::Ints("strides", {c.s[0], c.s[1]}),
                        Attribute::Ints("dilations", {c.d[0], c.d[1]}),
                        Attribute::Ints("pads", {c.pads[0], c.pads[1], c.pads[2], c.pads[3]})},
                       1, 11);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].shape(), want_shape);
    ExpectNear(ToFloats((*out)[0]), want);
  }
}

// 1-D SAME padding, input 0..4, kernel [1,1] (total pad 1), stride 1:
// SAME_UPPER pads the end: [0+1, 1+2, 2+3, 3+4, 4+0]; SAME_LOWER the start.
TEST(Conv, AutoPadSame1D) {
  Tensor x = F32({1, 1, 5}, Iota(5)), w = F32({1, 1, 2}, {1, 1});
  auto up = RunNode("Conv", {x, w}, {Attribute::String("auto_pad", "SAME_UPPER")}, 1, 11);
  ASSERT_TRUE(up.ok()) << up.status().ToString();
  EXPECT_THAT(ToFloats((*up)[0]), ElementsAre(1, 3, 5, 7, 4));
  auto lo = RunNode("Conv", {x, w}, {Attribute::String("auto_pad", "SAME_LOWER")}, 1, 11);
  ASSERT_TRUE(lo.ok()) << lo.status().ToString();
  EXPECT_THAT(ToFloats((*lo)[0]), ElementsAre(0, 1, 3, 5, 7));
  // Stride 2: out = ceil(5/2) = 3, total pad = (3-1)*2 + 2 - 5 = 1.
  auto s2 = RunNode("Conv", {x, w}, {Attribute::String("auto_pad", "SAME_UPPER"), Attribute::Ints("strides", {2})}, 1, 11);
  ASSERT_TRUE(s2.ok()) << s2.status().ToString();
  EXPECT_THAT(ToFloats((*s2)[0]), ElementsAre(1, 5, 4));
  // VALID ignores pads: 5 - 2 + 1 = 4 outputs.
  auto v = RunNode("Conv", {x, w}, {Attribute::String("auto_pad", "VALID"), Attribute::Ints("pads", {3, 3})}, 1, 11);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_THAT(ToFloats((*v)[0]), ElementsAre(1, 3, 5, 7));
}

// 3-D: a 3x3x3 input of ones and a 2x2x2 kernel of ones with pad 1 at the
// start of depth only: cells whose window leaves the input see 4 ones.
TEST(Conv, ThreeD) {
  auto out = RunNode("Conv", {F32({1, 1, 3, 3, 3}, std::vector<float>(27, 1)), F32({1, 1, 2, 2, 2}, std::vector<float>(8, 1)),
                              F32({1}, {0.5f})},
                     {Attribute::Ints("pads", {1, 0, 0, 0, 0, 0})}, 1, 11);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 1, 3, 2, 2}));
  std::vector<float> y = ToFloats((*out)[0]);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(y[i], 4.5f);
  for (size_t i = 4; i < 12; ++i) EXPECT_EQ(y[i], 8.5f);
}

TEST(Conv, Float64AndOldOpset) {
  Tensor x = Tensor::FromVector<double>(DType::kFloat64, {1, 1, 3}, {1, 2, 3});
  Tensor w = Tensor::FromVector<double>(DType::kFloat64, {1, 1, 2}, {10, 1});
  auto out = RunNode("Conv", {x, w}, {}, 1, 6);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat64);
  EXPECT_THAT(testing::ToDoubles((*out)[0]), ElementsAre(12, 23));
}

TEST(Conv, Errors) {
  Tensor x = F32({1, 2, 4, 4}, std::vector<float>(32, 1));
  auto bad_c = RunNode("Conv", {x, F32({1, 3, 3, 3}, std::vector<float>(27, 1))}, {}, 1, 11);
  ASSERT_FALSE(bad_c.ok());
  EXPECT_THAT(bad_c.status().message(), HasSubstr("'n0' (Conv)"));
  EXPECT_THAT(bad_c.status().message(), HasSubstr("channels"));
  auto bad_k = RunNode("Conv", {x, F32({1, 2, 3, 3}, std::vector<float>(18, 1))}, {Attribute::Ints("kernel_shape", {2, 2})}, 1, 11);
  ASSERT_FALSE(bad_k.ok());
  EXPECT_THAT(bad_k.status().message(), HasSubstr("kernel_shape"));
  auto too_big = RunNode("Conv", {x, F32({1, 2, 5, 5}, std::vector<float>(50, 1))}, {}, 1, 11);
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.status().message(), HasSubstr("smaller than the dilated kernel"));
  auto rank2 = RunNode("Conv", {F32({2, 2}, {1, 2, 3, 4}), F32({1, 2}, {1, 1})}, {}, 1, 11);
  ASSERT_FALSE(rank2.ok());
  EXPECT_THAT(rank2.status().message(), HasSubstr("rank"));
  auto neg_pad = RunNode("Conv", {x, F32({1, 2, 3, 3}, std::vector<float>(18, 1))}, {Attribute::Ints("pads", {-1, 0, 0, 0})}, 1, 11);
  ASSERT_FALSE(neg_pad.ok());
  EXPECT_THAT(neg_pad.status().message(), HasSubstr("pads"));
  auto bad_bias = RunNode("Conv", {x, F32({1, 2, 3, 3}, std::vector<float>(18, 1)), F32({2}, {1, 2})}, {}, 1, 11);
  ASSERT_FALSE(bad_bias.ok());
  EXPECT_THAT(bad_bias.status().message(), HasSubstr("bias"));
  auto bad_ap = RunNode("Conv", {x, F32({1, 2, 3, 3}, std::vector<float>(18, 1))}, {Attribute::String("auto_pad", "SAME")}, 1, 11);
  ASSERT_FALSE(bad_ap.ok());
  EXPECT_THAT(bad_ap.status().message(), HasSubstr("auto_pad"));
}

// ConvTranspose by gathering: y[o] = sum over (i, k) with i*s + k*d - pad_begin = o.
std::vector<float> NaiveConvTranspose1D(const std::vector<float>& x, int64_t C, int64_t L, const std::vector<float>& w, int64_t Mg,
                                        int64_t K, int64_t group, int64_t s, int64_t d, int64_t pb, int64_t out_len) {
  const int64_t Cg = C / group, M = Mg * group;
  std::vector<float> y;
  for (int64_t m = 0; m < M; ++m) {
    const int64_t g = m / Mg, mi = m % Mg;
    for (int64_t o = 0; o < out_len; ++o) {
      double acc = 0;
      for (int64_t c = g * Cg; c < (g + 1) * Cg; ++c)
        for (int64_t k = 0; k < K; ++k) {
          const int64_t t = o + pb - k * d;
          if (t < 0 || t % s != 0 || t / s >= L) continue;
          acc += x[static_cast<size_t>(c * L + t / s)] * w[static_cast<size_t>((c * Mg + mi) * K + k)];
        }
      y.push_back(static_cast<float>(acc));
    }
  }
  return y;
}

// The spec's example: x = [0,1,2], w = ones(3) for two output channels.
TEST(ConvTranspose, SpecExample1D) {
  auto out = RunNode("ConvTranspose", {F32({1, 1, 3}, {0, 1, 2}), F32({1, 2, 3}, std::vector<float>(6, 1))}, {}, 1, 11);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 2, 5}));
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(0, 1, 3, 3, 2, 0, 1, 3, 3, 2));
}

TEST(ConvTranspose, StridesPadsDilationsGroupsOutputPadding) {
  struct Case {
    int64_t C, L, Mg, K, group, s, d, pb, pe, op;
  };
  const std::vector<Case> cases = {
      {1, 4, 1, 3, 1, 2, 1, 0, 0, 0}, {2, 5, 3, 3, 1, 3, 1, 1, 2, 0}, {2, 4, 2, 2, 1, 1, 2, 0, 1, 0},
      {4, 3, 1, 3, 2, 2, 1, 1, 1, 1}, {3, 3, 2, 2, 3, 2, 2, 0, 0, 1},
  };
  unsigned seed = 7;
  for (const Case& c : cases) {
    std::vector<float> x = Random(static_cast<size_t>(c.C * c.L), seed++);
    std::vector<float> w = Random(static_cast<size_t>(c.C * c.Mg * c.K), seed++);
    const int64_t out_len = c.s * (c.L - 1) + c.op + (c.K - 1) * c.d + 1 - c.pb - c.pe;
    auto out = RunNode("ConvTranspose", {F32({1, c.C, c.L}, x), F32({c.C, c.Mg, c.K}, w)},
                       {Attribute::Int("group", c.group), Attribute::Ints("strides", {c.s}), Attribute::Ints("dilations", {c.d}),
                        Attribute::Ints("pads", {c.pb, c.pe}), Attribute::Ints("output_padding", {c.op})},
                       1, 11);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].shape(), (Shape{1, c.Mg * c.group, out_len}));
    ExpectNear(ToFloats((*out)[0]), NaiveConvTranspose1D(x, c.C, c.L, w, c.Mg, c.K, c.group, c.s, c.d, c.pb, out_len));
  }
}

// Full output of x=[0,1,2] (stride 2, kernel ones(3)) is [0,0,1,1,3,2,2].
TEST(ConvTranspose, OutputShapeAndAutoPad) {
  Tensor x = F32({1, 1, 3}, {0, 1, 2}), w = F32({1, 1, 3}, {1, 1, 1});
  // SAME_UPPER: out = 3*2 = 6, total pad 1 cropped at the end (opset 11 text: begin = total/2).
  auto same = RunNode("ConvTranspose", {x, w}, {Attribute::String("auto_pad", "SAME_UPPER"), Attribute::Ints("strides", {2})}, 1, 11);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_THAT(ToFloats((*same)[0]), ElementsAre(0, 0, 1, 1, 3, 2));
  // output_shape 5: total pad 2, one cropped on each side.
  auto os = RunNode("ConvTranspose", {x, w}, {Attribute::Ints("output_shape", {5}), Attribute::Ints("strides", {2})}, 1, 11);
  ASSERT_TRUE(os.ok()) << os.status().ToString();
  EXPECT_THAT(ToFloats((*os)[0]), ElementsAre(0, 1, 1, 3, 2));
  // output_shape 8 (larger than the full 7): the extra cell is a zero at the end.
  auto big = RunNode("ConvTranspose", {x, w}, {Attribute::Ints("output_shape", {8}), Attribute::Ints("strides", {2})}, 1, 11);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_THAT(ToFloats((*big)[0]), ElementsAre(0, 0, 1, 1, 3, 2, 2, 0));
  // With a bias.
  auto b = RunNode("ConvTranspose", {x, w, F32({1}, {10})}, {Attribute::Ints("strides", {2})}, 1, 11);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_THAT(ToFloats((*b)[0]), ElementsAre(10, 10, 11, 11, 13, 12, 12));
}

// 2-D: each input cell stamps its value times a 2x2 block of ones, stride 2:
// the output is the input upsampled by 2 (nearest).
TEST(ConvTranspose, TwoDStampsBlocks) {
  auto out = RunNode("ConvTranspose", {F32({1, 1, 2, 2}, {1, 2, 3, 4}), F32({1, 1, 2, 2}, {1, 1, 1, 1})},
                     {Attribute::Ints("strides", {2, 2})}, 1, 11);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 1, 4, 4}));
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4));
}

TEST(ConvTranspose, Errors) {
  auto bad = RunNode("ConvTranspose", {F32({1, 2, 3}, std::vector<float>(6, 1)), F32({3, 1, 2}, std::vector<float>(6, 1))}, {}, 1, 11);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'n0' (ConvTranspose)"));
  auto crop = RunNode("ConvTranspose", {F32({1, 1, 1}, {1}), F32({1, 1, 2}, {1, 1})}, {Attribute::Ints("pads", {2, 2})}, 1, 11);
  ASSERT_FALSE(crop.ok());
  EXPECT_THAT(crop.status().message(), HasSubstr("crop"));
  auto op = RunNode("ConvTranspose", {F32({1, 1, 2}, {1, 1}), F32({1, 1, 2}, {1, 1})}, {Attribute::Ints("output_padding", {1})}, 1, 11);
  ASSERT_FALSE(op.ok());
  EXPECT_THAT(op.status().message(), HasSubstr("output_padding"));
}

Tensor U8(const Shape& s, const std::vector<uint8_t>& v) { return Tensor::FromVector<uint8_t>(DType::kUint8, s, v); }
Tensor I8(const Shape& s, const std::vector<int8_t>& v) { return Tensor::FromVector<int8_t>(DType::kInt8, s, v); }

// x - x_zero_point = 1..9 in a 3x3; 2x2 kernel of ones and pad 1: the sums
// of 2x2 blocks of the zero-padded 1..9 (the padding is the zero point).
TEST(ConvInteger, PaddingUsesZeroPoint) {
  std::vector<uint8_t> xs = {2, 3, 4, 5, 6, 7, 8, 9, 10};
  auto out = RunNode("ConvInteger", {U8({1, 1, 3, 3}, xs), U8({1, 1, 2, 2}, {1, 1, 1, 1}), U8({}, {1})},
                     {Attribute::Ints("pads", {1, 1, 1, 1})}, 1, 10);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DType::kInt32);
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9));
}

// Per-output-channel w_zero_point, int8 weights: channel 0 w - 2 = [-1, 1],
// channel 1 w - (-1) = [1, 2]; x - 0 = [1, 2, 3].
TEST(ConvInteger, PerChannelWeightZeroPoint) {
  auto out = RunNode("ConvInteger", {U8({1, 1, 3}, {1, 2, 3}), I8({2, 1, 2}, {1, 3, 0, 1}), Tensor(), I8({2}, {2, -1})}, {}, 1, 10);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(-1 + 2, -2 + 3, 1 + 4, 2 + 6));
}

// acc = (x - 1) * (w - 0) summed, real = acc * 0.5 * 1 / 1 -> round half to even.
TEST(QLinearConv, RoundHalfEvenAndSaturate) {
  // 1x1 kernel of weight 1: acc = x - 1 = [5, 7, 1, 3, 254].
  Tensor x = U8({1, 1, 5}, {6, 8, 2, 4, 255});
  Tensor w = U8({1, 1, 1}, {1});
  auto out = RunNode("QLinearConv",
                     {x, F32({}, {0.5f}), U8({}, {1}), w, F32({}, {1.0f}), U8({}, {0}), F32({}, {1.0f}), U8({}, {10})}, {}, 1, 10);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DType::kUint8);
  // 2.5 -> 2, 3.5 -> 4, 0.5 -> 0, 1.5 -> 2, 127 -> 127, each + 10.
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(12, 14, 10, 12, 137));
  // int8 output saturates at 127 / -128; bias shifts acc.
  auto s8 = RunNode("QLinearConv",
                    {x, F32({}, {1.0f}), U8({}, {1}), w, F32({}, {2.0f}), U8({}, {0}), F32({}, {1.0f}), I8({}, {0}),
                     Tensor::FromVector<int32_t>(DType::kInt32, {1}, {-4})},
                    {}, 1, 10);
  ASSERT_TRUE(s8.ok()) << s8.status().ToString();
  EXPECT_EQ((*s8)[0].dtype(), DType::kInt8);
  // (acc - 4) * 2: [2, 6, -6, -2, 500 -> 127].
  EXPECT_THAT(ToInts((*s8)[0]), ElementsAre(2, 6, -6, -2, 127));
}

TEST(QLinearConv, PerChannelScales) {
  // Two output channels, w_scale [1, 0.25], x = [4] - 0, w = [2, 8]: 8*1, 32*0.25.
  auto out = RunNode("QLinearConv",
                     {U8({1, 1, 1}, {4}), F32({}, {1.0f}), U8({}, {0}), U8({2, 1, 1}, {2, 8}), F32({2}, {1.0f, 0.25f}),
                      U8({2}, {0, 0}), F32({}, {1.0f}), U8({}, {0})},
                     {}, 1, 10);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(8, 8));
  auto bad = RunNode("QLinearConv",
                     {U8({1, 1, 1}, {4}), F32({}, {1.0f}), U8({}, {0}), U8({2, 1, 1}, {2, 8}), F32({3}, {1, 1, 1}), U8({}, {0}),
                      F32({}, {1.0f}), U8({}, {0})},
                     {}, 1, 10);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("w_scale"));
}

}  // namespace
}  // namespace kiln
