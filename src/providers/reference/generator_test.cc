// Tests of the generator ops (Constant, ConstantOfShape, Range, EyeLike)
// and of Dropout at inference. Expected values follow the spec's
// definitions; each comment shows how they were worked out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ir::Attribute;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToFloats;
using testing::ToInts;

Tensor I32(const Shape& s, const std::vector<int32_t>& v) { return Tensor::FromVector<int32_t>(DType::kInt32, s, v); }
Tensor F64(const Shape& s, const std::vector<double>& v) { return Tensor::FromVector<double>(DType::kFloat64, s, v); }
Tensor Bool(const Shape& s, const std::vector<bool>& v) { return Tensor::FromVector<bool>(DType::kBool, s, v); }

Tensor Run1(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, int64_t opset = 18) {
  auto out = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return Tensor();
  return (*out)[0];
}

std::string RunError(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs,
                     int64_t opset = 18) {
  auto out = RunNode(op, in, attrs, 1, opset);
  EXPECT_FALSE(out.ok()) << op << " unexpectedly succeeded";
  if (out.ok()) return "";
  const std::string msg = out.status().ToString();
  EXPECT_THAT(msg, HasSubstr("'n0'"));
  return msg;
}

// ---------------------------------------------------------------- Constant

// `value`: the output is the attribute's tensor, dtype and shape included.
TEST(Constant, ValueTensor) {
  Tensor f = Run1("Constant", {}, {Attribute::TensorValue("value", F32({2, 2}, {1, -2, 3.5f, 4}))}, 1);
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(f.shape(), (Shape{2, 2}));
  EXPECT_THAT(ToFloats(f), ElementsAre(1, -2, 3.5f, 4));
  Tensor i = Run1("Constant", {}, {Attribute::TensorValue("value", I64({}, {-9}))}, 13);
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_EQ(i.shape(), (Shape{}));
  EXPECT_THAT(ToInts(i), ElementsAre(-9));
}

// value_float: a float32 scalar; value_floats: a 1-D float32 tensor (opset 12).
TEST(Constant, ValueFloatAndFloats) {
  Tensor s = Run1("Constant", {}, {Attribute::Float("value_float", 2.5f)}, 12);
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_THAT(ToFloats(s), ElementsAre(2.5f));
  Tensor v = Run1("Constant", {}, {Attribute::Floats("value_floats", {1.5f, -2.0f, 0.25f})}, 13);
  EXPECT_EQ(v.dtype(), DType::kFloat32);
  EXPECT_EQ(v.shape(), (Shape{3}));
  EXPECT_THAT(ToFloats(v), ElementsAre(1.5f, -2.0f, 0.25f));
}

// value_int: an int64 scalar; value_ints: a 1-D int64 tensor.
TEST(Constant, ValueIntAndInts) {
  Tensor s = Run1("Constant", {}, {Attribute::Int("value_int", 7)}, 12);
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_THAT(ToInts(s), ElementsAre(7));
  Tensor v = Run1("Constant", {}, {Attribute::Ints("value_ints", {1, -2, 3000000000LL})}, 13);
  EXPECT_EQ(v.dtype(), DType::kInt64);
  EXPECT_EQ(v.shape(), (Shape{3}));
  EXPECT_THAT(ToInts(v), ElementsAre(1, -2, 3000000000LL));
}

// value_string: a string scalar; value_strings: a 1-D string tensor.
TEST(Constant, ValueStringAndStrings) {
  Tensor s = Run1("Constant", {}, {Attribute::String("value_string", "abc")}, 12);
  ASSERT_EQ(s.dtype(), DType::kString);
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_EQ(s.data<std::string>()[0], "abc");
  Tensor v = Run1("Constant", {}, {Attribute::Strings("value_strings", {"x", "", "yz"})}, 12);
  ASSERT_EQ(v.dtype(), DType::kString);
  EXPECT_EQ(v.shape(), (Shape{3}));
  EXPECT_EQ(v.data<std::string>()[0], "x");
  EXPECT_EQ(v.data<std::string>()[1], "");
  EXPECT_EQ(v.data<std::string>()[2], "yz");
}

// Exactly one value attribute is required.
TEST(Constant, NoneOrTwoValueAttributesAreErrors) {
  RunError("Constant", {}, {}, 13);
  RunError("Constant", {}, {Attribute::Int("value_int", 1), Attribute::Float("value_float", 1)}, 13);
}

// --------------------------------------------------------- ConstantOfShape

// No value attribute: float32 zeros of the given shape.
TEST(ConstantOfShape, DefaultIsFloatZero) {
  Tensor out = Run1("ConstantOfShape", {I64({2}, {2, 3})}, {}, 9);
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(ToFloats(out), ElementsAre(0, 0, 0, 0, 0, 0));
}

