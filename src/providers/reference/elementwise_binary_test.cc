// Unit tests of the broadcasting elementwise ops on the reference provider:
// Add/Sub/Mul/Div, Pow, Mod, BitShift, And/Or/Xor, the comparisons, PRelu,
// Where and the variadic Sum/Mean/Max/Min. Every expected value is worked by
// hand from the ONNX spec (numpy semantics where the spec defers to numpy) in
// the comment next to it; none is kiln's own output.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ir::Attribute;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToDoubles;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr bool T = true;
constexpr bool F = false;

Tensor Eval(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs = {},
            int64_t opset = 18) {
  auto r = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().ToString();
  return r.ok() ? (*r)[0] : Tensor();
}

std::string EvalError(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs = {},
                      int64_t opset = 18) {
  auto r = RunNode(op, in, attrs, 1, opset);
  EXPECT_FALSE(r.ok()) << op << " should have failed";
  return r.ok() ? "" : r.status().ToString();
}

template <typename T>
Tensor Make(DType t, const Shape& s, const std::vector<T>& v) { return Tensor::FromVector<T>(t, s, v); }
Tensor Bools(const Shape& s, const std::vector<bool>& v) {
  Tensor t = Tensor::Zeros(DType::kBool, s);
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}
Tensor I32(const Shape& s, const std::vector<int32_t>& v) { return Make<int32_t>(DType::kInt32, s, v); }

// The elements of a contiguous output, read in their own type (exact for
// int64/uint64, unlike the double-based ToInts).
template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> v;
  if (!t.defined()) return v;
  Tensor c = t.Contiguous();
  for (int64_t i = 0; i < c.numel(); ++i) v.push_back(c.data<T>()[i]);
  return v;
}
std::vector<bool> BoolValues(const Tensor& t) {
  std::vector<bool> v;
  if (!t.defined()) return v;
  EXPECT_EQ(t.dtype(), DType::kBool);
  for (bool b : Values<bool>(t)) v.push_back(b);
  return v;
}

void ExpectNear(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  std::vector<double> got = ToDoubles(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << "index " << i << " got " << got[i];
    else if (std::isinf(want[i])) EXPECT_EQ(got[i], want[i]) << "index " << i;
    else EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << "index " << i;
  }
}

const Shape kScalar = {};

// ---------------------------------------------------------------------------
// Add, Sub, Mul, Div

// A [2,3] = [[1,2,3],[4,5,6]] with B [3] = [10,20,30]: B is stretched over
// rows (numpy: B's trailing dim aligns with A's).
TEST(ElementwiseArith, FloatTrailingBroadcast) {
  Tensor a = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = F32({3}, {10, 20, 30});
  Tensor add = Eval("Add", {a, b});
  EXPECT_EQ(add.shape(), (Shape{2, 3}));
  ExpectNear(add, {11, 22, 33, 14, 25, 36});
  ExpectNear(Eval("Sub", {a, b}), {-9, -18, -27, -6, -15, -24});
  ExpectNear(Eval("Mul", {a, b}), {10, 40, 90, 40, 100, 180});
  // 1/10, 2/20, 3/30, 4/10, 5/20, 6/30.
  ExpectNear(Eval("Div", {a, b}), {0.1, 0.1, 0.1, 0.4, 0.25, 0.2});
  // B - A: [10-1, 20-2, 30-3, 10-4, 20-5, 30-6].
  ExpectNear(Eval("Sub", {b, a}), {9, 18, 27, 6, 15, 24});
}

