// Unit tests of Cast and CastLike on the reference provider. Expected values
// follow the ONNX Cast rules, worked by hand in the comments:
//  - float -> integer truncates toward zero; float -> bool: +-0.0 is false,
//    everything else (NaN included) true; integer -> bool: nonzero is true;
//    bool -> number: 1 / 0.
//  - float -> float rounds to nearest even, +-inf when out of range;
//    integer -> float likewise (+inf for an out-of-range unsigned).
//  - integer -> integer out of range discards the high bits (two's complement).
//  - string <-> number: plain and scientific decimals, "+INF"/"INF"/"-INF"/
//    "NaN" in any case.
// float16 / bfloat16 results are checked bit by bit.
#include <cmath>
#include <cstdint>
#include <cstring>
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

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr bool T = true;
constexpr bool F = false;

Tensor Eval(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, int64_t opset = 18) {
  auto r = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().ToString();
  return r.ok() ? (*r)[0] : Tensor();
}

std::string EvalError(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs,
                      int64_t opset = 18) {
  auto r = RunNode(op, in, attrs, 1, opset);
  EXPECT_FALSE(r.ok()) << op << " should have failed";
  return r.ok() ? "" : r.status().ToString();
}

// Cast(x, to=t); checks the output dtype and shape.
Tensor Cast(const Tensor& x, DType to, int64_t opset = 18) {
  Tensor y = Eval("Cast", {x}, {Attribute::Int("to", static_cast<int64_t>(to))}, opset);
  if (y.defined()) {
    EXPECT_EQ(y.dtype(), to);
    EXPECT_EQ(y.shape(), x.shape());
  }
  return y;
}

template <typename T>
Tensor Make(DType t, const Shape& s, const std::vector<T>& v) { return Tensor::FromVector<T>(t, s, v); }
Tensor D64(const std::vector<double>& v) { return Make<double>(DType::kFloat64, {static_cast<int64_t>(v.size())}, v); }
Tensor F1(const std::vector<float>& v) { return F32({static_cast<int64_t>(v.size())}, v); }
Tensor L1(const std::vector<int64_t>& v) { return I64({static_cast<int64_t>(v.size())}, v); }
Tensor Half(const std::vector<uint16_t>& bits) {
  std::vector<Float16> v;
  for (uint16_t b : bits) v.push_back(Float16::FromBits(b));
  return Make<Float16>(DType::kFloat16, {static_cast<int64_t>(v.size())}, v);
}
Tensor BHalf(const std::vector<uint16_t>& bits) {
  std::vector<BFloat16> v;
  for (uint16_t b : bits) v.push_back(BFloat16::FromBits(b));
  return Make<BFloat16>(DType::kBFloat16, {static_cast<int64_t>(v.size())}, v);
}
Tensor Bools(const std::vector<bool>& v) {
  Tensor t = Tensor::Zeros(DType::kBool, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}
Tensor Strings(const std::vector<std::string>& v) {
  return Make<std::string>(DType::kString, {static_cast<int64_t>(v.size())}, v);
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> v;
  if (!t.defined()) return v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data<T>()[i]);
  return v;
}
// float16/bfloat16 bit patterns.
std::vector<uint16_t> Bits(const Tensor& t) {
  std::vector<uint16_t> v;
  if (!t.defined()) return v;
  EXPECT_EQ(DTypeSize(t.dtype()), 2u);
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.data<uint16_t>()[i]);
  return v;
}
uint32_t FloatBits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
uint64_t DoubleBits(double d) { uint64_t u; std::memcpy(&u, &d, 8); return u; }
bool IsHalfNaN(uint16_t b) { return (b & 0x7C00u) == 0x7C00u && (b & 0x3FFu) != 0; }
bool IsBf16NaN(uint16_t b) { return (b & 0x7F80u) == 0x7F80u && (b & 0x7Fu) != 0; }

const double k2m11 = std::ldexp(1.0, -11);
const double k2m8 = std::ldexp(1.0, -8);

// ---------------------------------------------------------------------------
// Float -> integer