// The value attribute's one element fills the output in its dtype.
TEST(ConstantOfShape, ValueAttribute) {
  Tensor i = Run1("ConstantOfShape", {I64({1}, {3})}, {Attribute::TensorValue("value", I64({1}, {7}))});
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_EQ(i.shape(), (Shape{3}));
  EXPECT_THAT(ToInts(i), ElementsAre(7, 7, 7));
  Tensor f = Run1("ConstantOfShape", {I64({2}, {1, 2})}, {Attribute::TensorValue("value", F32({1}, {1.5f}))});
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_THAT(ToFloats(f), ElementsAre(1.5f, 1.5f));
  Tensor i32 = Run1("ConstantOfShape", {I64({1}, {2})}, {Attribute::TensorValue("value", I32({1}, {-4}))});
  EXPECT_EQ(i32.dtype(), DType::kInt32);
  EXPECT_THAT(ToInts(i32), ElementsAre(-4, -4));
}

// Spec: "If empty tensor is given, the output would be a scalar." A zero
// dim gives an empty tensor.
TEST(ConstantOfShape, EmptyShapeIsScalarAndZeroDimIsEmpty) {
  Tensor s = Run1("ConstantOfShape", {I64({0}, {})}, {Attribute::TensorValue("value", I64({1}, {5}))});
  EXPECT_EQ(s.shape(), (Shape{}));
  EXPECT_THAT(ToInts(s), ElementsAre(5));
  Tensor e = Run1("ConstantOfShape", {I64({2}, {2, 0})}, {});
  EXPECT_EQ(e.shape(), (Shape{2, 0}));
  EXPECT_EQ(e.numel(), 0);
}

// Other value dtypes the spec allows: bool and float16.
TEST(ConstantOfShape, BoolAndHalfValues) {
  Tensor b = Run1("ConstantOfShape", {I64({1}, {2})}, {Attribute::TensorValue("value", Bool({1}, {true}))});
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_THAT(ToInts(b), ElementsAre(1, 1));
  Tensor h = Run1("ConstantOfShape", {I64({1}, {2})},
                  {Attribute::TensorValue("value", Tensor::FromVector<Float16>(DType::kFloat16, {1}, {Float16(0.5f)}))});
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_THAT(ToFloats(h), ElementsAre(0.5f, 0.5f));
}

TEST(ConstantOfShape, ValueMustHoldOneElement) {
  RunError("ConstantOfShape", {I64({1}, {2})}, {Attribute::TensorValue("value", F32({2}, {1, 2}))});
}

// ---------------------------------------------------------------- Range

// n = max(ceil((limit - start) / delta), 0), out[i] = start + i * delta.
TEST(Range, Float) {
  // Spec example 1: 3, 9, 3 -> n = 2: [3, 6].
  Tensor a = Run1("Range", {F32({}, {3}), F32({}, {9}), F32({}, {3})}, {}, 11);
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_EQ(a.shape(), (Shape{2}));
  EXPECT_THAT(ToFloats(a), ElementsAre(3, 6));
  // 1, 2, 0.25 -> n = 4: [1, 1.25, 1.5, 1.75] (exact in binary).
  Tensor b = Run1("Range", {F32({}, {1}), F32({}, {2}), F32({}, {0.25f})}, {}, 11);
  EXPECT_THAT(ToFloats(b), ElementsAre(1, 1.25f, 1.5f, 1.75f));
  // 0, 1, 0.375 -> ceil(2.67) = 3: [0, 0.375, 0.75]; double inputs too.
  Tensor d = Run1("Range", {F64({}, {0}), F64({}, {1}), F64({}, {0.375})}, {}, 11);
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_THAT(ToFloats(d), ElementsAre(0, 0.375f, 0.75f));
}

TEST(Range, Int) {
  // 0, 5, 2 -> ceil(2.5) = 3: [0, 2, 4].
  Tensor a = Run1("Range", {I64({}, {0}), I64({}, {5}), I64({}, {2})}, {}, 11);
  EXPECT_EQ(a.dtype(), DType::kInt64);
  EXPECT_THAT(ToInts(a), ElementsAre(0, 2, 4));
  // int32 -3, 3, 3 -> 2: [-3, 0].
  Tensor b = Run1("Range", {I32({}, {-3}), I32({}, {3}), I32({}, {3})}, {}, 11);
  EXPECT_EQ(b.dtype(), DType::kInt32);
  EXPECT_THAT(ToInts(b), ElementsAre(-3, 0));
}