// [2,1] with [1,3]: both stretch, out[i][j] = a[i] op b[j], shape [2,3].
TEST(ElementwiseArith, BothSidesBroadcast) {
  Tensor a = F32({2, 1}, {1, 2});
  Tensor b = F32({1, 3}, {10, 20, 30});
  Tensor add = Eval("Add", {a, b});
  EXPECT_EQ(add.shape(), (Shape{2, 3}));
  ExpectNear(add, {11, 21, 31, 12, 22, 32});
  Tensor sub = Eval("Sub", {b, a});  // b[j] - a[i]
  EXPECT_EQ(sub.shape(), (Shape{2, 3}));
  ExpectNear(sub, {9, 19, 29, 8, 18, 28});
  // Rank extension: [2,1,3] with [4,1] -> [2,4,3]; out[i][j][k] = a[i][k] + b[j].
  Tensor a3 = F32({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b2 = F32({4, 1}, {0, 10, 20, 30});
  Tensor r = Eval("Add", {a3, b2});
  EXPECT_EQ(r.shape(), (Shape{2, 4, 3}));
  ExpectNear(r, {1, 2, 3, 11, 12, 13, 21, 22, 23, 31, 32, 33, 4, 5, 6, 14, 15, 16, 24, 25, 26, 34, 35, 36});
}

TEST(ElementwiseArith, ScalarRankZeroAndEmpty) {
  // [1] broadcasts to anything: [1,2,3,4] * -2.
  Tensor m = Eval("Mul", {F32({2, 2}, {1, 2, 3, 4}), F32({1}, {-2})});
  EXPECT_EQ(m.shape(), (Shape{2, 2}));
  ExpectNear(m, {-2, -4, -6, -8});
  // Rank 0 on the left: 8 / [1,2,4] = [8,4,2], shape [3].
  Tensor d = Eval("Div", {F32(kScalar, {8}), F32({3}, {1, 2, 4})});
  EXPECT_EQ(d.shape(), (Shape{3}));
  ExpectNear(d, {8, 4, 2});
  // Rank 0 with rank 0 stays rank 0: 1.5 + 2.25 = 3.75.
  Tensor s = Eval("Add", {F32(kScalar, {1.5f}), F32(kScalar, {2.25f})});
  EXPECT_EQ(s.shape(), Shape{});
  ExpectNear(s, {3.75});
  // A zero-sized dim broadcasts like any other: [0,3] + [1,3] -> [0,3].
  Tensor e = Eval("Add", {F32({0, 3}, {}), F32({1, 3}, {1, 2, 3})});
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_EQ(e.numel(), 0);
}

// IEEE division: x/0 is +-inf, 0/0 is NaN.
TEST(ElementwiseArith, FloatDivisionByZero) {
  ExpectNear(Eval("Div", {F32({3}, {1, -1, 0}), F32({3}, {0, 0, 0})}), {kInf, -kInf, kNaN});
}

TEST(ElementwiseArith, OtherFloatTypes) {
  // double: 0.3 - 0.1 in binary64 arithmetic is 0.29999999999999998... - 0.1
  // = 0.19999999999999998, not 0.2.
  Tensor d = Eval("Sub", {Make<double>(DType::kFloat64, {1}, {0.3}), Make<double>(DType::kFloat64, {1}, {0.1})});
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  ASSERT_EQ(d.numel(), 1);
  EXPECT_EQ(d.data<double>()[0], 0.3 - 0.1);
  // float16: 2048 + 1 = 2049 lies halfway between the neighbours 2048 and 2050
  // (spacing 2 in [2048, 4096)); ties go to the even mantissa: 2048.
  // 1.5 + 0.25 = 1.75 is exact.
  Tensor h = Eval("Add", {Make<Float16>(DType::kFloat16, {2}, {Float16(1.5f), Float16(2048.f)}),
                          Make<Float16>(DType::kFloat16, {2}, {Float16(0.25f), Float16(1.f)})});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  ExpectNear(h, {1.75, 2048});
  // bfloat16 (8 significant bits, spacing 2^-7 at 1): 1 + 2^-8 is a tie ->
  // 1.0 (even); 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even)
  // -> 1.015625.
  Tensor bf = Eval("Add", {Make<BFloat16>(DType::kBFloat16, {2}, {BFloat16(1.f), BFloat16(1.f)}),
                           Make<BFloat16>(DType::kBFloat16, {2}, {BFloat16(0.00390625f), BFloat16(0.01171875f)})});
  EXPECT_EQ(bf.dtype(), DType::kBFloat16);
  ExpectNear(bf, {1.0, 1.015625}, 0);
}

// Integer Div truncates toward zero (C semantics, as onnxruntime):
// 7/2=3.5->3, -7/2=-3.5->-3, 7/-2->-3, -7/-2=3.5->3, 0/3=0, 1/3->0.
TEST(ElementwiseArith, IntegerDivTruncatesTowardZero) {
  Tensor d = Eval("Div", {I32({6}, {7, -7, 7, -7, 0, 1}), I32({6}, {2, 2, -2, -2, 3, 3})});
  EXPECT_EQ(d.dtype(), DType::kInt32);
  EXPECT_THAT(Values<int32_t>(d), ElementsAre(3, -3, -3, 3, 0, 0));
  Tensor u = Eval("Div", {Make<uint32_t>(DType::kUint32, {2}, {7, 4000000000u}), Make<uint32_t>(DType::kUint32, {1}, {2})});
  EXPECT_THAT(Values<uint32_t>(u), ElementsAre(3u, 2000000000u));
  // INT32_MIN / -1 = 2^31 does not fit: it wraps to INT32_MIN (numpy), no trap.
  Tensor w = Eval("Div", {I32({1}, {std::numeric_limits<int32_t>::min()}), I32({1}, {-1})});
  EXPECT_THAT(Values<int32_t>(w), ElementsAre(std::numeric_limits<int32_t>::min()));
}

// int64 arithmetic is exact beyond 2^53 and wraps modulo 2^64 (numpy).
TEST(ElementwiseArith, Int64ExactAndWrapping) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t k53 = int64_t{1} << 53;
  // [INT64_MAX + 1, 2^53 + 1] = [INT64_MIN (wrap), 9007199254740993].
  Tensor a = Eval("Add", {I64({2}, {kMax, k53}), I64({2}, {1, 1})});
  EXPECT_EQ(a.dtype(), DType::kInt64);
  EXPECT_THAT(Values<int64_t>(a), ElementsAre(std::numeric_limits<int64_t>::min(), 9007199254740993LL));
  // 3037000499^2 = 9223372030926249001 < 2^63 - 1.
  EXPECT_THAT(Values<int64_t>(Eval("Mul", {I64({1}, {3037000499LL}), I64({1}, {3037000499LL})})),
              ElementsAre(9223372030926249001LL));
  // (2^53 + 3) - 1 = 2^53 + 2: a double could not tell 2^53+1 and 2^53+2 apart.
  EXPECT_THAT(Values<int64_t>(Eval("Sub", {I64({1}, {k53 + 3}), I64(kScalar, {1})})), ElementsAre(k53 + 2));
  // uint8: 0 - 1 = 255 (mod 256); 200 + 100 = 300 - 256 = 44.
  Tensor u = Eval("Sub", {Make<uint8_t>(DType::kUint8, {1}, {0}), Make<uint8_t>(DType::kUint8, {1}, {1})});
  EXPECT_THAT(Values<uint8_t>(u), ElementsAre(255));
  Tensor u2 = Eval("Add", {Make<uint8_t>(DType::kUint8, {1}, {200}), Make<uint8_t>(DType::kUint8, {1}, {100})});
  EXPECT_THAT(Values<uint8_t>(u2), ElementsAre(44));
  // int8 -3 * 5 = -15; int16 300 * 300 = 90000 = 65536 + 24464 -> 24464.
  EXPECT_THAT(Values<int8_t>(Eval("Mul", {Make<int8_t>(DType::kInt8, {1}, {-3}), Make<int8_t>(DType::kInt8, {1}, {5})})),
              ElementsAre(-15));
  EXPECT_THAT(
      Values<int16_t>(Eval("Mul", {Make<int16_t>(DType::kInt16, {1}, {300}), Make<int16_t>(DType::kInt16, {1}, {300})})),
      ElementsAre(24464));
}

// Opset < 7: B broadcasts onto A only with broadcast=1; its dims align with
// A's trailing dims, or from `axis`; a B of one element is a scalar.
TEST(ElementwiseArith, LegacyBroadcastAttributes) {
  Tensor a = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  // Trailing: B [3] = [10,20,30] added to each row.
  ExpectNear(Eval("Add", {a, F32({3}, {10, 20, 30})}, {Attribute::Int("broadcast", 1)}, 6), {11, 22, 33, 14, 25, 36});
  // axis=0: B [2] = [100,200] aligned with A's dim 0, added down the columns.
  Tensor c = Eval("Add", {a, F32({2}, {100, 200})}, {Attribute::Int("broadcast", 1), Attribute::Int("axis", 0)}, 6);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  ExpectNear(c, {101, 102, 103, 204, 205, 206});
  // Scalar B: [1..6] * 2.
  ExpectNear(Eval("Mul", {a, F32({1}, {2})}, {Attribute::Int("broadcast", 1)}, 6), {2, 4, 6, 8, 10, 12});
  // A [2,3,2] = 0..11, B [3] = [1,2,3] at axis=1: out[i][j][k] = A - B[j]:
  // i=0: 0-1,1-1, 2-2,3-2, 4-3,5-3; i=1: 6-1,7-1, 8-2,9-2, 10-3,11-3.
  Tensor a3 = F32({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  ExpectNear(Eval("Sub", {a3, F32({3}, {1, 2, 3})}, {Attribute::Int("broadcast", 1), Attribute::Int("axis", 1)}, 6),
             {-1, 0, 0, 1, 1, 2, 5, 6, 6, 7, 7, 8});
  // Div at opset 1 with axis=0: rows divided by [2, 4].
  ExpectNear(Eval("Div", {a, F32({2}, {2, 4})}, {Attribute::Int("broadcast", 1), Attribute::Int("axis", 0)}, 1),
             {0.5, 1, 1.5, 1, 1.25, 1.5});
  // Equal shapes need no attribute.
  ExpectNear(Eval("Sub", {a, a}, {}, 6), {0, 0, 0, 0, 0, 0});
}

TEST(ElementwiseArith, LegacyBroadcastErrors) {
  Tensor a = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  // broadcast=0 (the default) with different shapes.
  EXPECT_THAT(EvalError("Add", {a, F32({3}, {1, 2, 3})}, {}, 6), HasSubstr("node 'n0' (Add)"));
  // B of higher rank than A: legal with numpy rules (opset 7), not before.
  Tensor small = F32({3}, {1, 2, 3});
  EXPECT_THAT(EvalError("Add", {small, a}, {Attribute::Int("broadcast", 1)}, 6), HasSubstr("node 'n0' (Add)"));
  Tensor ok = Eval("Add", {small, a}, {}, 7);
  EXPECT_EQ(ok.shape(), (Shape{2, 3}));
  ExpectNear(ok, {2, 4, 6, 5, 7, 9});
  // B [2] does not match A's trailing dim 3; at axis=1 it does not match dim 1.
  EXPECT_THAT(EvalError("Mul", {a, F32({2}, {1, 2})}, {Attribute::Int("broadcast", 1)}, 6), HasSubstr("node 'n0' (Mul)"));
  EXPECT_THAT(EvalError("Mul", {a, F32({2}, {1, 2})}, {Attribute::Int("broadcast", 1), Attribute::Int("axis", 1)}, 6),
              HasSubstr("node 'n0' (Mul)"));
}

TEST(ElementwiseArith, Errors) {
  // [2,3] and [2]: trailing dims 3 vs 2, neither is 1.
  EXPECT_THAT(EvalError("Add", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2}, {1, 2})}), HasSubstr("node 'n0' (Add)"));
  EXPECT_THAT(EvalError("Mul", {F32({2, 1, 3}, {1, 2, 3, 4, 5, 6}), F32({2, 2}, {1, 2, 3, 4})}),
              HasSubstr("node 'n0' (Mul)"));
  // Both inputs must have one dtype (T, T -> T).
  EXPECT_THAT(EvalError("Sub", {F32({1}, {1}), I64({1}, {1})}), HasSubstr("node 'n0' (Sub)"));
  EXPECT_THAT(EvalError("Div", {F32({1}, {1}), Make<double>(DType::kFloat64, {1}, {1})}), HasSubstr("node 'n0' (Div)"));
  // Bool and string are not numeric.
  EXPECT_THAT(EvalError("Add", {Bools({1}, {T}), Bools({1}, {T})}), HasSubstr("node 'n0' (Add)"));
  // Integer division by zero has no value.
  EXPECT_THAT(EvalError("Div", {I32({2}, {1, 2}), I32({2}, {1, 0})}), HasSubstr("node 'n0' (Div)"));
}