// Truncation toward zero: -2.7 -> -2, -0.5 -> 0, 0.5 -> 0, 2.7 -> 2, -0 -> 0, 100.99 -> 100.
TEST(CastFloatToInt, TruncatesTowardZero) {
  Tensor x = F1({-2.7f, -0.5f, 0.5f, 2.7f, -0.0f, 100.99f});
  EXPECT_THAT(Values<int32_t>(Cast(x, DType::kInt32)), ElementsAre(-2, 0, 0, 2, 0, 100));
  EXPECT_THAT(Values<int8_t>(Cast(x, DType::kInt8)), ElementsAre(-2, 0, 0, 2, 0, 100));
  EXPECT_THAT(Values<int16_t>(Cast(x, DType::kInt16)), ElementsAre(-2, 0, 0, 2, 0, 100));
  EXPECT_THAT(Values<int64_t>(Cast(x, DType::kInt64)), ElementsAre(-2, 0, 0, 2, 0, 100));
  // Unsigned targets, in range: 0.5 -> 0, 2.7 -> 2, 255.9 -> 255;
  // 65535.9f (= 65535.8984375) -> 65535; 4294967040.0f = 2^32 - 256 exactly.
  EXPECT_THAT(Values<uint8_t>(Cast(F1({0.5f, 2.7f, 255.9f}), DType::kUint8)), ElementsAre(0, 2, 255));
  EXPECT_THAT(Values<uint16_t>(Cast(F1({65535.9f, 1.99f}), DType::kUint16)), ElementsAre(65535, 1));
  EXPECT_THAT(Values<uint32_t>(Cast(F1({4294967040.0f}), DType::kUint32)), ElementsAre(4294967040u));
  // double: 1e10 -> 10000000000; -9.99 -> -9; 2^62 and -2^63 are exact int64s.
  EXPECT_THAT(Values<int64_t>(Cast(D64({1e10, -9.99, std::ldexp(1.0, 62), -std::ldexp(1.0, 63)}), DType::kInt64)),
              ElementsAre(10000000000LL, -9, 4611686018427387904LL, std::numeric_limits<int64_t>::min()));
  // 1.8e19 = 8789062500000000 * 2^11 is an exact double above INT64_MAX.
  EXPECT_THAT(Values<uint64_t>(Cast(D64({1.8e19, 0.999}), DType::kUint64)), ElementsAre(18000000000000000000ULL, 0u));
  // float16 2.5 (0x4100) -> 2, -2.5 (0xC100) -> -2; bfloat16 -3.5 (0xC060) -> -3.
  EXPECT_THAT(Values<int8_t>(Cast(Half({0x4100, 0xC100}), DType::kInt8)), ElementsAre(2, -2));
  EXPECT_THAT(Values<int32_t>(Cast(BHalf({0xC060}), DType::kInt32)), ElementsAre(-3));
}

// ---------------------------------------------------------------------------
// bool

TEST(CastBool, NonzeroIsTrue) {
  // Floats: +-0.0 -> false; 0.1, -3, NaN, inf -> true.
  auto b = Values<bool>(Cast(F1({0.f, -0.0f, 0.1f, -3.f, kNaN, kInf}), DType::kBool));
  EXPECT_THAT(b, ElementsAre(F, F, T, T, T, T));
  // float16 -0.0 (0x8000) -> false; smallest subnormal 2^-24 (0x0001) -> true; NaN (0x7E00) -> true.
  EXPECT_THAT(Values<bool>(Cast(Half({0x8000, 0x0001, 0x7E00}), DType::kBool)), ElementsAre(F, T, T));
  EXPECT_THAT(Values<bool>(Cast(BHalf({0x0000, 0x0001}), DType::kBool)), ElementsAre(F, T));
  // double 1e-300 is nonzero.
  EXPECT_THAT(Values<bool>(Cast(D64({1e-300, 0.0}), DType::kBool)), ElementsAre(T, F));
  // Integers: zero -> false, nonzero -> true. 2^40 has no low 32 bits set,
  // but is still nonzero.
  EXPECT_THAT(Values<bool>(Cast(Make<int32_t>(DType::kInt32, {3}, {0, 5, -1}), DType::kBool)), ElementsAre(F, T, T));
  EXPECT_THAT(Values<bool>(Cast(Make<uint8_t>(DType::kUint8, {2}, {0, 255}), DType::kBool)), ElementsAre(F, T));
  EXPECT_THAT(Values<bool>(Cast(L1({int64_t{1} << 40, 0}), DType::kBool)), ElementsAre(T, F));
  EXPECT_THAT(Values<bool>(Cast(Make<uint64_t>(DType::kUint64, {1}, {uint64_t{1} << 63}), DType::kBool)), ElementsAre(T));
}

TEST(CastBool, FromBoolIsOneOrZero) {
  Tensor x = Bools({T, F});
  EXPECT_THAT(Values<float>(Cast(x, DType::kFloat32)), ElementsAre(1.f, 0.f));
  EXPECT_THAT(Values<double>(Cast(x, DType::kFloat64)), ElementsAre(1.0, 0.0));
  EXPECT_THAT(Values<int64_t>(Cast(x, DType::kInt64)), ElementsAre(1, 0));
  EXPECT_THAT(Values<int8_t>(Cast(x, DType::kInt8)), ElementsAre(1, 0));
  EXPECT_THAT(Values<uint8_t>(Cast(x, DType::kUint8)), ElementsAre(1, 0));
  EXPECT_THAT(Values<uint64_t>(Cast(x, DType::kUint64)), ElementsAre(1u, 0u));
  // 1.0 is 0x3C00 in float16 and 0x3F80 in bfloat16.
  EXPECT_THAT(Bits(Cast(x, DType::kFloat16)), ElementsAre(0x3C00, 0x0000));
  EXPECT_THAT(Bits(Cast(x, DType::kBFloat16)), ElementsAre(0x3F80, 0x0000));
  EXPECT_THAT(Values<bool>(Cast(x, DType::kBool)), ElementsAre(T, F));
}