TEST(Range, NegativeDelta) {
  // Spec example 2: 10, 4, -3 -> ceil(-6 / -3) = 2: [10, 7].
  Tensor a = Run1("Range", {I64({}, {10}), I64({}, {4}), I64({}, {-3})}, {}, 11);
  EXPECT_THAT(ToInts(a), ElementsAre(10, 7));
  // 10, 3, -3 -> ceil(-7 / -3) = ceil(2.33) = 3: [10, 7, 4].
  EXPECT_THAT(ToInts(Run1("Range", {I64({}, {10}), I64({}, {3}), I64({}, {-3})}, {}, 11)), ElementsAre(10, 7, 4));
  // int32 -1, -8, -2 -> ceil(3.5) = 4: [-1, -3, -5, -7].
  EXPECT_THAT(ToInts(Run1("Range", {I32({}, {-1}), I32({}, {-8}), I32({}, {-2})}, {}, 11)), ElementsAre(-1, -3, -5, -7));
  // Float 1, -1, -0.5 -> 4: [1, 0.5, 0, -0.5].
  Tensor b = Run1("Range", {F32({}, {1}), F32({}, {-1}), F32({}, {-0.5f})}, {}, 11);
  EXPECT_THAT(ToFloats(b), ElementsAre(1, 0.5f, 0, -0.5f));
}

// limit on the wrong side of start (or equal to it): n = 0.
TEST(Range, EmptyResult) {
  Tensor a = Run1("Range", {I64({}, {5}), I64({}, {1}), I64({}, {1})}, {}, 11);
  EXPECT_EQ(a.shape(), (Shape{0}));
  Tensor b = Run1("Range", {F32({}, {1}), F32({}, {1}), F32({}, {0.5f})}, {}, 11);
  EXPECT_EQ(b.shape(), (Shape{0}));
  Tensor c = Run1("Range", {F32({}, {0}), F32({}, {3}), F32({}, {-1})}, {}, 11);
  EXPECT_EQ(c.shape(), (Shape{0}));
}

TEST(Range, ZeroDeltaIsAnError) { RunError("Range", {I64({}, {0}), I64({}, {3}), I64({}, {0})}, {}, 11); }

// ---------------------------------------------------------------- EyeLike

// Ones where column == row + k.
TEST(EyeLike, DefaultK) {
  Tensor out = Run1("EyeLike", {F32({3, 3}, std::vector<float>(9, 5.0f))}, {}, 9);
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_THAT(ToFloats(out), ElementsAre(1, 0, 0, 0, 1, 0, 0, 0, 1));
}

TEST(EyeLike, PositiveAndNegativeK) {
  // 3x4, k = 1: (0,1), (1,2), (2,3).
  Tensor up = Run1("EyeLike", {F32({3, 4}, std::vector<float>(12, 0.0f))}, {Attribute::Int("k", 1)}, 9);
  EXPECT_THAT(ToFloats(up), ElementsAre(0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1));
  // 3x2, k = -1: (1,0), (2,1).
  Tensor down = Run1("EyeLike", {F32({3, 2}, std::vector<float>(6, 0.0f))}, {Attribute::Int("k", -1)}, 9);
  EXPECT_THAT(ToFloats(down), ElementsAre(0, 0, 1, 0, 0, 1));
  // k outside the matrix: all zeros.
  Tensor far = Run1("EyeLike", {F32({2, 2}, {0, 0, 0, 0})}, {Attribute::Int("k", 2)}, 9);
  EXPECT_THAT(ToFloats(far), ElementsAre(0, 0, 0, 0));
  Tensor farneg = Run1("EyeLike", {F32({2, 2}, {0, 0, 0, 0})}, {Attribute::Int("k", -2)}, 9);
  EXPECT_THAT(ToFloats(farneg), ElementsAre(0, 0, 0, 0));
}

// dtype overrides the input's dtype; without it the input's is kept.
TEST(EyeLike, DType) {
  Tensor i = Run1("EyeLike", {F32({2, 3}, std::vector<float>(6, 0.0f))}, {Attribute::Int("dtype", 7)}, 9);
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_THAT(ToInts(i), ElementsAre(1, 0, 0, 0, 1, 0));
  Tensor d = Run1("EyeLike", {I32({2, 2}, {4, 4, 4, 4})}, {Attribute::Int("dtype", 11), Attribute::Int("k", 1)}, 9);
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_THAT(ToFloats(d), ElementsAre(0, 1, 0, 0));
  Tensor b = Run1("EyeLike", {F32({2, 2}, {0, 0, 0, 0})}, {Attribute::Int("dtype", 9)}, 9);
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_THAT(ToInts(b), ElementsAre(1, 0, 0, 1));
  Tensor keep = Run1("EyeLike", {I32({2, 2}, {4, 4, 4, 4})}, {}, 9);
  EXPECT_EQ(keep.dtype(), DType::kInt32);
  EXPECT_THAT(ToInts(keep), ElementsAre(1, 0, 0, 1));
}