// ---------------------------------------------------------------------------
// Pow

TEST(ElementwisePow, FloatBaseAndExponent) {
  // 2^3=8, (-2)^3=-8, 4^0.5=2, 0^-1=+inf, (-8)^(1/3) is NaN (negative base,
  // non-integer exponent: C pow / numpy).
  ExpectNear(Eval("Pow", {F32({5}, {2, -2, 4, 0, -8}), F32({5}, {3, 3, 0.5f, -1, 1.f / 3})}), {8, -8, 2, kInf, kNaN});
  // Spec example with broadcasting: [[1,2,3],[4,5,6]] ^ [1,2,3] = [[1,4,27],[4,25,216]].
  ExpectNear(Eval("Pow", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3}, {1, 2, 3})}), {1, 4, 27, 4, 25, 216});
}

// Pow-12+: the exponent may have another type; the output has the base's.
TEST(ElementwisePow, MixedTypes) {
  // float base, int64 exponent 2: [4, 9, 0.25].
  Tensor a = Eval("Pow", {F32({3}, {2, 3, 0.5f}), I64({1}, {2})});
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  ExpectNear(a, {4, 9, 0.25});
  // int32 base, int32 exponent: 2^10=1024, (-3)^3=-27, 5^0=1, 7^1=7.
  Tensor b = Eval("Pow", {I32({4}, {2, -3, 5, 7}), I32({4}, {10, 3, 0, 1})});
  EXPECT_EQ(b.dtype(), DType::kInt32);
  EXPECT_THAT(Values<int32_t>(b), ElementsAre(1024, -27, 1, 7));
  // int64 base, float exponent 0.5: sqrt 4=2, 9=3, 2=1.414.. -> int64 1
  // (numpy: power in float, then astype(int64) truncates).
  Tensor c = Eval("Pow", {I64({3}, {4, 9, 2}), F32(kScalar, {0.5f})});
  EXPECT_EQ(c.dtype(), DType::kInt64);
  EXPECT_THAT(Values<int64_t>(c), ElementsAre(2, 3, 1));
  // 3^39 = 4052555153018976267 exactly (2^61.8 < 2^63); a double would round it.
  Tensor d = Eval("Pow", {I64({1}, {3}), I64({1}, {39})});
  EXPECT_THAT(Values<int64_t>(d), ElementsAre(4052555153018976267LL));
  // double base, int32 exponent: 1.5^2 = 2.25; 10^-2 = 0.01.
  Tensor e = Eval("Pow", {Make<double>(DType::kFloat64, {2}, {1.5, 10}), I32({2}, {2, -2})});
  EXPECT_EQ(e.dtype(), DType::kFloat64);
  ExpectNear(e, {2.25, 0.01}, 1e-15);
}

TEST(ElementwisePow, LegacyBroadcastAndErrors) {
  // Pow-1 with broadcast=1, axis=0: row 0 squared, row 1 cubed.
  ExpectNear(Eval("Pow", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2}, {2, 3})},
                  {Attribute::Int("broadcast", 1), Attribute::Int("axis", 0)}, 6),
             {1, 4, 9, 64, 125, 216});
  // Before opset 12, base and exponent share one float type.
  EXPECT_THAT(EvalError("Pow", {F32({1}, {2}), I64({1}, {2})}, {}, 11), HasSubstr("node 'n0' (Pow)"));
  EXPECT_THAT(EvalError("Pow", {I32({1}, {2}), I32({1}, {2})}, {}, 11), HasSubstr("node 'n0' (Pow)"));
  EXPECT_THAT(EvalError("Pow", {F32({2}, {1, 2}), F32({3}, {1, 2, 3})}), HasSubstr("node 'n0' (Pow)"));
}

// ---------------------------------------------------------------------------
// Mod