// ---------------------------------------------------------------------------
// To float16 / bfloat16: round to nearest, ties to even

TEST(CastToFloat16, RoundsToNearestEven) {
  // float16: 1 sign, 5 exponent (bias 15), 10 mantissa bits; spacing 2^-10 at 1.
  //   1.0                    -> 0x3C00
  //   1 + 2^-11 (a tie)      -> 0x3C00 (even)
  //   1 + 3*2^-11 (a tie between 0x3C01 and 0x3C02) -> 0x3C02 (even)
  //   1 + 2^-11 + 2^-20      -> above the tie: 0x3C01
  //   0.1 = 1.6*2^-4: exp 11, mantissa 0.6*1024 = 614.4 -> 614 = 0x266 -> 0x2E66
  //   65504 (max)            -> 0x7BFF; 65519 (below the tie 65520) -> 0x7BFF
  //   65520 (the tie between 65504, odd, and 65536, even) -> 65536: +inf 0x7C00
  //   1e5 -> +inf, -1e5 -> -inf (0xFC00)
  //   2^-24 (min subnormal)  -> 0x0001; 2^-25 (tie with 0) -> 0x0000;
  //   1.5*2^-25 -> 0x0001; 1.5*2^-24 (tie between 1 and 2 units) -> 0x0002
  //   -0.0 -> 0x8000, inf -> 0x7C00
  Tensor x = F1({1.f, static_cast<float>(1 + k2m11), static_cast<float>(1 + 3 * k2m11),
                 static_cast<float>(1 + k2m11 + std::ldexp(1.0, -20)), 0.1f, 65504.f, 65519.f, 65520.f, 1e5f, -1e5f,
                 std::ldexp(1.f, -24), std::ldexp(1.f, -25), 1.5f * std::ldexp(1.f, -25), 1.5f * std::ldexp(1.f, -24),
                 -0.0f, kInf});
  EXPECT_THAT(Bits(Cast(x, DType::kFloat16)),
              ElementsAre(0x3C00, 0x3C00, 0x3C02, 0x3C01, 0x2E66, 0x7BFF, 0x7BFF, 0x7C00, 0x7C00, 0xFC00, 0x0001, 0x0000,
                          0x0001, 0x0002, 0x8000, 0x7C00));
  // NaN stays NaN (exponent all ones, mantissa nonzero), from float and double.
  auto n = Bits(Cast(F1({kNaN}), DType::kFloat16));
  ASSERT_EQ(n.size(), 1u);
  EXPECT_TRUE(IsHalfNaN(n[0])) << std::hex << n[0];
  auto nd = Bits(Cast(D64({std::nan("")}), DType::kFloat16));
  ASSERT_EQ(nd.size(), 1u);
  EXPECT_TRUE(IsHalfNaN(nd[0])) << std::hex << nd[0];
}

TEST(CastToBFloat16, RoundsToNearestEven) {
  // bfloat16: float32's top 16 bits; 8 significant bits, spacing 2^-7 at 1.
  //   1.0 -> 0x3F80; 1 + 2^-8 (tie) -> 0x3F80; 1 + 3*2^-8 (tie between
  //   0x3F81 and 0x3F82) -> 0x3F82; 1 + 2^-8 + 2^-16 -> 0x3F81.
  //   pi = 1.5707963*2: mantissa 0.5707963*128 = 73.06 -> 73 = 0x49, exp 128 -> 0x4049.
  //   0x7F7F0000 (bfloat16's max, 3.3895314e38) is exact -> 0x7F7F.
  //   FLT_MAX = (2-2^-23)*2^127 is above the tie (2-2^-8)*2^127 -> +inf 0x7F80.
  //   -inf -> 0xFF80; -0.0 -> 0x8000; 2^-149 (float's min subnormal) is far
  //   below half of bfloat16's 2^-133 -> 0x0000.
  float bf_max;
  const uint32_t bf_max_bits = 0x7F7F0000u;
  std::memcpy(&bf_max, &bf_max_bits, 4);
  Tensor x = F1({1.f, static_cast<float>(1 + k2m8), static_cast<float>(1 + 3 * k2m8),
                 static_cast<float>(1 + k2m8 + std::ldexp(1.0, -16)), 3.14159265f, bf_max,
                 std::numeric_limits<float>::max(), -kInf, -0.0f, std::ldexp(1.f, -149)});
  EXPECT_THAT(Bits(Cast(x, DType::kBFloat16)),
              ElementsAre(0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x4049, 0x7F7F, 0x7F80, 0xFF80, 0x8000, 0x0000));
  auto n = Bits(Cast(F1({kNaN, -kNaN}), DType::kBFloat16));
  ASSERT_EQ(n.size(), 2u);
  EXPECT_TRUE(IsBf16NaN(n[0])) << std::hex << n[0];
  EXPECT_TRUE(IsBf16NaN(n[1])) << std::hex << n[1];
  // bfloat16 joined Cast's types in opset 13.
  EXPECT_THAT(EvalError("Cast", {F1({1})}, {Attribute::Int("to", 16)}, 12), HasSubstr("node 'n0' (Cast)"));
}