// ---------------------------------------------------------------- Dropout

// At inference the output equals the input and the mask is all true,
// whatever the ratio: opset 12/13 take ratio as input 1 and training_mode
// as input 2 (default false).
TEST(Dropout, InferenceOpset12And13) {
  const std::vector<float> x = {1, -2, 3, 0.5f, 5, 6};
  for (int64_t opset : {12, 13}) {
    auto out = RunNode("Dropout", {F32({2, 3}, x), F32({}, {0.7f})}, {}, 2, opset);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(1, -2, 3, 0.5f, 5, 6)) << "opset " << opset;
    EXPECT_EQ((*out)[1].dtype(), DType::kBool);
    EXPECT_EQ((*out)[1].shape(), (Shape{2, 3}));
    EXPECT_THAT(ToInts((*out)[1]), Each(1));
    // training_mode given as false: the same; no ratio input at all: the same.
    auto off = RunNode("Dropout", {F32({2, 3}, x), F32({}, {0.9f}), Bool({}, {false})}, {}, 2, opset);
    ASSERT_TRUE(off.ok()) << off.status().ToString();
    EXPECT_THAT(ToFloats((*off)[0]), ElementsAre(1, -2, 3, 0.5f, 5, 6));
    EXPECT_THAT(ToInts((*off)[1]), Each(1));
    auto bare = RunNode("Dropout", {F32({2, 3}, x)}, {Attribute::Int("seed", 3)}, 1, opset);
    ASSERT_TRUE(bare.ok()) << bare.status().ToString();
    EXPECT_THAT(ToFloats((*bare)[0]), ElementsAre(1, -2, 3, 0.5f, 5, 6));
  }
}

// Opset 7: ratio is an attribute and the mask has the data's dtype (so
// ones); opset 10 makes the mask bool. Both are inference only.
TEST(Dropout, InferenceOpset7And10) {
  auto o7 = RunNode("Dropout", {F32({3}, {1, 2, 3})}, {Attribute::Float("ratio", 0.9f)}, 2, 7);
  ASSERT_TRUE(o7.ok()) << o7.status().ToString();
  EXPECT_THAT(ToFloats((*o7)[0]), ElementsAre(1, 2, 3));
  EXPECT_EQ((*o7)[1].dtype(), DType::kFloat32);
  EXPECT_THAT(ToFloats((*o7)[1]), ElementsAre(1, 1, 1));
  auto o10 = RunNode("Dropout", {F64({3}, {1, 2, 3})}, {Attribute::Float("ratio", 0.2f)}, 2, 10);
  ASSERT_TRUE(o10.ok()) << o10.status().ToString();
  EXPECT_EQ((*o10)[0].dtype(), DType::kFloat64);
  EXPECT_THAT(ToFloats((*o10)[0]), ElementsAre(1, 2, 3));
  EXPECT_EQ((*o10)[1].dtype(), DType::kBool);
  EXPECT_THAT(ToInts((*o10)[1]), ElementsAre(1, 1, 1));
}

// Opset 6: is_test = 1 is inference (Y = X).
TEST(Dropout, Opset6IsTest) {
  auto out = RunNode("Dropout", {F32({2}, {4, 5})}, {Attribute::Int("is_test", 1), Attribute::Float("ratio", 0.5f)}, 1, 6);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(4, 5));
}

// Training with ratio 0 keeps every element and scales by 1 / (1 - 0) = 1.
TEST(Dropout, TrainingWithRatioZeroIsIdentity) {
  auto out = RunNode("Dropout", {F32({4}, {1, 2, 3, 4}), F32({}, {0.0f}), Bool({}, {true})}, {}, 2, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(ToInts((*out)[1]), Each(1));
}

// Training with ratio 0.5: each element is 0 (dropped, mask false) or
// x / (1 - 0.5) = 2x (kept, mask true).
TEST(Dropout, TrainingDropsOrScales) {
  std::vector<float> x(64, 3.0f);
  auto out = RunNode("Dropout", {F32({64}, x), F32({}, {0.5f}), Bool({}, {true})}, {Attribute::Int("seed", 1)}, 2, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<float> y = ToFloats((*out)[0]);
  std::vector<int64_t> m = ToInts((*out)[1]);
  int kept = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_EQ(y[i], m[i] ? 6.0f : 0.0f) << i;
    kept += static_cast<int>(m[i]);
  }
  // Binomial(64, 0.5): mean 32, sd 4; [8, 56] is 6 sd.
  EXPECT_GT(kept, 8);
  EXPECT_LT(kept, 56);
}

}  // namespace
}  // namespace kiln
