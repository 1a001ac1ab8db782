// Unit tests of the unary elementwise ops, activations and Clip on the
// reference provider. Expected values come from the spec's formulas, written
// out here (or well-known constants), not from kiln's output.
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ir::Attribute;
using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using testing::F32;
using testing::RunNode;
using testing::ToDoubles;
using testing::ToFloats;
using testing::ToInts;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Runs a one-output node; a failure is reported and gives an undefined tensor.
Tensor Eval(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs = {},
            int64_t opset = 18) {
  auto r = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? (*r)[0] : Tensor();
}

// The error message of a node that must fail.
std::string EvalError(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs = {},
                      int64_t opset = 18) {
  auto r = RunNode(op, in, attrs, 1, opset);
  EXPECT_FALSE(r.ok()) << op << " should have failed";
  return r.ok() ? "" : r.status().ToString();
}

template <typename T>
Tensor Make(DType t, const Shape& s, const std::vector<T>& v) { return Tensor::FromVector<T>(t, s, v); }

void ExpectNear(const Tensor& t, const std::vector<double>& want, double tol = 1e-6) {
  std::vector<double> got = ToDoubles(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << "index " << i;
    else if (std::isinf(want[i])) EXPECT_EQ(got[i], want[i]) << "index " << i;
    else EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << "index " << i;
  }
}

TEST(ElementwiseUnary, AbsNegOnFloatsAndWrappingIntegers) {
  ExpectNear(Eval("Abs", {F32({3}, {-1.5f, 0.f, 2.f})}), {1.5, 0, 2});
  ExpectNear(Eval("Neg", {F32({3}, {-1.5f, 0.f, 2.f})}), {1.5, 0, -2});
  // |INT32_MIN| and -INT8_MIN do not fit: two's complement wraps to themselves.
  Tensor i32 = Make<int32_t>(DType::kInt32, {3}, {-7, 5, std::numeric_limits<int32_t>::min()});
  Tensor a = Eval("Abs", {i32});
  EXPECT_EQ(a.dtype(), DType::kInt32);
  EXPECT_THAT(ToInts(a), ElementsAre(7, 5, std::numeric_limits<int32_t>::min()));
  EXPECT_THAT(ToInts(Eval("Neg", {Make<int8_t>(DType::kInt8, {2}, {5, -128})})), ElementsAre(-5, -128));
  EXPECT_THAT(ToInts(Eval("Abs", {Make<uint8_t>(DType::kUint8, {2}, {0, 255})})), ElementsAre(0, 255));
}

TEST(ElementwiseUnary, BasicMath) {
  const double e = std::exp(1.0);
  ExpectNear(Eval("Reciprocal", {F32({3}, {2.f, -4.f, 0.f})}), {0.5, -0.25, kInf});
  ExpectNear(Eval("Sqrt", {F32({3}, {4.f, 0.25f, -1.f})}), {2, 0.5, kNaN});
  ExpectNear(Eval("Exp", {F32({2}, {0.f, 1.f})}), {1, e});
  ExpectNear(Eval("Log", {F32({3}, {1.f, static_cast<float>(e), 0.f})}), {0, 1, -kInf});
  ExpectNear(Eval("Ceil", {F32({4}, {-1.5f, 1.2f, 2.f, -0.2f})}), {-1, 2, 2, 0});
  ExpectNear(Eval("Floor", {F32({4}, {-1.5f, 1.2f, 2.f, -0.2f})}), {-2, 1, 2, -1});
}

TEST(ElementwiseUnary, RoundIsHalfToEven) {
  Tensor y = Eval("Round", {F32({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4f, 2.6f})});
  EXPECT_THAT(ToFloats(y), ElementsAre(0.f, 2.f, 2.f, -0.f, -2.f, -2.f, 2.f, 3.f));
  EXPECT_TRUE(std::signbit(ToFloats(y)[3]));  // -0.5 rounds to -0
}

