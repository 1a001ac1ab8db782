// Tests of the random ops: RandomUniform, RandomNormal, their *Like forms,
// Bernoulli and Multinomial. Values are random, so the tests check what the
// spec fixes (shapes, dtypes, ranges, determinism under a seed) and sample
// statistics of large draws; each tolerance is at least 6 standard errors
// of the statistic (worked in the comments), so a correct kernel passes for
// any seed while a wrong mean, scale or distribution fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ir::Attribute;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToDoubles;
using testing::ToInts;

Tensor F64(const Shape& s, const std::vector<double>& v) { return Tensor::FromVector<double>(DType::kFloat64, s, v); }

Tensor Run1(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, int64_t opset = 18) {
  auto out = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return Tensor();
  return (*out)[0];
}

struct Stats {
  double mean = 0, sd = 0, min = INFINITY, max = -INFINITY;
};
Stats Describe(const std::vector<double>& v) {
  Stats s;
  for (double x : v) {
    s.mean += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  return s;
}

Attribute ShapeAttr(std::vector<int64_t> s) { return Attribute::Ints("shape", std::move(s)); }
Attribute Seed(float s) { return Attribute::Float("seed", s); }

// ---------------------------------------------------------- RandomUniform

// Default dtype float32, default range [0, 1), the shape attribute.
TEST(RandomUniform, ShapeDTypeAndDefaultRange) {
  Tensor t = Run1("RandomUniform", {}, {ShapeAttr({2, 3, 4})}, 1);
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  for (double v : ToDoubles(t)) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
  Tensor d = Run1("RandomUniform", {}, {ShapeAttr({5}), Attribute::Int("dtype", 11)}, 1);
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_EQ(d.shape(), (Shape{5}));
  Tensor h = Run1("RandomUniform", {}, {ShapeAttr({5}), Attribute::Int("dtype", 10)}, 1);
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  for (double v : ToDoubles(h)) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
  Tensor e = Run1("RandomUniform", {}, {ShapeAttr({0, 3})}, 1);
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
}

// U[-2, 3): mean (a+b)/2 = 0.5, sd (b-a)/sqrt(12) = 1.4434. With n = 1e5:
// SE(mean) = 1.4434/316 = 0.0046 -> tol 0.03; SE(sd) ~ 0.002 -> tol 0.02.
// A quarter of the draws lie in each quarter-interval of width 1.25:
// SE = sqrt(0.25 * 0.75 / n) = 0.0014 -> tol 0.01.
TEST(RandomUniform, RangeAndMoments) {
  const int64_t n = 100000;
  Tensor t = Run1("RandomUniform", {}, {ShapeAttr({n}), Attribute::Float("low", -2), Attribute::Float("high", 3), Seed(1)}, 1);
  std::vector<double> v = ToDoubles(t);
  ASSERT_EQ(v.size(), static_cast<size_t>(n));
  Stats s = Describe(v);
  EXPECT_GE(s.min, -2.0);
  EXPECT_LT(s.max, 3.0);
  EXPECT_NEAR(s.mean, 0.5, 0.03);
  EXPECT_NEAR(s.sd, 5.0 / std::sqrt(12.0), 0.02);
  int64_t q[4] = {0, 0, 0, 0};
  for (double x : v) ++q[std::min(3, static_cast<int>((x + 2.0) / 1.25))];
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(static_cast<double>(q[k]) / n, 0.25, 0.01) << "quarter " << k;
  // The range reaches near both ends: P(no draw in [-2, -1.99)) = (1-0.002)^n ~ 0.
  EXPECT_LT(s.min, -1.99);
  EXPECT_GT(s.max, 2.99);
}

// The same seed gives the same values; another seed gives others.
TEST(RandomUniform, SeedIsDeterministic) {
  std::vector<Attribute> a = {ShapeAttr({100}), Seed(7)};
  std::vector<double> x = ToDoubles(Run1("RandomUniform", {}, a, 1));
  std::vector<double> y = ToDoubles(Run1("RandomUniform", {}, a, 1));
  EXPECT_EQ(x, y);
  std::vector<double> z = ToDoubles(Run1("RandomUniform", {}, {ShapeAttr({100}), Seed(8)}, 1));
  EXPECT_NE(x, z);
}

// Output dtype must be a floating point type; low must not exceed high.
TEST(RandomUniform, BadAttributesAreErrors) {
  EXPECT_FALSE(RunNode("RandomUniform", {}, {ShapeAttr({2}), Attribute::Int("dtype", 7)}, 1, 1).ok());
  EXPECT_FALSE(RunNode("RandomUniform", {}, {ShapeAttr({2}), Attribute::Float("low", 2), Attribute::Float("high", 1)}, 1, 1).ok());
  EXPECT_FALSE(RunNode("RandomUniform", {}, {}, 1, 1).ok());  // shape is required
}

// ---------------------------------------------------------- RandomNormal

// N(3, 2^2), n = 1e5: SE(mean) = 2/316 = 0.0063 -> tol 0.04; SE(sd) =
// 2/sqrt(2n) = 0.0045 -> tol 0.03; P(|x - 3| < 2) = 0.6827, SE 0.0015 ->
// tol 0.01; P(|x - 3| < 4) = 0.9545, SE 0.0007 -> tol 0.005.
TEST(RandomNormal, MomentsAndShape) {
  const int64_t n = 100000;
  Tensor t = Run1("RandomNormal", {}, {ShapeAttr({n}), Attribute::Float("mean", 3), Attribute::Float("scale", 2), Seed(3)}, 1);
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  std::vector<double> v = ToDoubles(t);
  Stats s = Describe(v);
  EXPECT_NEAR(s.mean, 3.0, 0.04);
  EXPECT_NEAR(s.sd, 2.0, 0.03);
  int64_t in1 = 0, in2 = 0;
  for (double x : v) {
    in1 += std::abs(x - 3) < 2;
    in2 += std::abs(x - 3) < 4;
  }
  EXPECT_NEAR(static_cast<double>(in1) / n, 0.6827, 0.01);
  EXPECT_NEAR(static_cast<double>(in2) / n, 0.9545, 0.005);
}

// Defaults mean 0, scale 1; shape and dtype attributes; seed determinism.
TEST(RandomNormal, DefaultsDTypeAndSeed) {
  Tensor t = Run1("RandomNormal", {}, {ShapeAttr({200, 100}), Attribute::Int("dtype", 11), Seed(5)}, 1);
  EXPECT_EQ(t.dtype(), DType::kFloat64);
  EXPECT_EQ(t.shape(), (Shape{200, 100}));
  // n = 2e4: SE(mean) = 0.0071 -> tol 0.05; SE(sd) = 0.005 -> tol 0.04.
  Stats s = Describe(ToDoubles(t));
  EXPECT_NEAR(s.mean, 0.0, 0.05);
  EXPECT_NEAR(s.sd, 1.0, 0.04);
  Tensor again = Run1("RandomNormal", {}, {ShapeAttr({200, 100}), Attribute::Int("dtype", 11), Seed(5)}, 1);
  EXPECT_EQ(ToDoubles(t), ToDoubles(again));
  Tensor other = Run1("RandomNormal", {}, {ShapeAttr({200, 100}), Attribute::Int("dtype", 11), Seed(6)}, 1);
  EXPECT_NE(ToDoubles(t), ToDoubles(other));
}

// ------------------------------------------------------------- *Like forms

// The shape comes from the input; the dtype from the input unless dtype
// is given (then any input dtype is fine).
TEST(RandomUniformLike, ShapeAndDType) {
  Tensor like = F64({4, 5}, std::vector<double>(20, 100.0));
  Tensor t = Run1("RandomUniformLike", {like}, {Attribute::Float("low", 10), Attribute::Float("high", 11)}, 1);
  EXPECT_EQ(t.dtype(), DType::kFloat64);
  EXPECT_EQ(t.shape(), (Shape{4, 5}));
  for (double v : ToDoubles(t)) {
    EXPECT_GE(v, 10.0);
    EXPECT_LT(v, 11.0);
  }
  Tensor f = Run1("RandomUniformLike", {I64({3}, {1, 2, 3})}, {Attribute::Int("dtype", 1)}, 1);
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(f.shape(), (Shape{3}));
  // An int input without dtype would make an int output: not allowed.
  EXPECT_FALSE(RunNode("RandomUniformLike", {I64({3}, {1, 2, 3})}, {}, 1, 1).ok());
}

// N(-1, 0.5^2) shaped like a [100, 100] input: SE(mean) = 0.005 -> tol
// 0.03; SE(sd) = 0.0035 -> tol 0.025.
TEST(RandomNormalLike, ShapeDTypeAndMoments) {
  Tensor t = Run1("RandomNormalLike", {F32({100, 100}, std::vector<float>(10000, 0.0f))},
                  {Attribute::Float("mean", -1), Attribute::Float("scale", 0.5f), Seed(2)}, 1);
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.shape(), (Shape{100, 100}));
  Stats s = Describe(ToDoubles(t));
  EXPECT_NEAR(s.mean, -1.0, 0.03);
  EXPECT_NEAR(s.sd, 0.5, 0.025);
  Tensor d = Run1("RandomNormalLike", {F32({2}, {0, 0})}, {Attribute::Int("dtype", 11)}, 1);
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_FALSE(RunNode("RandomNormalLike", {I64({2}, {0, 0})}, {}, 1, 1).ok());
}