// The spec's example data: x = [-4, 7, 5, 4, -7, 8], y = [2, -3, 8, -2, 3, 5].
TEST(ElementwiseMod, IntegerSignRules) {
  const std::vector<int64_t> x = {-4, 7, 5, 4, -7, 8};
  const std::vector<int64_t> y = {2, -3, 8, -2, 3, 5};
  // fmod=0 (default): the remainder takes the divisor's sign (Python %):
  // -4%2=0, 7%-3=-2, 5%8=5, 4%-2=0, -7%3=2, 8%5=3.
  EXPECT_THAT(Values<int64_t>(Eval("Mod", {I64({6}, x), I64({6}, y)})), ElementsAre(0, -2, 5, 0, 2, 3));
  EXPECT_THAT(Values<int64_t>(Eval("Mod", {I64({6}, x), I64({6}, y)}, {Attribute::Int("fmod", 0)})),
              ElementsAre(0, -2, 5, 0, 2, 3));
  // fmod=1: C fmod, the dividend's sign: 0, 1, 5, 0, -1, 3.
  Tensor f = Eval("Mod", {I32({6}, {-4, 7, 5, 4, -7, 8}), I32({6}, {2, -3, 8, -2, 3, 5})}, {Attribute::Int("fmod", 1)});
  EXPECT_EQ(f.dtype(), DType::kInt32);
  EXPECT_THAT(Values<int32_t>(f), ElementsAre(0, 1, 5, 0, -1, 3));
  // Broadcast rank-0 divisor 3 over int8 [-5, 5, -6]: Python -5%3=1, 5%3=2,
  // -6%3=0; fmod: -2, 2, 0.
  Tensor i8 = Make<int8_t>(DType::kInt8, {3}, {-5, 5, -6});
  Tensor three = Make<int8_t>(DType::kInt8, kScalar, {3});
  EXPECT_THAT(Values<int8_t>(Eval("Mod", {i8, three})), ElementsAre(1, 2, 0));
  EXPECT_THAT(Values<int8_t>(Eval("Mod", {i8, three}, {Attribute::Int("fmod", 1)})), ElementsAre(-2, 2, 0));
  // uint8: 250 % 7 = 250 - 245 = 5, 7 % 250 = 7.
  Tensor u = Eval("Mod", {Make<uint8_t>(DType::kUint8, {2}, {250, 7}), Make<uint8_t>(DType::kUint8, {2}, {7, 250})});
  EXPECT_THAT(Values<uint8_t>(u), ElementsAre(5, 7));
  // INT64_MIN % -1 = 0 either way (the quotient overflows, the remainder does not).
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_THAT(Values<int64_t>(Eval("Mod", {I64({1}, {kMin}), I64({1}, {-1})})), ElementsAre(0));
  EXPECT_THAT(Values<int64_t>(Eval("Mod", {I64({1}, {kMin}), I64({1}, {-1})}, {Attribute::Int("fmod", 1)})),
              ElementsAre(0));
}

// Floats need fmod=1; the spec's float example:
// fmod(-4.3,2.1)=-0.1, fmod(7.2,-3.4)=0.4, fmod(5,8)=5, fmod(4.3,-2.1)=0.1,
// fmod(-7.2,3.4)=-0.4, fmod(8,5)=3.
TEST(ElementwiseMod, FloatFmod) {
  Tensor r = Eval("Mod", {F32({6}, {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f}), F32({6}, {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f})},
                  {Attribute::Int("fmod", 1)});
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  ExpectNear(r, {-0.1, 0.4, 5, 0.1, -0.4, 3}, 1e-5);
  // fmod(x, 0) is NaN; fmod(5.5, inf) = 5.5.
  ExpectNear(Eval("Mod", {F32({2}, {1, 5.5f}), F32({2}, {0, static_cast<float>(kInf)})}, {Attribute::Int("fmod", 1)}),
             {kNaN, 5.5});
  // [2,1] with [2]: out[i][j] = fmod(x[i], y[j]): fmod(7,2)=1, fmod(7,4)=3, fmod(9,2)=1, fmod(9,4)=1.
  ExpectNear(Eval("Mod", {F32({2, 1}, {7, 9}), F32({2}, {2, 4})}, {Attribute::Int("fmod", 1)}), {1, 3, 1, 1});
}

TEST(ElementwiseMod, Errors) {
  // "If the input type is floating point, then fmod attribute must be set to 1."
  EXPECT_THAT(EvalError("Mod", {F32({1}, {1}), F32({1}, {2})}), HasSubstr("fmod"));
  EXPECT_THAT(EvalError("Mod", {F32({1}, {1}), F32({1}, {2})}), HasSubstr("node 'n0' (Mod)"));
  EXPECT_THAT(EvalError("Mod", {I64({1}, {1}), I64({1}, {2})}, {Attribute::Int("fmod", 2)}), HasSubstr("'fmod'"));
  EXPECT_THAT(EvalError("Mod", {I64({2}, {1, 2}), I64({2}, {3, 0})}), HasSubstr("node 'n0' (Mod)"));
  EXPECT_THAT(EvalError("Mod", {I64({1}, {1}), I32({1}, {2})}), HasSubstr("node 'n0' (Mod)"));
  // Mod was introduced in opset 10.
  EXPECT_FALSE(RunNode("Mod", {I64({1}, {1}), I64({1}, {2})}, {}, 1, 9).ok());
}

// ---------------------------------------------------------------------------
// BitShift

TEST(ElementwiseBitShift, Direction) {
  // The spec's examples (uint8): [16,4,1] << [1,2,3] = [32,16,8];
  // [16,4,1] >> [1,2,3] = [8,1,0].
  Tensor x = Make<uint8_t>(DType::kUint8, {3}, {16, 4, 1});
  Tensor y = Make<uint8_t>(DType::kUint8, {3}, {1, 2, 3});
  Tensor l = Eval("BitShift", {x, y}, {Attribute::String("direction", "LEFT")});
  EXPECT_EQ(l.dtype(), DType::kUint8);
  EXPECT_THAT(Values<uint8_t>(l), ElementsAre(32, 16, 8));
  EXPECT_THAT(Values<uint8_t>(Eval("BitShift", {x, y}, {Attribute::String("direction", "RIGHT")})), ElementsAre(8, 1, 0));
  // Bits shifted out of the type are lost: 255 << 1 = 510 mod 256 = 254; 200 << 2 = 800 mod 256 = 32.
  EXPECT_THAT(Values<uint8_t>(Eval("BitShift", {Make<uint8_t>(DType::kUint8, {2}, {255, 200}), Make<uint8_t>(DType::kUint8, {2}, {1, 2})},
                                   {Attribute::String("direction", "LEFT")})),
              ElementsAre(254, 32));
  // uint32 with a rank-0 shift of 4: 0xFFFFFFFF >> 4 = 0x0FFFFFFF, 256 >> 4 = 16.
  EXPECT_THAT(Values<uint32_t>(Eval("BitShift", {Make<uint32_t>(DType::kUint32, {2}, {0xFFFFFFFFu, 256}),
                                                 Make<uint32_t>(DType::kUint32, kScalar, {4})},
                                    {Attribute::String("direction", "RIGHT")})),
              ElementsAre(0x0FFFFFFFu, 16u));
  // uint64: 1 << 63 = 2^63; 3 << [0, 1] broadcast over [2,1] x [2].
  EXPECT_THAT(Values<uint64_t>(Eval("BitShift", {Make<uint64_t>(DType::kUint64, {1}, {1}), Make<uint64_t>(DType::kUint64, {1}, {63})},
                                    {Attribute::String("direction", "LEFT")})),
              ElementsAre(uint64_t{1} << 63));
  // [2,1] = [3, 5] << [2] = [0, 1]: [[3, 6], [5, 10]].
  Tensor b = Eval("BitShift", {Make<uint16_t>(DType::kUint16, {2, 1}, {3, 5}), Make<uint16_t>(DType::kUint16, {2}, {0, 1})},
                  {Attribute::String("direction", "LEFT")});
  EXPECT_EQ(b.shape(), (Shape{2, 2}));
  EXPECT_THAT(Values<uint16_t>(b), ElementsAre(3, 6, 5, 10));
  // Shifting by the bit width or more leaves no bit (numpy's defined result).
  EXPECT_THAT(Values<uint64_t>(Eval("BitShift", {Make<uint64_t>(DType::kUint64, {2}, {1, 1}), Make<uint64_t>(DType::kUint64, {2}, {64, 200})},
                                    {Attribute::String("direction", "LEFT")})),
              ElementsAre(0u, 0u));
  EXPECT_THAT(Values<uint8_t>(Eval("BitShift", {Make<uint8_t>(DType::kUint8, {1}, {255}), Make<uint8_t>(DType::kUint8, {1}, {8})},
                                   {Attribute::String("direction", "RIGHT")})),
              ElementsAre(0));
}