// One rounding from the exact value: a double just above a float16/bfloat16
// tie must round up, though rounding it to float first would land on the tie.
TEST(CastToHalf, FromDoubleRoundsOnce) {
  // 1 + 2^-11 + 2^-40: float would give 1 + 2^-11 (tie -> 0x3C00); the exact
  // value is above the tie -> 0x3C01.
  EXPECT_THAT(Bits(Cast(D64({1 + k2m11 + std::ldexp(1.0, -40), 65519.99, 65520.0, -1e300}), DType::kFloat16)),
              ElementsAre(0x3C01, 0x7BFF, 0x7C00, 0xFC00));
  // bfloat16: 1 + 2^-8 + 2^-40 -> 0x3F81; 1e39 (beyond float) -> +inf.
  EXPECT_THAT(Bits(Cast(D64({1 + k2m8 + std::ldexp(1.0, -40), 1e39, 1 + k2m8}), DType::kBFloat16)),
              ElementsAre(0x3F81, 0x7F80, 0x3F80));
}

TEST(CastToHalf, FromIntegers) {
  // float16 spacing is 2 in [2048, 4096): 2049 is a tie -> 2048 (0x6800,
  // even); 2051 is a tie between 2050 (0x6801) and 2052 (0x6802) -> 0x6802.
  // Beyond the range: 65520 -> +inf, -70000 -> -inf; -3 -> 0xC200.
  EXPECT_THAT(Bits(Cast(L1({2049, 2051, 65519, 65520, -70000, -3}), DType::kFloat16)),
              ElementsAre(0x6800, 0x6802, 0x7BFF, 0x7C00, 0xFC00, 0xC200));
  EXPECT_THAT(Bits(Cast(Make<int32_t>(DType::kInt32, {2}, {65520, 2049}), DType::kFloat16)), ElementsAre(0x7C00, 0x6800));
  // uint64 max is out of float16's range: +inf.
  EXPECT_THAT(Bits(Cast(Make<uint64_t>(DType::kUint64, {1}, {std::numeric_limits<uint64_t>::max()}), DType::kFloat16)),
              ElementsAre(0x7C00));
  // bfloat16 spacing is 2 in [256, 512): 257 (tie) -> 256 = 0x4380;
  // 259 (tie between 0x4381 and 0x4382) -> 0x4382.
  EXPECT_THAT(Bits(Cast(L1({257, 259}), DType::kBFloat16)), ElementsAre(0x4380, 0x4382));
  // 2^62 + 2^54 + 1: bfloat16 keeps bits 62..55; bit 54 is the half-ulp and
  // bit 0 makes it more than half: round up to 2^62 + 2^55 = (1 + 2^-7)*2^62
  // -> exponent 62+127 = 0xBD, mantissa 1: 0x5E81. (Through double, bit 0
  // would be lost and the tie would go to even, 0x5E80.)
  EXPECT_THAT(Bits(Cast(L1({(int64_t{1} << 62) + (int64_t{1} << 54) + 1}), DType::kBFloat16)), ElementsAre(0x5E81));
  // Negative: -(2^62 + 2^54 + 1) -> 0xDE81.
  EXPECT_THAT(Bits(Cast(L1({-((int64_t{1} << 62) + (int64_t{1} << 54) + 1)}), DType::kBFloat16)), ElementsAre(0xDE81));
  // uint64 2^63 + 2^55 + 1 -> 2^63 + 2^56 = (1 + 2^-7)*2^63: exponent 0xBE, mantissa 1 -> 0x5F01.
  EXPECT_THAT(Bits(Cast(Make<uint64_t>(DType::kUint64, {1}, {(uint64_t{1} << 63) + (uint64_t{1} << 55) + 1}), DType::kBFloat16)),
              ElementsAre(0x5F01));
  // And float16 from a large int64 just overflows.
  EXPECT_THAT(Bits(Cast(L1({std::numeric_limits<int64_t>::min()}), DType::kFloat16)), ElementsAre(0xFC00));
}

// ---------------------------------------------------------------------------
// Other float conversions