TEST(ElementwiseUnary, SignKeepsNaNAndWorksOnIntegers) {
  ExpectNear(Eval("Sign", {F32({4}, {-2.f, 0.f, 3.f, kNaN})}), {-1, 0, 1, kNaN});
  EXPECT_THAT(ToInts(Eval("Sign", {Make<int64_t>(DType::kInt64, {3}, {-9, 0, 4})})), ElementsAre(-1, 0, 1));
  EXPECT_THAT(ToInts(Eval("Sign", {Make<uint16_t>(DType::kUint16, {2}, {0, 7})})), ElementsAre(0, 1));
}

TEST(ElementwiseUnary, TrigonometricAndHyperbolic) {
  const double pi = std::acos(-1.0);
  ExpectNear(Eval("Sin", {F32({2}, {0.f, static_cast<float>(pi / 2)})}), {0, 1});
  ExpectNear(Eval("Cos", {F32({1}, {0.f})}), {1});
  ExpectNear(Eval("Tan", {F32({1}, {static_cast<float>(pi / 4)})}), {1});
  ExpectNear(Eval("Asin", {F32({2}, {1.f, 2.f})}), {pi / 2, kNaN});
  ExpectNear(Eval("Acos", {F32({1}, {1.f})}), {0});
  ExpectNear(Eval("Atan", {F32({1}, {1.f})}), {pi / 4});
  // sinh(1) = (e - 1/e)/2, cosh(1) = (e + 1/e)/2.
  const double e = std::exp(1.0);
  ExpectNear(Eval("Sinh", {F32({1}, {1.f})}), {(e - 1 / e) / 2});
  ExpectNear(Eval("Cosh", {F32({1}, {1.f})}), {(e + 1 / e) / 2});
  // asinh(x) = ln(x + sqrt(x^2+1)), acosh(x) = ln(x + sqrt(x^2-1)), atanh(x) = ln((1+x)/(1-x))/2.
  ExpectNear(Eval("Asinh", {F32({1}, {2.f})}), {std::log(2 + std::sqrt(5.0))});
  ExpectNear(Eval("Acosh", {F32({2}, {2.f, 0.5f})}), {std::log(2 + std::sqrt(3.0)), kNaN});
  ExpectNear(Eval("Atanh", {F32({1}, {0.5f})}), {std::log(3.0) / 2});
}

TEST(ElementwiseUnary, ErfAndHalfPrecision) {
  ExpectNear(Eval("Erf", {F32({3}, {0.f, 1.f, -1.f})}), {0, 0.8427007929497149, -0.8427007929497149});
  // float16 in, float16 out, rounded once.
  Tensor h = Make<Float16>(DType::kFloat16, {2}, {Float16(4.0f), Float16(2.0f)});
  Tensor y = Eval("Sqrt", {h});
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  ExpectNear(y, {2.0, std::sqrt(2.0)}, 1e-3);
  Tensor b = Make<BFloat16>(DType::kBFloat16, {1}, {BFloat16(1.0f)});
  EXPECT_EQ(Eval("Exp", {b}).dtype(), DType::kBFloat16);
  Tensor d = Make<double>(DType::kFloat64, {1}, {1.0});
  EXPECT_NEAR(ToDoubles(Eval("Exp", {d}))[0], std::exp(1.0), 1e-15);
}

TEST(ElementwiseUnary, IsNaNIsInfAndNot) {
  Tensor x = F32({4}, {1.f, kNaN, kInf, -kInf});
  Tensor n = Eval("IsNaN", {x});
  EXPECT_EQ(n.dtype(), DType::kBool);
  EXPECT_THAT(ToInts(n), ElementsAre(0, 1, 0, 0));
  EXPECT_THAT(ToInts(Eval("IsInf", {x})), ElementsAre(0, 0, 1, 1));
  EXPECT_THAT(ToInts(Eval("IsInf", {x}, {Attribute::Int("detect_negative", 0)})), ElementsAre(0, 0, 1, 0));
  EXPECT_THAT(ToInts(Eval("IsInf", {x}, {Attribute::Int("detect_positive", 0)})), ElementsAre(0, 0, 0, 1));
  Tensor b = Make<bool>(DType::kBool, {2}, {true, false});
  EXPECT_THAT(ToInts(Eval("Not", {b})), ElementsAre(0, 1));
}