TEST(ElementwiseBitShift, Errors) {
  Tensor x = Make<uint8_t>(DType::kUint8, {1}, {1});
  EXPECT_THAT(EvalError("BitShift", {x, x}), HasSubstr("'direction'"));
  EXPECT_THAT(EvalError("BitShift", {x, x}, {Attribute::String("direction", "UP")}), HasSubstr("'direction'"));
  EXPECT_THAT(EvalError("BitShift", {x, x}, {Attribute::String("direction", "left")}), HasSubstr("node 'n0' (BitShift)"));
  // Only unsigned integers.
  EXPECT_THAT(EvalError("BitShift", {I32({1}, {1}), I32({1}, {1})}, {Attribute::String("direction", "LEFT")}),
              HasSubstr("node 'n0' (BitShift)"));
  EXPECT_THAT(EvalError("BitShift", {x, Make<uint16_t>(DType::kUint16, {1}, {1})}, {Attribute::String("direction", "LEFT")}),
              HasSubstr("node 'n0' (BitShift)"));
}

// ---------------------------------------------------------------------------
// And, Or, Xor

TEST(ElementwiseLogic, TruthTablesAndBroadcast) {
  Tensor a = Bools({4}, {T, T, F, F});
  Tensor b = Bools({4}, {T, F, T, F});
  EXPECT_THAT(BoolValues(Eval("And", {a, b})), ElementsAre(T, F, F, F));
  EXPECT_THAT(BoolValues(Eval("Or", {a, b})), ElementsAre(T, T, T, F));
  EXPECT_THAT(BoolValues(Eval("Xor", {a, b})), ElementsAre(F, T, T, F));
  // [2,1] = [T, F] with [3] = [T, F, T]: out[i][j] = a[i] op b[j].
  Tensor c = Bools({2, 1}, {T, F});
  Tensor d = Bools({3}, {T, F, T});
  Tensor r = Eval("And", {c, d});
  EXPECT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_THAT(BoolValues(r), ElementsAre(T, F, T, F, F, F));
  EXPECT_THAT(BoolValues(Eval("Or", {c, d})), ElementsAre(T, T, T, T, F, T));
  EXPECT_THAT(BoolValues(Eval("Xor", {c, d})), ElementsAre(F, T, F, T, F, T));
  // Rank 0 with rank 0.
  Tensor s = Eval("Xor", {Bools(kScalar, {T}), Bools(kScalar, {T})});
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_THAT(BoolValues(s), ElementsAre(F));
}

TEST(ElementwiseLogic, LegacyBroadcastAndErrors) {
  // And-1 with broadcast=1: [[T,T],[F,T]] and [T,F] per row -> [[T,F],[F,F]];
  // with axis=0, [T,F] per column -> [[T,T],[F,F]].
  Tensor a = Bools({2, 2}, {T, T, F, T});
  EXPECT_THAT(BoolValues(Eval("And", {a, Bools({2}, {T, F})}, {Attribute::Int("broadcast", 1)}, 6)), ElementsAre(T, F, F, F));
  EXPECT_THAT(BoolValues(Eval("And", {a, Bools({2}, {T, F})}, {Attribute::Int("broadcast", 1), Attribute::Int("axis", 0)}, 1)),
              ElementsAre(T, T, F, F));
  // Or-1 [[T,T],[F,T]] or [F,F] -> itself; Xor with [T,T] -> negation.
  EXPECT_THAT(BoolValues(Eval("Or", {a, Bools({2}, {F, F})}, {Attribute::Int("broadcast", 1)}, 6)), ElementsAre(T, T, F, T));
  EXPECT_THAT(BoolValues(Eval("Xor", {a, Bools({2}, {T, T})}, {Attribute::Int("broadcast", 1)}, 6)), ElementsAre(F, F, T, F));
  EXPECT_THAT(EvalError("And", {F32({1}, {1}), F32({1}, {0})}), HasSubstr("node 'n0' (And)"));
  EXPECT_THAT(EvalError("Or", {I32({1}, {1}), I32({1}, {0})}), HasSubstr("node 'n0' (Or)"));
  EXPECT_THAT(EvalError("Xor", {Bools({2}, {T, F}), Bools({3}, {T, F, T})}), HasSubstr("node 'n0' (Xor)"));
  EXPECT_THAT(EvalError("And", {a, Bools({2}, {T, F})}, {}, 6), HasSubstr("node 'n0' (And)"));  // broadcast=0
}

// ---------------------------------------------------------------------------
// Equal, Greater, Less, GreaterOrEqual, LessOrEqual

// a = [1, 2, NaN, 3], b = [2, 2, NaN, 1]; every comparison with NaN is false.
TEST(ElementwiseCompare, FloatsWithNaN) {
  Tensor a = F32({4}, {1, 2, kNaN, 3});
  Tensor b = F32({4}, {2, 2, kNaN, 1});
  EXPECT_THAT(BoolValues(Eval("Equal", {a, b})), ElementsAre(F, T, F, F));
  EXPECT_THAT(BoolValues(Eval("Greater", {a, b})), ElementsAre(F, F, F, T));
  EXPECT_THAT(BoolValues(Eval("Less", {a, b})), ElementsAre(T, F, F, F));
  EXPECT_THAT(BoolValues(Eval("GreaterOrEqual", {a, b})), ElementsAre(F, T, F, T));
  EXPECT_THAT(BoolValues(Eval("LessOrEqual", {a, b})), ElementsAre(T, T, F, F));
  // -0.0 == 0.0; inf > finite.
  Tensor c = F32({2}, {-0.0f, static_cast<float>(kInf)});
  Tensor d = F32({2}, {0.0f, 3.4e38f});
  EXPECT_THAT(BoolValues(Eval("Equal", {c, d})), ElementsAre(T, F));
  EXPECT_THAT(BoolValues(Eval("Greater", {c, d})), ElementsAre(F, T));
  // float16 inputs compare by value: 0.5 vs 0.25.
  Tensor h = Eval("Less", {Make<Float16>(DType::kFloat16, {1}, {Float16(0.5f)}), Make<Float16>(DType::kFloat16, {1}, {Float16(0.25f)})});
  EXPECT_THAT(BoolValues(h), ElementsAre(F));
}