TEST(CastFloatToFloat, NarrowingAndWidening) {
  // double -> float: 1 + 2^-24 is a tie between 1 and 1 + 2^-23 -> 1;
  // 1 + 3*2^-24 -> 1 + 2^-22 (even); 1e39 -> +inf; -1e39 -> -inf; 1e-50 -> 0.
  Tensor f = Cast(D64({1 + std::ldexp(1.0, -24), 1 + 3 * std::ldexp(1.0, -24), 1e39, -1e39, 1e-50, std::nan("")}),
                  DType::kFloat32);
  auto v = Values<float>(f);
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], static_cast<float>(1 + std::ldexp(1.0, -22)));
  EXPECT_EQ(v[2], kInf);
  EXPECT_EQ(v[3], -kInf);
  EXPECT_EQ(FloatBits(v[4]), 0u);
  EXPECT_TRUE(std::isnan(v[5]));
  // float -> double is exact: 0.1f = 0.100000001490116119384765625.
  EXPECT_THAT(Values<double>(Cast(F1({0.1f, -kInf}), DType::kFloat64)), ElementsAre(0.100000001490116119384765625, -kInf));
  // float16 -> float is exact: 0x3C01 = 1 + 2^-10, 0x0001 = 2^-24, 0x7BFF = 65504, 0xFC00 = -inf.
  EXPECT_THAT(Values<float>(Cast(Half({0x3C01, 0x0001, 0x7BFF, 0xFC00}), DType::kFloat32)),
              ElementsAre(1.0009765625f, std::ldexp(1.f, -24), 65504.f, -kInf));
  EXPECT_THAT(Values<double>(Cast(Half({0x3555}), DType::kFloat64)), ElementsAre(0.333251953125));  // 0x155/1024+1 = 1.33301 * 2^-2
  // bfloat16 -> float: 0x4049 = 3.140625, 0x7F7F = 3.3895314e38.
  EXPECT_THAT(Values<float>(Cast(BHalf({0x4049}), DType::kFloat32)), ElementsAre(3.140625f));
  // float16 -> bfloat16: 1 + 2^-10 is below bfloat16's half ulp 2^-8 -> 1.0 (0x3F80);
  // 65504 = (2 - 2^-10)*2^15 rounds to 8 bits as 2^16 -> exponent 143: 0x4780.
  EXPECT_THAT(Bits(Cast(Half({0x3C01, 0x7BFF}), DType::kBFloat16)), ElementsAre(0x3F80, 0x4780));
  // bfloat16 -> float16: 3.3895314e38 and 1e5-ish are out of range -> +inf; 0x3F80 -> 0x3C00.
  // 0x47C3 = 1.5234375 * 2^16 = 99840 -> +inf.
  EXPECT_THAT(Bits(Cast(BHalf({0x7F7F, 0x47C3, 0x3F80}), DType::kFloat16)), ElementsAre(0x7C00, 0x7C00, 0x3C00));
  // NaN keeps NaN through double -> float16 -> bfloat16 -> float.
  Tensor nan = Cast(Cast(Cast(D64({std::nan("")}), DType::kFloat16), DType::kBFloat16), DType::kFloat32);
  ASSERT_EQ(nan.numel(), 1);
  EXPECT_TRUE(std::isnan(nan.data<float>()[0]));
}

TEST(CastIntToFloat, RoundsToNearestEven) {
  // float has 24 significant bits: 2^24 + 1 (a tie) -> 2^24; 2^24 + 3 (a tie
  // between 2^24+2, odd, and 2^24+4, even) -> 2^24 + 4.
  EXPECT_THAT(Values<float>(Cast(L1({16777217, 16777219, -16777217}), DType::kFloat32)),
              ElementsAre(16777216.f, 16777220.f, -16777216.f));
  // double has 53: 2^53 + 1 -> 2^53; 2^53 + 3 -> 2^53 + 4; INT64_MAX -> 2^63.
  const int64_t k53 = int64_t{1} << 53;
  EXPECT_THAT(Values<double>(Cast(L1({k53 + 1, k53 + 3, std::numeric_limits<int64_t>::max()}), DType::kFloat64)),
              ElementsAre(9007199254740992.0, 9007199254740996.0, 9223372036854775808.0));
  // uint64 max = 2^64 - 1 -> 2^64 in float (finite) and double.
  Tensor u = Make<uint64_t>(DType::kUint64, {1}, {std::numeric_limits<uint64_t>::max()});
  EXPECT_THAT(Values<float>(Cast(u, DType::kFloat32)), ElementsAre(std::ldexp(1.f, 64)));
  EXPECT_THAT(Values<double>(Cast(u, DType::kFloat64)), ElementsAre(std::ldexp(1.0, 64)));
  // Small integers are exact in every float type.
  EXPECT_THAT(Values<float>(Cast(Make<int8_t>(DType::kInt8, {2}, {-128, 127}), DType::kFloat32)), ElementsAre(-128.f, 127.f));
  EXPECT_THAT(Values<double>(Cast(Make<uint32_t>(DType::kUint32, {1}, {4294967295u}), DType::kFloat64)),
              ElementsAre(4294967295.0));
}

// ---------------------------------------------------------------------------
// Integer -> integer