TEST(ElementwiseActivation, ReluLeakyReluThresholdedRelu) {
  Tensor x = F32({4}, {-2.f, -0.5f, 0.f, 3.f});
  ExpectNear(Eval("Relu", {x}), {0, 0, 0, 3});
  // Relu-14 accepts signed integers.
  EXPECT_THAT(ToInts(Eval("Relu", {Make<int32_t>(DType::kInt32, {2}, {-3, 4})}, {}, 14)), ElementsAre(0, 4));
  ExpectNear(Eval("LeakyRelu", {x}), {-0.02, -0.005, 0, 3});  // default alpha 0.01
  ExpectNear(Eval("LeakyRelu", {x}, {Attribute::Float("alpha", 0.5f)}), {-1, -0.25, 0, 3});
  // ThresholdedRelu: x if x > alpha (default 1) else 0.
  ExpectNear(Eval("ThresholdedRelu", {F32({3}, {0.5f, 1.f, 2.f})}), {0, 0, 2});
  ExpectNear(Eval("ThresholdedRelu", {F32({3}, {0.5f, 1.f, 2.f})}, {Attribute::Float("alpha", 0.4f)}), {0.5, 1, 2});
}

TEST(ElementwiseActivation, SigmoidTanhHardSigmoidHardSwish) {
  ExpectNear(Eval("Sigmoid", {F32({3}, {0.f, 2.f, -100.f})}), {0.5, 1 / (1 + std::exp(-2.0)), 1 / (1 + std::exp(100.0))});
  ExpectNear(Eval("Tanh", {F32({2}, {0.f, 1.f})}), {0, (std::exp(2.0) - 1) / (std::exp(2.0) + 1)});
  // HardSigmoid: max(0, min(1, alpha*x + beta)), defaults alpha 0.2 beta 0.5.
  ExpectNear(Eval("HardSigmoid", {F32({3}, {-5.f, 1.f, 5.f})}), {0, 0.7, 1});
  ExpectNear(Eval("HardSigmoid", {F32({2}, {1.f, -1.f})}, {Attribute::Float("alpha", 0.5f), Attribute::Float("beta", 0.25f)}),
             {0.75, 0});
  // HardSwish: x * max(0, min(1, x/6 + 1/2)).
  ExpectNear(Eval("HardSwish", {F32({4}, {-4.f, 0.f, 1.f, 4.f})}), {0, 0, 1.0 * (1.0 / 6 + 0.5), 4});
}

TEST(ElementwiseActivation, EluSeluCelu) {
  Tensor x = F32({3}, {-1.f, 0.f, 2.f});
  const double em1 = std::exp(-1.0) - 1;
  ExpectNear(Eval("Elu", {x}), {em1, 0, 2});
  ExpectNear(Eval("Elu", {x}, {Attribute::Float("alpha", 2.f)}), {2 * em1, 0, 2});
  const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
  ExpectNear(Eval("Selu", {x}), {g * (a * std::exp(-1.0) - a), 0, g * 2}, 1e-6);
  ExpectNear(Eval("Selu", {x}, {Attribute::Float("alpha", 2.f), Attribute::Float("gamma", 3.f)}),
             {3 * (2 * std::exp(-1.0) - 2), 0, 6});
  // Celu: max(0,x) + min(0, alpha*(exp(x/alpha)-1)).
  ExpectNear(Eval("Celu", {x}, {Attribute::Float("alpha", 2.f)}), {2 * (std::exp(-0.5) - 1), 0, 2});
  ExpectNear(Eval("Celu", {x}), {em1, 0, 2});
}