TEST(ElementwiseCompare, IntegersBroadcastAndOtherTypes) {
  // int64 2^53+1 vs 2^53: distinct (they would be equal as doubles).
  const int64_t k53 = int64_t{1} << 53;
  Tensor a = I64({1}, {k53 + 1});
  Tensor b = I64({1}, {k53});
  EXPECT_THAT(BoolValues(Eval("Equal", {a, b})), ElementsAre(F));
  EXPECT_THAT(BoolValues(Eval("Greater", {a, b})), ElementsAre(T));
  EXPECT_THAT(BoolValues(Eval("Less", {a, b})), ElementsAre(F));
  EXPECT_THAT(BoolValues(Eval("LessOrEqual", {a, b})), ElementsAre(F));
  // [2,1] = [1, 3] vs [3] = [1, 2, 3]:
  // Greater: 1>1 F,1>2 F,1>3 F; 3>1 T,3>2 T,3>3 F.
  // LessOrEqual is its negation: T,T,T; F,F,T. GreaterOrEqual: 1>=1 T, F, F;
  // T,T,T. Less: F,T,T; F,F,F. Equal: T,F,F; F,F,T.
  Tensor c = I32({2, 1}, {1, 3});
  Tensor d = I32({3}, {1, 2, 3});
  Tensor g = Eval("Greater", {c, d});
  EXPECT_EQ(g.shape(), (Shape{2, 3}));
  EXPECT_THAT(BoolValues(g), ElementsAre(F, F, F, T, T, F));
  EXPECT_THAT(BoolValues(Eval("LessOrEqual", {c, d})), ElementsAre(T, T, T, F, F, T));
  EXPECT_THAT(BoolValues(Eval("GreaterOrEqual", {c, d})), ElementsAre(T, F, F, T, T, T));
  EXPECT_THAT(BoolValues(Eval("Less", {c, d})), ElementsAre(F, T, T, F, F, F));
  EXPECT_THAT(BoolValues(Eval("Equal", {c, d})), ElementsAre(T, F, F, F, F, T));
  // Unsigned: 200 > 100 (not a negative int8).
  EXPECT_THAT(BoolValues(Eval("Greater", {Make<uint8_t>(DType::kUint8, {1}, {200}), Make<uint8_t>(DType::kUint8, {1}, {100})})),
              ElementsAre(T));
  // Rank 0 vs [3].
  Tensor s = Eval("Less", {F32(kScalar, {2}), F32({3}, {1, 2, 3})});
  EXPECT_EQ(s.shape(), (Shape{3}));
  EXPECT_THAT(BoolValues(s), ElementsAre(F, F, T));
  // Equal on bool and (Equal-19) string.
  EXPECT_THAT(BoolValues(Eval("Equal", {Bools({2}, {T, F}), Bools({2}, {T, T})})), ElementsAre(T, F));
  Tensor s1 = Make<std::string>(DType::kString, {3}, {"a", "b", ""});
  Tensor s2 = Make<std::string>(DType::kString, {3}, {"a", "B", ""});
  EXPECT_THAT(BoolValues(Eval("Equal", {s1, s2}, {}, 19)), ElementsAre(T, F, T));
}

TEST(ElementwiseCompare, LegacyBroadcastAndErrors) {
  // Greater-1 with axis=0: rows of [[1,2],[3,4]] against [1, 3]: [1>1,2>1]=[F,T],
  // [3>3,4>3]=[F,T]; Less trailing against [2, 2]: [T,F,F,F]; Equal trailing
  // against [1, 4]: [T,F,F,T].
  Tensor a = F32({2, 2}, {1, 2, 3, 4});
  EXPECT_THAT(BoolValues(Eval("Greater", {a, F32({2}, {1, 3})}, {Attribute::Int("broadcast", 1), Attribute::Int("axis", 0)}, 6)),
              ElementsAre(F, T, F, T));
  EXPECT_THAT(BoolValues(Eval("Less", {a, F32({2}, {2, 2})}, {Attribute::Int("broadcast", 1)}, 6)), ElementsAre(T, F, F, F));
  EXPECT_THAT(BoolValues(Eval("Equal", {I32({2, 2}, {1, 2, 3, 4}), I32({2}, {1, 4})}, {Attribute::Int("broadcast", 1)}, 6)),
              ElementsAre(T, F, F, T));
  EXPECT_THAT(EvalError("Greater", {F32({1}, {1}), I64({1}, {1})}), HasSubstr("node 'n0' (Greater)"));
  EXPECT_THAT(EvalError("Less", {F32({2}, {1, 2}), F32({3}, {1, 2, 3})}), HasSubstr("node 'n0' (Less)"));
  EXPECT_THAT(EvalError("Equal", {a, F32({3}, {1, 2, 3})}), HasSubstr("node 'n0' (Equal)"));
  // Ordering of strings and bools is not defined.
  Tensor s = Make<std::string>(DType::kString, {1}, {"a"});
  EXPECT_THAT(EvalError("Greater", {s, s}), HasSubstr("node 'n0' (Greater)"));
  EXPECT_THAT(EvalError("LessOrEqual", {Bools({1}, {T}), Bools({1}, {F})}), HasSubstr("node 'n0' (LessOrEqual)"));
  // GreaterOrEqual/LessOrEqual begin at opset 12.
  EXPECT_FALSE(RunNode("GreaterOrEqual", {F32({1}, {1}), F32({1}, {1})}, {}, 1, 11).ok());
}

// ---------------------------------------------------------------------------
// PRelu: y = slope * x for x < 0, x otherwise; slope broadcasts to X.

TEST(ElementwisePRelu, PerChannelSlope) {
  // X [1,2,2,2] = [[-1,2,-3,4],[-5,6,-7,8]], slope [2,1,1] = [0.1, 0.5]:
  // channel 0: [-0.1, 2, -0.3, 4]; channel 1: [-2.5, 6, -3.5, 8].
  Tensor x = F32({1, 2, 2, 2}, {-1, 2, -3, 4, -5, 6, -7, 8});
  Tensor y = Eval("PRelu", {x, F32({2, 1, 1}, {0.1f, 0.5f})});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 2}));
  ExpectNear(y, {-0.1, 2, -0.3, 4, -2.5, 6, -3.5, 8});
  // A 1-D slope aligns with X's last dim (numpy): X [2,2] = [[-1,-2],[3,-4]],
  // slope [0.5, 2]: [-0.5, -4, 3, -8].
  ExpectNear(Eval("PRelu", {F32({2, 2}, {-1, -2, 3, -4}), F32({2}, {0.5f, 2})}), {-0.5, -4, 3, -8});
  // Shared slope [1] = 0.25: [-4, 0, 4, NaN] -> [-1, 0, 4, NaN] (0 and NaN are not < 0).
  ExpectNear(Eval("PRelu", {F32({4}, {-4, 0, 4, kNaN}), F32({1}, {0.25f})}), {-1, 0, 4, kNaN});
  // Rank-0 slope.
  ExpectNear(Eval("PRelu", {F32({2}, {-2, 2}), F32(kScalar, {3})}), {-6, 2});
}