// Out of range: the high bits are discarded and the rest reinterpreted
// (two's complement), e.g. the spec's 200 (int16) -> -56 (int8).
TEST(CastIntToInt, DiscardsHighBits) {
  EXPECT_THAT(Values<int8_t>(Cast(Make<int16_t>(DType::kInt16, {1}, {200}), DType::kInt8)), ElementsAre(-56));
  // 300 - 256 = 44; -129 + 256 = 127; 127 stays; -128 stays.
  EXPECT_THAT(Values<int8_t>(Cast(Make<int32_t>(DType::kInt32, {4}, {300, -129, 127, -128}), DType::kInt8)),
              ElementsAre(44, 127, 127, -128));
  // 2^32 + 5 -> 5; 2^31 -> -2^31; -1 -> 0xFFFFFFFF as uint32.
  EXPECT_THAT(Values<int32_t>(Cast(L1({(int64_t{1} << 32) + 5, int64_t{1} << 31}), DType::kInt32)),
              ElementsAre(5, std::numeric_limits<int32_t>::min()));
  EXPECT_THAT(Values<uint32_t>(Cast(L1({-1}), DType::kUint32)), ElementsAre(4294967295u));
  EXPECT_THAT(Values<uint64_t>(Cast(L1({-1}), DType::kUint64)), ElementsAre(std::numeric_limits<uint64_t>::max()));
  EXPECT_THAT(Values<int64_t>(Cast(Make<uint64_t>(DType::kUint64, {1}, {std::numeric_limits<uint64_t>::max()}), DType::kInt64)),
              ElementsAre(-1));
  EXPECT_THAT(Values<int8_t>(Cast(Make<uint8_t>(DType::kUint8, {2}, {200, 127}), DType::kInt8)), ElementsAre(-56, 127));
  EXPECT_THAT(Values<int16_t>(Cast(Make<uint32_t>(DType::kUint32, {1}, {4294967295u}), DType::kInt16)), ElementsAre(-1));
  // 70000 = 65536 + 4464 -> uint16 4464.
  EXPECT_THAT(Values<uint16_t>(Cast(Make<int32_t>(DType::kInt32, {1}, {70000}), DType::kUint16)), ElementsAre(4464));
  // Widening keeps the value: int8 -128 -> int64 -128; uint16 65535 -> int32 65535.
  EXPECT_THAT(Values<int64_t>(Cast(Make<int8_t>(DType::kInt8, {1}, {-128}), DType::kInt64)), ElementsAre(-128));
  EXPECT_THAT(Values<int32_t>(Cast(Make<uint16_t>(DType::kUint16, {1}, {65535}), DType::kInt32)), ElementsAre(65535));
  // int64 values beyond 2^53 survive exactly (no trip through double).
  const int64_t big = 9007199254740993LL;  // 2^53 + 1
  EXPECT_THAT(Values<int64_t>(Cast(L1({big, std::numeric_limits<int64_t>::max()}), DType::kInt64)),
              ElementsAre(big, std::numeric_limits<int64_t>::max()));
  EXPECT_THAT(Values<uint64_t>(Cast(L1({big}), DType::kUint64)), ElementsAre(9007199254740993ULL));
  EXPECT_THAT(Values<int64_t>(Cast(Make<uint64_t>(DType::kUint64, {1}, {9007199254740993ULL}), DType::kInt64)),
              ElementsAre(big));
}

// ---------------------------------------------------------------------------
// Strings

TEST(CastString, ParsesNumbers) {
  // Plain and scientific notation; +INF / INF / -INF / NaN in any case.
  auto f = Values<float>(Cast(Strings({"3.14", "1000", "1e-5", "1E8", "+INF", "INF", "-INF", "inf", "-inf", "+Inf"}),
                              DType::kFloat32));
  EXPECT_THAT(f, ElementsAre(3.14f, 1000.f, 1e-5f, 1e8f, kInf, kInf, -kInf, kInf, -kInf, kInf));
  auto n = Values<float>(Cast(Strings({"NaN", "nan", "NAN"}), DType::kFloat32));
  ASSERT_EQ(n.size(), 3u);
  for (float x : n) EXPECT_TRUE(std::isnan(x));
  EXPECT_THAT(Values<double>(Cast(Strings({"0.1", "-2.5e-3", "1e308"}), DType::kFloat64)), ElementsAre(0.1, -2.5e-3, 1e308));
  // float16: "0.1" -> 0x2E66 (see CastToFloat16); "65520" -> +inf.
  EXPECT_THAT(Bits(Cast(Strings({"0.1", "65520", "-2"}), DType::kFloat16)), ElementsAre(0x2E66, 0x7C00, 0xC000));
  EXPECT_THAT(Bits(Cast(Strings({"1", "-INF"}), DType::kBFloat16)), ElementsAre(0x3F80, 0xFF80));
  // Integers: "1000" -> 1000, "-7" -> -7; the spec's "100.5" -> 100.
  EXPECT_THAT(Values<int32_t>(Cast(Strings({"1000", "-7", "100.5"}), DType::kInt32)), ElementsAre(1000, -7, 100));
  // int64 text is read exactly: 2^53 + 1 and INT64_MAX.
  EXPECT_THAT(Values<int64_t>(Cast(Strings({"9007199254740993", "9223372036854775807"}), DType::kInt64)),
              ElementsAre(9007199254740993LL, std::numeric_limits<int64_t>::max()));
  EXPECT_THAT(Values<uint64_t>(Cast(Strings({"18446744073709551615"}), DType::kUint64)),
              ElementsAre(std::numeric_limits<uint64_t>::max()));
  EXPECT_THAT(Values<uint8_t>(Cast(Strings({"255", "0"}), DType::kUint8)), ElementsAre(255, 0));
}