// ---------------------------------------------------------------- Bernoulli

// Probabilities 0 and 1 are certain: the output equals p.
TEST(Bernoulli, CertainProbabilities) {
  Tensor t = Run1("Bernoulli", {F32({2, 3}, {0, 1, 1, 0, 0, 1})}, {}, 15);
  EXPECT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_THAT(ToDoubles(t), ::testing::ElementsAre(0, 1, 1, 0, 0, 1));
}

// p = 0.3, n = 1e5: only 0 and 1, mean 0.3 with SE sqrt(0.21/n) = 0.0014 -> tol 0.01.
TEST(Bernoulli, OnlyZeroOrOneWithMeanP) {
  const int64_t n = 100000;
  Tensor t = Run1("Bernoulli", {F64({n}, std::vector<double>(n, 0.3))}, {Seed(4)}, 15);
  EXPECT_EQ(t.dtype(), DType::kFloat64);
  std::vector<double> v = ToDoubles(t);
  for (double x : v) ASSERT_TRUE(x == 0.0 || x == 1.0) << x;
  EXPECT_NEAR(Describe(v).mean, 0.3, 0.01);
  // Same seed, same draws.
  EXPECT_EQ(v, ToDoubles(Run1("Bernoulli", {F64({n}, std::vector<double>(n, 0.3))}, {Seed(4)}, 15)));
}