TEST(ElementwisePRelu, IntegersAndOldOpsets) {
  // PRelu-9 admits integers: [-3, 2] with slope [2, 5] -> [-6, 2].
  Tensor i = Eval("PRelu", {I32({2}, {-3, 2}), I32({2}, {2, 5})});
  EXPECT_EQ(i.dtype(), DType::kInt32);
  EXPECT_THAT(Values<int32_t>(i), ElementsAre(-6, 2));
  EXPECT_THAT(Values<int64_t>(Eval("PRelu", {I64({3}, {-7, 0, 7}), I64({1}, {-1})})), ElementsAre(7, 0, 7));
  // PRelu-6: "If Slope is of size 1, the value is shared across different channels".
  ExpectNear(Eval("PRelu", {F32({2, 2}, {-1, -2, 3, -4}), F32({1}, {0.5f})}, {}, 6), {-0.5, -1, 3, -2});
  // Integers are not allowed before opset 9.
  EXPECT_THAT(EvalError("PRelu", {I32({1}, {-1}), I32({1}, {2})}, {}, 8), HasSubstr("node 'n0' (PRelu)"));
}

TEST(ElementwisePRelu, Errors) {
  Tensor x = F32({2, 2}, {-1, -2, 3, -4});
  // Slope [3] does not broadcast to [2,2].
  EXPECT_THAT(EvalError("PRelu", {x, F32({3}, {1, 2, 3})}), HasSubstr("node 'n0' (PRelu)"));
  // Unidirectional: slope [2,1] with X [1,2] would broadcast both ways to
  // [2,2], which changes X's shape: not allowed.
  EXPECT_THAT(EvalError("PRelu", {F32({1, 2}, {-1, 1}), F32({2, 1}, {1, 2})}), HasSubstr("node 'n0' (PRelu)"));
  // Slope of higher rank than X.
  EXPECT_THAT(EvalError("PRelu", {F32({2}, {-1, 1}), F32({1, 1, 2}, {1, 2})}), HasSubstr("node 'n0' (PRelu)"));
  EXPECT_THAT(EvalError("PRelu", {x, Make<double>(DType::kFloat64, {1}, {0.5})}), HasSubstr("node 'n0' (PRelu)"));
}

// ---------------------------------------------------------------------------
// Where

TEST(ElementwiseWhere, SelectAndThreeWayBroadcast) {
  // The spec's example: cond [[T,F],[T,T]], X [[1,2],[3,4]], Y [[9,8],[7,6]] -> [[1,8],[3,4]].
  Tensor r = Eval("Where", {Bools({2, 2}, {T, F, T, T}), F32({2, 2}, {1, 2, 3, 4}), F32({2, 2}, {9, 8, 7, 6})});
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  ExpectNear(r, {1, 8, 3, 4});
  // cond [1,3] = [T,F,T], X [2,1] = [10,20], Y rank 0 = -1: all three stretch
  // to [2,3]: row i = [X[i], -1, X[i]].
  Tensor b = Eval("Where", {Bools({1, 3}, {T, F, T}), I64({2, 1}, {10, 20}), I64(kScalar, {-1})});
  EXPECT_EQ(b.shape(), (Shape{2, 3}));
  EXPECT_EQ(b.dtype(), DType::kInt64);
  EXPECT_THAT(Values<int64_t>(b), ElementsAre(10, -1, 10, 20, -1, 20));
  // cond rank 0 = F picks all of Y, broadcast with X [3] and Y [2,1] -> [2,3].
  Tensor c = Eval("Where", {Bools(kScalar, {F}), F32({3}, {1, 2, 3}), F32({2, 1}, {7, 8})});
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  ExpectNear(c, {7, 7, 7, 8, 8, 8});
  // Any element type: strings.
  Tensor s = Eval("Where", {Bools({2}, {T, F}), Make<std::string>(DType::kString, {2}, {"a", "b"}),
                            Make<std::string>(DType::kString, {2}, {"c", "d"})});
  EXPECT_EQ(s.dtype(), DType::kString);
  EXPECT_THAT(Values<std::string>(s), ElementsAre("a", "d"));
  // Large int64 values are copied untouched.
  EXPECT_THAT(Values<int64_t>(Eval("Where", {Bools({1}, {T}), I64({1}, {(int64_t{1} << 53) + 1}), I64({1}, {0})})),
              ElementsAre(9007199254740993LL));
}

TEST(ElementwiseWhere, Errors) {
  Tensor x = F32({2}, {1, 2});
  EXPECT_THAT(EvalError("Where", {F32({2}, {1, 0}), x, x}), HasSubstr("node 'n0' (Where)"));
  EXPECT_THAT(EvalError("Where", {Bools({2}, {T, F}), x, I64({2}, {1, 2})}), HasSubstr("node 'n0' (Where)"));
  EXPECT_THAT(EvalError("Where", {Bools({3}, {T, F, T}), x, x}), HasSubstr("node 'n0' (Where)"));
  EXPECT_THAT(EvalError("Where", {Bools({2}, {T, F}), x, F32({3}, {1, 2, 3})}), HasSubstr("node 'n0' (Where)"));
}

// ---------------------------------------------------------------------------
// Sum, Mean, Max, Min

TEST(ElementwiseVariadic, OneTwoThreeInputs) {
  // One input: the identity.
  ExpectNear(Eval("Sum", {F32({2}, {1, -2})}), {1, -2});
  ExpectNear(Eval("Mean", {F32({2}, {1, -2})}), {1, -2});
  ExpectNear(Eval("Max", {F32({2}, {1, -2})}), {1, -2});
  ExpectNear(Eval("Min", {F32({2}, {1, -2})}), {1, -2});
  // Two inputs [1,2,3], [4,0,6]: sum [5,2,9], mean [2.5,1,4.5], max [4,2,6], min [1,0,3].
  Tensor a = F32({3}, {1, 2, 3});
  Tensor b = F32({3}, {4, 0, 6});
  ExpectNear(Eval("Sum", {a, b}), {5, 2, 9});
  ExpectNear(Eval("Mean", {a, b}), {2.5, 1, 4.5});
  ExpectNear(Eval("Max", {a, b}), {4, 2, 6});
  ExpectNear(Eval("Min", {a, b}), {1, 0, 3});
  // Three inputs [3,0,2], [1,3,4], [2,6,6]: sum [6,9,12], mean [2,3,4],
  // max [3,6,6], min [1,0,2].
  Tensor x = F32({3}, {3, 0, 2});
  Tensor y = F32({3}, {1, 3, 4});
  Tensor z = F32({3}, {2, 6, 6});
  ExpectNear(Eval("Sum", {x, y, z}), {6, 9, 12});
  ExpectNear(Eval("Mean", {x, y, z}), {2, 3, 4});
  ExpectNear(Eval("Max", {x, y, z}), {3, 6, 6});
  ExpectNear(Eval("Min", {x, y, z}), {1, 0, 2});
  // Mean of 1, 2, 2: 5/3.
  ExpectNear(Eval("Mean", {F32({1}, {1}), F32({1}, {2}), F32({1}, {2})}), {5.0 / 3}, 1e-7);
  // double keeps double precision: 0.1 + 0.2 = 0.30000000000000004.
  Tensor d = Eval("Sum", {Make<double>(DType::kFloat64, {1}, {0.1}), Make<double>(DType::kFloat64, {1}, {0.2})});
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_EQ(d.data<double>()[0], 0.1 + 0.2);
}