TEST(CastString, FormatsNumbers) {
  // float32 314.15926f is 314.159271240234375; float spacing there is
  // 2^-15 = 3.05e-5, so 8 digits are needed ("314.1593" reads back to another
  // float). Of the 8-digit texts that read back ("314.15926" and "314.15927"),
  // the shortest-round-trip rule (numpy's str) takes the nearest: "314.15927".
  EXPECT_THAT(Values<std::string>(Cast(F1({314.15926f, 1.5f, -0.25f, 100.5f}), DType::kString)),
              ElementsAre("314.15927", "1.5", "-0.25", "100.5"));
  EXPECT_THAT(Values<std::string>(Cast(D64({314.15926, -0.125}), DType::kString)), ElementsAre("314.15926", "-0.125"));
  EXPECT_THAT(Values<std::string>(Cast(Make<int32_t>(DType::kInt32, {3}, {-7, 0, 42}), DType::kString)),
              ElementsAre("-7", "0", "42"));
  EXPECT_THAT(Values<std::string>(Cast(L1({std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}), DType::kString)),
              ElementsAre("9223372036854775807", "-9223372036854775808"));
  EXPECT_THAT(Values<std::string>(Cast(Make<uint64_t>(DType::kUint64, {1}, {std::numeric_limits<uint64_t>::max()}), DType::kString)),
              ElementsAre("18446744073709551615"));
  EXPECT_THAT(Values<std::string>(Cast(Make<uint8_t>(DType::kUint8, {1}, {255}), DType::kString)), ElementsAre("255"));
  EXPECT_THAT(Values<std::string>(Cast(Strings({"keep", ""}), DType::kString)), ElementsAre("keep", ""));
}

// number -> string -> number gives back the same value, bit for bit.
TEST(CastString, RoundTrips) {
  const std::vector<float> fv = {0.1f, 1.f / 3, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                                 -2.5e-8f, 16777216.f, 1e20f, -0.0f};
  auto back = Values<float>(Cast(Cast(F1(fv), DType::kString), DType::kFloat32));
  ASSERT_EQ(back.size(), fv.size());
  for (size_t i = 0; i < fv.size(); ++i) EXPECT_EQ(FloatBits(back[i]), FloatBits(fv[i])) << "index " << i << " " << fv[i];
  const std::vector<double> dv = {0.1, 1.0 / 3, 1e300, std::numeric_limits<double>::denorm_min(), 9007199254740994.0, -7e-200};
  auto dback = Values<double>(Cast(Cast(D64(dv), DType::kString), DType::kFloat64));
  ASSERT_EQ(dback.size(), dv.size());
  for (size_t i = 0; i < dv.size(); ++i) EXPECT_EQ(DoubleBits(dback[i]), DoubleBits(dv[i])) << "index " << i;
  // float16 0x3C01 (1.0009765625), 0x0001 (2^-24), 0x7BFF (65504), 0xB555.
  EXPECT_THAT(Bits(Cast(Cast(Half({0x3C01, 0x0001, 0x7BFF, 0xB555}), DType::kString), DType::kFloat16)),
              ElementsAre(0x3C01, 0x0001, 0x7BFF, 0xB555));
  EXPECT_THAT(Bits(Cast(Cast(BHalf({0x4049, 0x0001, 0x7F7F}), DType::kString), DType::kBFloat16)),
              ElementsAre(0x4049, 0x0001, 0x7F7F));
  // int64 extremes.
  const std::vector<int64_t> iv = {std::numeric_limits<int64_t>::min(), -1, 0, 9007199254740993LL};
  EXPECT_EQ(Values<int64_t>(Cast(Cast(L1(iv), DType::kString), DType::kInt64)), iv);
}

// ---------------------------------------------------------------------------
// Attribute forms, CastLike, shapes

TEST(CastAttributes, OpsetForms) {
  // Cast-1 named the target type by string.
  EXPECT_THAT(Values<int32_t>(Eval("Cast", {F1({1.9f, -1.9f})}, {Attribute::String("to", "INT32")}, 1)), ElementsAre(1, -1));
  Tensor d = Eval("Cast", {F1({0.5f})}, {Attribute::String("to", "DOUBLE")}, 1);
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_THAT(Values<double>(d), ElementsAre(0.5));
  // Cast-6 onwards: the TensorProto.DataType number (6 = INT32, 10 = FLOAT16).
  EXPECT_THAT(Values<int32_t>(Eval("Cast", {F1({2.5f})}, {Attribute::Int("to", 6)}, 6)), ElementsAre(2));
  EXPECT_THAT(Bits(Eval("Cast", {F1({2.5f})}, {Attribute::Int("to", 10)}, 9)), ElementsAre(0x4100));
  // Cast-19's `saturate` only concerns float8 targets; for other types it
  // changes nothing: 1e5 -> float16 is +inf either way, 2.7 -> int32 is 2.
  for (int64_t sat : {0, 1}) {
    Tensor h = Eval("Cast", {F1({1e5f, 1.f})}, {Attribute::Int("to", 10), Attribute::Int("saturate", sat)}, 19);
    EXPECT_THAT(Bits(h), ElementsAre(0x7C00, 0x3C00)) << "saturate=" << sat;
    Tensor i = Eval("Cast", {F1({2.7f})}, {Attribute::Int("to", 6), Attribute::Int("saturate", sat)}, 19);
    EXPECT_THAT(Values<int32_t>(i), ElementsAre(2));
  }
}