TEST(ElementwiseActivation, SoftplusSoftsignShrinkMish) {
  ExpectNear(Eval("Softplus", {F32({3}, {0.f, 1.f, 100.f})}), {std::log(2.0), std::log(1 + std::exp(1.0)), 100});
  ExpectNear(Eval("Softsign", {F32({3}, {1.f, -3.f, 0.f})}), {0.5, -0.75, 0});
  Tensor x = F32({5}, {-2.f, -0.5f, 0.f, 0.5f, 2.f});
  // Shrink: x+bias if x < -lambd, x-bias if x > lambd, else 0 (default lambd 0.5, bias 0).
  ExpectNear(Eval("Shrink", {x}), {-2, 0, 0, 0, 2});
  ExpectNear(Eval("Shrink", {x}, {Attribute::Float("lambd", 1.f), Attribute::Float("bias", 1.f)}), {-1, 0, 0, 0, 1});
  EXPECT_THAT(ToInts(Eval("Shrink", {Make<int32_t>(DType::kInt32, {3}, {-5, 0, 5})}, {Attribute::Float("bias", 1.f)})),
              ElementsAre(-4, 0, 4));
  // Mish-18: x * tanh(ln(1 + e^x)).
  ExpectNear(Eval("Mish", {F32({2}, {1.f, -1.f})}),
             {std::tanh(std::log(1 + std::exp(1.0))), -std::tanh(std::log(1 + std::exp(-1.0)))});
}

TEST(ElementwiseClip, AttributesBeforeOpset11) {
  Tensor x = F32({4}, {-2.f, -0.25f, 0.25f, 2.f});
  ExpectNear(Eval("Clip", {x}, {Attribute::Float("min", -0.5f), Attribute::Float("max", 0.5f)}, 6), {-0.5, -0.25, 0.25, 0.5});
  ExpectNear(Eval("Clip", {x}, {Attribute::Float("max", 0.f)}, 6), {-2, -0.25, 0, 0});
  ExpectNear(Eval("Clip", {x}, {}, 6), {-2, -0.25, 0.25, 2});
}

TEST(ElementwiseClip, InputsFromOpset11AnyDType) {
  Tensor x = F32({4}, {-2.f, -0.25f, kNaN, 2.f});
  ExpectNear(Eval("Clip", {x, F32({}, {-1.f}), F32({}, {1.f})}, {}, 13), {-1, -0.25, kNaN, 1});
  ExpectNear(Eval("Clip", {x, Tensor(), F32({}, {0.f})}, {}, 13), {-2, -0.25, kNaN, 0});
  ExpectNear(Eval("Clip", {x, F32({}, {0.f})}, {}, 13), {0, 0, kNaN, 2});
  // min > max: every value becomes max.
  ExpectNear(Eval("Clip", {F32({2}, {-5.f, 5.f}), F32({}, {2.f}), F32({}, {1.f})}, {}, 13), {1, 1});
  Tensor i8 = Make<int8_t>(DType::kInt8, {3}, {-128, 0, 127});
  Tensor lo = Make<int8_t>(DType::kInt8, {}, {-10});
  Tensor hi = Make<int8_t>(DType::kInt8, {}, {10});
  EXPECT_THAT(ToInts(Eval("Clip", {i8, lo, hi}, {}, 13)), ElementsAre(-10, 0, 10));
}

TEST(ElementwiseErrors, BadDTypesAttributesAndShapes) {
  EXPECT_THAT(EvalError("Sqrt", {Make<int32_t>(DType::kInt32, {1}, {4})}), HasSubstr("node 'n0' (Sqrt)"));
  EXPECT_THAT(EvalError("Not", {F32({1}, {1.f})}), HasSubstr("unsupported dtype"));
  EXPECT_THAT(EvalError("Celu", {F32({1}, {1.f})}, {Attribute::Float("alpha", 0.f)}), HasSubstr("'alpha'"));
  EXPECT_THAT(EvalError("Clip", {F32({2}, {1.f, 2.f}), F32({2}, {0.f, 1.f})}, {}, 13), HasSubstr("must be a scalar"));
  EXPECT_THAT(EvalError("Clip", {F32({1}, {1.f}), Make<double>(DType::kFloat64, {}, {0.0})}, {}, 13),
              HasSubstr("same dtype"));
  EXPECT_THAT(EvalError("LeakyRelu", {F32({1}, {1.f})}, {Attribute::Int("alpha", 1)}), HasSubstr("node 'n0' (LeakyRelu)"));
}

}  // namespace
}  // namespace kiln