TEST(ElementwiseVariadic, Broadcasting) {
  // [2,1] = [1,2], [3] = [10,20,30], rank 0 = 100 -> [2,3]:
  // row i = a[i] + b[j] + 100: [111,121,131], [112,122,132].
  Tensor a = F32({2, 1}, {1, 2});
  Tensor b = F32({3}, {10, 20, 30});
  Tensor c = F32(kScalar, {100});
  Tensor s = Eval("Sum", {a, b, c});
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
  ExpectNear(s, {111, 121, 131, 112, 122, 132});
  // Mean: (a + b + 100) / 3 -> [37, 40.333.., 43.666.., 37.333.., 40.666.., 44].
  ExpectNear(Eval("Mean", {a, b, c}), {37, 121.0 / 3, 131.0 / 3, 112.0 / 3, 122.0 / 3, 44}, 1e-6);
  // [2,1] = [0,5], [3] = [1,4,6], rank 0 = 3:
  // max: row 0 max(0,b,3) = [3,4,6]; row 1 max(5,b,3) = [5,5,6].
  // min: row 0 min(0,b,3) = [0,0,0]; row 1 min(5,b,3) = [1,3,3].
  Tensor p = F32({2, 1}, {0, 5});
  Tensor q = F32({3}, {1, 4, 6});
  Tensor r = F32(kScalar, {3});
  Tensor mx = Eval("Max", {p, q, r});
  EXPECT_EQ(mx.shape(), (Shape{2, 3}));
  ExpectNear(mx, {3, 4, 6, 5, 5, 6});
  ExpectNear(Eval("Min", {p, q, r}), {0, 0, 0, 1, 3, 3});
  // Mean [2,1] = [0,6] with [2] = [3,9]: [[1.5,4.5],[4.5,7.5]].
  ExpectNear(Eval("Mean", {F32({2, 1}, {0, 6}), F32({2}, {3, 9})}), {1.5, 4.5, 4.5, 7.5});
}

// Max/Min follow numpy's maximum/minimum (the spec's reference
// implementation): a NaN anywhere among the inputs gives NaN, in whichever
// position it comes.
TEST(ElementwiseVariadic, MaxMinPropagateNaN) {
  Tensor a = F32({3}, {kNaN, 1, 2});
  Tensor b = F32({3}, {0, kNaN, 1});
  ExpectNear(Eval("Max", {a, b}), {kNaN, kNaN, 2});
  ExpectNear(Eval("Min", {a, b}), {kNaN, kNaN, 1});
  ExpectNear(Eval("Max", {F32({1}, {1}), F32({1}, {kNaN}), F32({1}, {3})}), {kNaN});
  ExpectNear(Eval("Min", {F32({1}, {1}), F32({1}, {-5}), F32({1}, {kNaN})}), {kNaN});
  ExpectNear(Eval("Max", {F32({1}, {kNaN})}), {kNaN});
  // float16 too.
  Tensor h = Eval("Max", {Make<Float16>(DType::kFloat16, {2}, {Float16(1.f), Float16(kNaN)}),
                          Make<Float16>(DType::kFloat16, {2}, {Float16(kNaN), Float16(2.f)})});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  ExpectNear(h, {kNaN, kNaN});
  // Sum and Mean: NaN + anything = NaN.
  ExpectNear(Eval("Sum", {a, b}), {kNaN, kNaN, 3});
  ExpectNear(Eval("Mean", {a, b}), {kNaN, kNaN, 1.5});
}

TEST(ElementwiseVariadic, IntegerMaxMin) {
  // Max-12/Min-12 admit integers. int64 [2^53+1, -5] vs [2^53, -6]:
  // max [2^53+1, -5], min [2^53, -6] (exact beyond 2^53).
  const int64_t k53 = int64_t{1} << 53;
  Tensor a = I64({2}, {k53 + 1, -5});
  Tensor b = I64({2}, {k53, -6});
  Tensor mx = Eval("Max", {a, b});
  EXPECT_EQ(mx.dtype(), DType::kInt64);
  EXPECT_THAT(Values<int64_t>(mx), ElementsAre(k53 + 1, -5));
  EXPECT_THAT(Values<int64_t>(Eval("Min", {a, b})), ElementsAre(k53, -6));
  // uint8 [200, 3] vs [100, 250] (unsigned order): max [200, 250], min [100, 3].
  Tensor u = Make<uint8_t>(DType::kUint8, {2}, {200, 3});
  Tensor v = Make<uint8_t>(DType::kUint8, {2}, {100, 250});
  EXPECT_THAT(Values<uint8_t>(Eval("Max", {u, v})), ElementsAre(200, 250));
  EXPECT_THAT(Values<uint8_t>(Eval("Min", {u, v})), ElementsAre(100, 3));
  // int32 three inputs with broadcasting: [2,1]=[-1,7], [2]=[0,9], rank 0=4:
  // max [[4,9],[7,9]], min [[-1,-1],[0,4]].
  Tensor p = I32({2, 1}, {-1, 7});
  Tensor q = I32({2}, {0, 9});
  Tensor r = I32(kScalar, {4});
  EXPECT_THAT(Values<int32_t>(Eval("Max", {p, q, r})), ElementsAre(4, 9, 7, 9));
  EXPECT_THAT(Values<int32_t>(Eval("Min", {p, q, r})), ElementsAre(-1, -1, 0, 4));
}

TEST(ElementwiseVariadic, Errors) {
  EXPECT_THAT(EvalError("Sum", {F32({2}, {1, 2}), F32({3}, {1, 2, 3})}), HasSubstr("node 'n0' (Sum)"));
  EXPECT_THAT(EvalError("Max", {F32({2}, {1, 2}), F32({1}, {1}), F32({3}, {1, 2, 3})}), HasSubstr("node 'n0' (Max)"));
  EXPECT_THAT(EvalError("Mean", {F32({1}, {1}), Make<double>(DType::kFloat64, {1}, {1})}), HasSubstr("node 'n0' (Mean)"));
  EXPECT_THAT(EvalError("Min", {I64({1}, {1}), I32({1}, {1})}), HasSubstr("node 'n0' (Min)"));
  // Sum and Mean are float-only; Max/Min admit integers only from opset 12.
  EXPECT_THAT(EvalError("Sum", {I64({1}, {1}), I64({1}, {2})}), HasSubstr("node 'n0' (Sum)"));
  EXPECT_THAT(EvalError("Mean", {I32({1}, {1})}), HasSubstr("node 'n0' (Mean)"));
  EXPECT_THAT(EvalError("Max", {I64({1}, {1}), I64({1}, {2})}, {}, 11), HasSubstr("node 'n0' (Max)"));
  EXPECT_THAT(EvalError("Min", {Bools({1}, {T}), Bools({1}, {F})}), HasSubstr("node 'n0' (Min)"));
  EXPECT_THAT(EvalError("Sum", {}), HasSubstr("node 'n0' (Sum)"));
}

}  // namespace
}  // namespace kiln