TEST(CastAttributes, ShapesAreKept) {
  Tensor s = Cast(F32({}, {-3.5f}), DType::kInt64);  // rank 0
  EXPECT_THAT(Values<int64_t>(s), ElementsAre(-3));
  Tensor e = Cast(F32({2, 0}, {}), DType::kFloat16);
  EXPECT_EQ(e.numel(), 0);
  Tensor m = Cast(F32({2, 2, 1}, {1.5f, -1.5f, 0.f, 9.9f}), DType::kInt8);
  EXPECT_THAT(Values<int8_t>(m), ElementsAre(1, -1, 0, 9));
}

TEST(CastLike, TakesTheSecondInputsType) {
  // Output: X's shape, `target_type`'s dtype (its values and shape are unused).
  Tensor x = F32({2, 1}, {-1.5f, 2.5f});
  Tensor y = Eval("CastLike", {x, Make<int32_t>(DType::kInt32, {3}, {7, 8, 9})}, {}, 15);
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_THAT(Values<int32_t>(y), ElementsAre(-1, 2));
  // -1.5 and 2.5 are exact in float16: 0xBE00, 0x4100.
  Tensor h = Eval("CastLike", {x, Half({0})}, {}, 15);
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_THAT(Bits(h), ElementsAre(0xBE00, 0x4100));
  // Rounding as Cast: 1 + 3*2^-8 -> bfloat16 0x3F82.
  EXPECT_THAT(Bits(Eval("CastLike", {F1({static_cast<float>(1 + 3 * k2m8)}), BHalf({0})}, {}, 15)), ElementsAre(0x3F82));
  EXPECT_THAT(Values<bool>(Eval("CastLike", {F1({0.f, -2.f}), Bools({F})}, {}, 15)), ElementsAre(F, T));
  EXPECT_THAT(Values<int8_t>(Eval("CastLike", {Make<int16_t>(DType::kInt16, {1}, {200}), Make<int8_t>(DType::kInt8, {}, {0})}, {}, 15)),
              ElementsAre(-56));
  EXPECT_THAT(Values<double>(Eval("CastLike", {L1({9007199254740993LL}), D64({0})}, {}, 15)), ElementsAre(9007199254740992.0));
  EXPECT_THAT(Values<std::string>(Eval("CastLike", {L1({-42}), Strings({""})}, {}, 15)), ElementsAre("-42"));
  EXPECT_THAT(Values<float>(Eval("CastLike", {Strings({"1e-5"}), F1({0})}, {}, 15)), ElementsAre(1e-5f));
}

TEST(CastErrors, BadTargetsAndInputs) {
  Tensor x = F1({1});
  // 0 is UNDEFINED, 99 names no type, 17 (FLOAT8E4M3FN) is not supported.
  EXPECT_THAT(EvalError("Cast", {x}, {Attribute::Int("to", 0)}), HasSubstr("'to'"));
  EXPECT_THAT(EvalError("Cast", {x}, {Attribute::Int("to", 99)}), HasSubstr("node 'n0' (Cast)"));
  EXPECT_THAT(EvalError("Cast", {x}, {Attribute::Int("to", 17)}, 19), HasSubstr("'to'"));
  EXPECT_THAT(EvalError("Cast", {x}, {Attribute::Int("to", -1)}), HasSubstr("'to'"));
  EXPECT_THAT(EvalError("Cast", {x}, {}), HasSubstr("'to'"));
  EXPECT_THAT(EvalError("Cast", {x}, {Attribute::String("to", "FLOAT128")}, 1), HasSubstr("node 'n0' (Cast)"));
  // The spec leaves non-numeric text undefined; the oracle reports it.
  EXPECT_THAT(EvalError("Cast", {Strings({"1", "Hello World!"})}, {Attribute::Int("to", 1)}), HasSubstr("node 'n0' (Cast)"));
  EXPECT_THAT(EvalError("Cast", {Strings({""})}, {Attribute::Int("to", 7)}), HasSubstr("node 'n0' (Cast)"));
  // CastLike needs both inputs, and exists from opset 15.
  EXPECT_THAT(EvalError("CastLike", {x, Tensor()}, {}, 15), HasSubstr("node 'n0' (CastLike)"));
  EXPECT_FALSE(RunNode("CastLike", {x, I64({1}, {0})}, {}, 1, 14).ok());
}

}  // namespace
}  // namespace kiln