// dtype sets the output type: int64 and bool hold the same 0/1 values.
TEST(Bernoulli, DType) {
  Tensor i = Run1("Bernoulli", {F32({4}, {1, 0, 1, 0.5f})}, {Attribute::Int("dtype", 7)}, 15);
  EXPECT_EQ(i.dtype(), DType::kInt64);
  std::vector<int64_t> iv = ToInts(i);
  EXPECT_EQ(iv[0], 1);
  EXPECT_EQ(iv[1], 0);
  EXPECT_EQ(iv[2], 1);
  EXPECT_TRUE(iv[3] == 0 || iv[3] == 1);
  Tensor b = Run1("Bernoulli", {F32({2}, {1, 0})}, {Attribute::Int("dtype", 9)}, 15);
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_THAT(ToInts(b), ::testing::ElementsAre(1, 0));
}

// ------------------------------------------------------------- Multinomial

// Row 0: log-weights log(2), log(3), log(5) (unnormalized): softmax gives
// probabilities 0.2, 0.3, 0.5. Row 1: [-1000, 0, -1000]: exp(-1000) is 0 in
// double, so class 1 is certain. n = 20000 draws per row: SE of a frequency
// <= sqrt(0.25/n) = 0.0035 -> tol 0.025.
TEST(Multinomial, ShapeRangeAndFrequencies) {
  const int64_t n = 20000;
  Tensor x = F32({2, 3}, {std::log(2.0f), std::log(3.0f), std::log(5.0f), -1000, 0, -1000});
  Tensor t = Run1("Multinomial", {x}, {Attribute::Int("sample_size", n), Seed(9)}, 7);
  EXPECT_EQ(t.dtype(), DType::kInt32);
  EXPECT_EQ(t.shape(), (Shape{2, n}));
  std::vector<int64_t> v = ToInts(t);
  int64_t c[3] = {0, 0, 0};
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_GE(v[i], 0);
    ASSERT_LT(v[i], 3);
    ++c[v[i]];
  }
  EXPECT_NEAR(static_cast<double>(c[0]) / n, 0.2, 0.025);
  EXPECT_NEAR(static_cast<double>(c[1]) / n, 0.3, 0.025);
  EXPECT_NEAR(static_cast<double>(c[2]) / n, 0.5, 0.025);
  for (int64_t i = n; i < 2 * n; ++i) ASSERT_EQ(v[i], 1) << i;
}

// Defaults: sample_size 1, int32; dtype 7 gives int64; seeds repeat.
TEST(Multinomial, DefaultsDTypeAndSeed) {
  Tensor x = F32({3, 4}, std::vector<float>(12, 0.0f));
  Tensor d = Run1("Multinomial", {x}, {}, 7);
  EXPECT_EQ(d.dtype(), DType::kInt32);
  EXPECT_EQ(d.shape(), (Shape{3, 1}));
  for (int64_t k : ToInts(d)) {
    EXPECT_GE(k, 0);
    EXPECT_LT(k, 4);
  }
  std::vector<Attribute> a = {Attribute::Int("dtype", 7), Attribute::Int("sample_size", 50), Seed(1)};
  Tensor l = Run1("Multinomial", {x}, a, 7);
  EXPECT_EQ(l.dtype(), DType::kInt64);
  EXPECT_EQ(l.shape(), (Shape{3, 50}));
  EXPECT_EQ(ToInts(l), ToInts(Run1("Multinomial", {x}, a, 7)));
  EXPECT_FALSE(RunNode("Multinomial", {x}, {Attribute::Int("dtype", 1)}, 1, 7).ok());
}

}  // namespace
}  // namespace kiln
