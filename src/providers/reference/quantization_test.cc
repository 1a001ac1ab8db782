// Tests of QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.
// Expected values are worked by hand from the spec:
//   QuantizeLinear   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear y = (x - zero_point) * scale
// (comments show each division and its rounding).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ir::Attribute;
using testing::F32;
using testing::RunNode;
using testing::ToFloats;
using testing::ToInts;

Tensor U8(const Shape& s, const std::vector<uint8_t>& v) { return Tensor::FromVector<uint8_t>(DType::kUint8, s, v); }
Tensor I8(const Shape& s, const std::vector<int8_t>& v) { return Tensor::FromVector<int8_t>(DType::kInt8, s, v); }
Tensor I32(const Shape& s, const std::vector<int32_t>& v) { return Tensor::FromVector<int32_t>(DType::kInt32, s, v); }
Attribute Axis(int64_t a) { return Attribute::Int("axis", a); }

// Runs a one-output node and checks its dtype; returns the elements as ints.
std::vector<int64_t> RunQ(const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, DType want, int64_t opset = 13) {
  auto out = RunNode("QuantizeLinear", in, attrs, 1, opset);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].dtype(), want);
  EXPECT_EQ((*out)[0].shape(), in[0].shape());
  return ToInts((*out)[0]);
}
std::vector<float> RunDq(const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, DType want = DType::kFloat32,
                         int64_t opset = 13) {
  auto out = RunNode("DequantizeLinear", in, attrs, 1, opset);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].dtype(), want);
  EXPECT_EQ((*out)[0].shape(), in[0].shape());
  return ToFloats((*out)[0]);
}

// ---------------------------------------------------------------------------
// QuantizeLinear

// x = [0,2,3,5,-3,-5,1000,-1000], scale 2: x/2 = [0,1,1.5,2.5,-1.5,-2.5,500,-500],
// rounded half to even [0,1,2,2,-2,-2,500,-500].
// uint8, zero point 128: +128 -> [128,129,130,130,126,126,628->255,-372->0].
// int8, zero point -1: -1 -> [-1,0,1,1,-3,-3,499->127,-501->-128].
// No zero point: uint8 with 0 -> [0,1,2,2,-2->0,-2->0,255,0].
TEST(QuantizeLinear, PerTensorUint8Int8AndDefaultZeroPoint) {
  Tensor x = F32({8}, {0, 2, 3, 5, -3, -5, 1000, -1000});
  for (int64_t opset : {10, 13, 19}) {
    SCOPED_TRACE(opset);
    EXPECT_THAT(RunQ({x, F32({}, {2}), U8({}, {128})}, {}, DType::kUint8, opset), ElementsAre(128, 129, 130, 130, 126, 126, 255, 0));
    EXPECT_THAT(RunQ({x, F32({}, {2}), I8({}, {-1})}, {}, DType::kInt8, opset), ElementsAre(-1, 0, 1, 1, -3, -3, 127, -128));
    EXPECT_THAT(RunQ({x, F32({}, {2})}, {}, DType::kUint8, opset), ElementsAre(0, 1, 2, 2, 0, 0, 255, 0));
  }
}

// Scale 1, int8 zero point 0: round half to even, then saturate:
// 0.5->0, 1.5->2, 2.5->2, 3.5->4, -0.5->0, -1.5->-2, -2.5->-2,
// 0.49999997->0 (below the half), 127.5->128->127 (saturated), -128.5->-128.
TEST(QuantizeLinear, RoundHalfToEvenThenSaturate) {
  Tensor x = F32({10}, {0.5f, 1.5f, 2.5f, 3.5f, -0.5f, -1.5f, -2.5f, 0.49999997f, 127.5f, -128.5f});
  EXPECT_THAT(RunQ({x, F32({}, {1}), I8({}, {0})}, {}, DType::kInt8), ElementsAre(0, 2, 2, 4, 0, -2, -2, 0, 127, -128));
  // uint8 with zero point 10: -10.5 -> -10 + 10 = 0; -11 -> -1 -> 0; 245.5 -> 246 -> 256 -> 255;
  // 244.5 -> 244 + 10 = 254.
  EXPECT_THAT(RunQ({F32({4}, {-10.5f, -11, 245.5f, 244.5f}), F32({}, {1}), U8({}, {10})}, {}, DType::kUint8), ElementsAre(0, 0, 255, 254));
}

// Per axis, x [2,3] = [[1,2,4],[-1,5,6]].
// axis 1 (the default, and -1): scale [1,2,4], zero point [0,10,100]:
//   row0 [1/1+0, 2/2+10, 4/4+100] = [1,11,101];
//   row1 [-1->0 (saturated), 2.5->2 +10 = 12, 1.5->2 +100 = 102].
// axis 0: scale [1,2], zero point [0,10]:
//   row0 /1: [1,2,4]; row1 /2: [-0.5->0, 2.5->2, 3] + 10 = [10,12,13].
TEST(QuantizeLinear, PerAxis) {
  Tensor x = F32({2, 3}, {1, 2, 4, -1, 5, 6});
  Tensor s3 = F32({3}, {1, 2, 4});
  Tensor z3 = U8({3}, {0, 10, 100});
  EXPECT_THAT(RunQ({x, s3, z3}, {}, DType::kUint8), ElementsAre(1, 11, 101, 0, 12, 102));
  EXPECT_THAT(RunQ({x, s3, z3}, {Axis(1)}, DType::kUint8), ElementsAre(1, 11, 101, 0, 12, 102));
  EXPECT_THAT(RunQ({x, s3, z3}, {Axis(-1)}, DType::kUint8), ElementsAre(1, 11, 101, 0, 12, 102));
  EXPECT_THAT(RunQ({x, F32({2}, {1, 2}), U8({2}, {0, 10})}, {Axis(0)}, DType::kUint8), ElementsAre(1, 2, 4, 10, 12, 13));
  EXPECT_THAT(RunQ({x, F32({2}, {1, 2}), U8({2}, {0, 10})}, {Axis(-2)}, DType::kUint8), ElementsAre(1, 2, 4, 10, 12, 13));
  // int8 per axis: axis 0, scale [1,2], zero point [-128, 127]:
  // row0 [1,2,4] - 128 = [-127,-126,-124]; row1 [0,2,3] + 127 = [127,129->127,130->127].
  EXPECT_THAT(RunQ({x, F32({2}, {1, 2}), I8({2}, {-128, 127})}, {Axis(0)}, DType::kInt8), ElementsAre(-127, -126, -124, 127, 127, 127));
}

// Rank 3, x [2,2,2] = 1..8, axis 1, scale [1,10], no zero point:
// (n, 0, *) / 1: [1,2] and [5,6]; (n, 1, *) / 10: [0.3,0.4] -> [0,0], [0.7,0.8] -> [1,1].
TEST(QuantizeLinear, PerAxisMiddleDim) {
  EXPECT_THAT(RunQ({F32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({2}, {1, 10})}, {Axis(1)}, DType::kUint8),
              ElementsAre(1, 2, 0, 0, 5, 6, 1, 1));
}

// int32 input (allowed since opset 10): 7 / 2 = 3.5 -> 4; -7 / 2 = -3.5 -> -4 (+0 int8).
TEST(QuantizeLinear, Int32Input) {
  EXPECT_THAT(RunQ({I32({2}, {7, -7}), F32({}, {2}), I8({}, {0})}, {}, DType::kInt8), ElementsAre(4, -4));
}

// Opset 19: x and scale float16 divide in float16 (the spec computes x / y_scale
// in their type, then rounds half to even). scale = float16(0.3) = 0.300048828125;
// 2.25 / scale = 7.4987795 -> float16 7.5 -> 8;  5.25 / scale = 17.4971522 -> 17.5 -> 18;
// 8.25 / scale = 27.4955248 -> 27.5 -> 28. (A float32 quotient would round to 7, 17, 27.)
// 4.5 / float16(0.5) = 9 exactly -> 9.
TEST(QuantizeLinear, Float16DividesInFloat16) {
  auto h = [](const Shape& s, std::vector<float> v) {
    std::vector<Float16> o;
    for (float f : v) o.push_back(Float16(f));
    return Tensor::FromVector<Float16>(DType::kFloat16, s, o);
  };
  EXPECT_THAT(RunQ({h({3}, {2.25f, 5.25f, 8.25f}), h({}, {0.3f}), U8({}, {0})}, {}, DType::kUint8, 19), ElementsAre(8, 18, 28));
  EXPECT_THAT(RunQ({h({1}, {4.5f}), h({}, {0.5f})}, {}, DType::kUint8, 19), ElementsAre(9));
}

// Opset 21 output_dtype picks the quantized type when there is no zero point
// (uint8 when neither is given). x = [-1, 0.5, 300], scale 1:
// round [-1, 0, 300]; int8 (3) saturates to [-1, 0, 127], uint8 (2) to [0, 0, 255].
TEST(QuantizeLinear, OutputDtypeOpset21) {
  Tensor x = F32({3}, {-1, 0.5f, 300});
  EXPECT_THAT(RunQ({x, F32({}, {1})}, {Attribute::Int("output_dtype", 3)}, DType::kInt8, 21), ElementsAre(-1, 0, 127));
  EXPECT_THAT(RunQ({x, F32({}, {1})}, {Attribute::Int("output_dtype", 2)}, DType::kUint8, 21), ElementsAre(0, 0, 255));
  EXPECT_THAT(RunQ({x, F32({}, {1})}, {}, DType::kUint8, 21), ElementsAre(0, 0, 255));
  // With a zero point of the same type, output_dtype agrees: int8 zp 1 -> [0, 1, 127].
  EXPECT_THAT(RunQ({x, F32({}, {1}), I8({}, {1})}, {Attribute::Int("output_dtype", 3)}, DType::kInt8, 21), ElementsAre(0, 1, 127));
  // The zero point and output_dtype disagree.
  auto clash = RunNode("QuantizeLinear", {x, F32({}, {1}), U8({}, {0})}, {Attribute::Int("output_dtype", 3)}, 1, 21);
  ASSERT_FALSE(clash.ok());
  EXPECT_THAT(clash.status().message(), HasSubstr("'n0' (QuantizeLinear)"));
  EXPECT_THAT(clash.status().message(), HasSubstr("output_dtype"));
  // float32 (1) is not a quantized type.
  auto f = RunNode("QuantizeLinear", {x, F32({}, {1})}, {Attribute::Int("output_dtype", 1)}, 1, 21);
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("output_dtype"));
}

// Opset 21 blocked quantization: the scale has x's rank, and along `axis`
// each scale covers block_size consecutive elements.
// x [2,4] = [[1,2,3,4],[5,6,7,8]], axis 1, block_size 2, scale [[1,2],[4,8]]:
// row0 [1/1, 2/1, 3/2=1.5->2, 4/2] = [1,2,2,2]; row1 [5/4=1.25->1, 6/4=1.5->2, 7/8=.875->1, 8/8] = [1,2,1,1].
// A short last block: x [1,5] = 1..5, block 2, scale [[1,2,4]]: [1, 2, 1.5->2, 2, 1.25->1].
// axis 0, x [4,1] = [1,2,3,40], block 3, scale [[1],[10]] with zero point [[0],[5]]:
// [1,2,3, 4+5] = [1,2,3,9].
TEST(QuantizeLinear, BlockedOpset21) {
  Attribute b2 = Attribute::Int("block_size", 2);
  EXPECT_THAT(RunQ({F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({2, 2}, {1, 2, 4, 8})}, {Axis(1), b2}, DType::kUint8, 21),
              ElementsAre(1, 2, 2, 2, 1, 2, 1, 1));
  EXPECT_THAT(RunQ({F32({1, 5}, {1, 2, 3, 4, 5}), F32({1, 3}, {1, 2, 4})}, {Axis(-1), b2}, DType::kUint8, 21), ElementsAre(1, 2, 2, 2, 1));
  EXPECT_THAT(RunQ({F32({4, 1}, {1, 2, 3, 40}), F32({2, 1}, {1, 10}), U8({2, 1}, {0, 5})}, {Axis(0), Attribute::Int("block_size", 3)},
                   DType::kUint8, 21),
              ElementsAre(1, 2, 3, 9));
  // ceil(4 / 2) = 2 blocks, but the scale has 3 along the axis.
  auto bad = RunNode("QuantizeLinear", {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({2, 3}, {1, 1, 1, 1, 1, 1})}, {Axis(1), b2}, 1, 21);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'n0' (QuantizeLinear)"));
  EXPECT_THAT(bad.status().message(), HasSubstr("block"));
  // The other dims must match x.
  auto other = RunNode("QuantizeLinear", {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({1, 2}, {1, 1})}, {Axis(1), b2}, 1, 21);
  ASSERT_FALSE(other.ok());
  EXPECT_THAT(other.status().message(), HasSubstr("block"));
  auto neg = RunNode("QuantizeLinear", {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({2, 2}, {1, 1, 1, 1})},
                     {Axis(1), Attribute::Int("block_size", -1)}, 1, 21);
  ASSERT_FALSE(neg.ok());
  EXPECT_THAT(neg.status().message(), HasSubstr("block_size"));
}

TEST(QuantizeLinear, Errors) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  // Per-axis scale whose length does not match x's dim along the axis.
  auto len = RunNode("QuantizeLinear", {x, F32({2}, {1, 1}), U8({2}, {0, 0})}, {Axis(1)}, 1, 13);
  ASSERT_FALSE(len.ok());
  EXPECT_THAT(len.status().message(), HasSubstr("'n0' (QuantizeLinear)"));
  EXPECT_THAT(len.status().message(), HasSubstr("scale has 2 elements"));
  // Opset 10 has no per-axis quantization.
  auto old = RunNode("QuantizeLinear", {x, F32({3}, {1, 1, 1})}, {}, 1, 10);
  ASSERT_FALSE(old.ok());
  EXPECT_THAT(old.status().message(), HasSubstr("'n0' (QuantizeLinear)"));
  EXPECT_THAT(old.status().message(), HasSubstr("scalar"));
  // Axis out of range.
  auto axis = RunNode("QuantizeLinear", {x, F32({3}, {1, 1, 1})}, {Axis(2)}, 1, 13);
  ASSERT_FALSE(axis.ok());
  EXPECT_THAT(axis.status().message(), HasSubstr("axis 2"));
  // Zero point and scale shapes differ.
  auto zs = RunNode("QuantizeLinear", {x, F32({3}, {1, 1, 1}), U8({}, {0})}, {}, 1, 13);
  ASSERT_FALSE(zs.ok());
  EXPECT_THAT(zs.status().message(), HasSubstr("zero point"));
  // 2-D scale.
  auto s2 = RunNode("QuantizeLinear", {x, F32({2, 3}, {1, 1, 1, 1, 1, 1})}, {}, 1, 13);
  ASSERT_FALSE(s2.ok());
  EXPECT_THAT(s2.status().message(), HasSubstr("1-D"));
  // An int32 zero point is not a quantized type.
  auto zt = RunNode("QuantizeLinear", {x, F32({}, {1}), I32({}, {0})}, {}, 1, 13);
  ASSERT_FALSE(zt.ok());
  EXPECT_THAT(zt.status().message(), HasSubstr("'n0' (QuantizeLinear)"));
}

// ---------------------------------------------------------------------------
// DequantizeLinear

// uint8 x [0,3,128,255], scale 0.5, zero point 128: (x-128)*0.5 = [-64,-62.5,0,63.5].
// int8 x [-128,-1,0,127], scale 2, zero point -1: (x+1)*2 = [-254,0,2,256].
// No zero point (0): uint8 [0,3,255] * 0.25 = [0,0.75,63.75]; int32 [-5,100000] * 0.5 = [-2.5,50000].
TEST(DequantizeLinear, PerTensorAndDefaultZeroPoint) {
  for (int64_t opset : {10, 13, 19}) {
    SCOPED_TRACE(opset);
    EXPECT_THAT(RunDq({U8({4}, {0, 3, 128, 255}), F32({}, {0.5f}), U8({}, {128})}, {}, DType::kFloat32, opset), ElementsAre(-64, -62.5f, 0, 63.5f));
    EXPECT_THAT(RunDq({I8({4}, {-128, -1, 0, 127}), F32({}, {2}), I8({}, {-1})}, {}, DType::kFloat32, opset), ElementsAre(-254, 0, 2, 256));
    EXPECT_THAT(RunDq({U8({3}, {0, 3, 255}), F32({}, {0.25f})}, {}, DType::kFloat32, opset), ElementsAre(0, 0.75f, 63.75f));
    EXPECT_THAT(RunDq({I32({2}, {-5, 100000}), F32({}, {0.5f})}, {}, DType::kFloat32, opset), ElementsAre(-2.5f, 50000));
  }
}

// Per axis, uint8 x [2,3] = [[1,11,101],[0,12,102]].
// axis 1 (default, and -1): scale [1,0.5,2], zero point [0,10,100]:
//   row0 [(1-0)*1, (11-10)*0.5, (101-100)*2] = [1,0.5,2]; row1 [0, 1, 4].
// axis 0 on [[1,2],[3,4]]: scale [2,3], zero point [1,2]: [0,2, 3,6].
TEST(DequantizeLinear, PerAxis) {
  Tensor x = U8({2, 3}, {1, 11, 101, 0, 12, 102});
  Tensor s = F32({3}, {1, 0.5f, 2});
  Tensor z = U8({3}, {0, 10, 100});
  EXPECT_THAT(RunDq({x, s, z}, {}), ElementsAre(1, 0.5f, 2, 0, 1, 4));
  EXPECT_THAT(RunDq({x, s, z}, {Axis(-1)}), ElementsAre(1, 0.5f, 2, 0, 1, 4));
  EXPECT_THAT(RunDq({U8({2, 2}, {1, 2, 3, 4}), F32({2}, {2, 3}), U8({2}, {1, 2})}, {Axis(0)}), ElementsAre(0, 2, 3, 6));
  // Per axis without a zero point: int8 [[-2,4],[6,-8]] * [0.5, 0.25] along axis 1: [-1,1, 3,-2].
  EXPECT_THAT(RunDq({I8({2, 2}, {-2, 4, 6, -8}), F32({2}, {0.5f, 0.25f})}, {Axis(1)}), ElementsAre(-1, 1, 3, -2));
}

// Opset 19: y has the scale's type. float16 scale 0.5, uint8 x [4, 7], zp 2:
// (4-2)*0.5 = 1, (7-2)*0.5 = 2.5 (both exact in float16).
TEST(DequantizeLinear, Float16ScaleOpset19) {
  Tensor s = Tensor::FromVector<Float16>(DType::kFloat16, {}, {Float16(0.5f)});
  EXPECT_THAT(RunDq({U8({2}, {4, 7}), s, U8({}, {2})}, {}, DType::kFloat16, 19), ElementsAre(1, 2.5f));
}

// Opset 21 blocked dequantization: uint8 x [2,4] = [[1,2,3,4],[5,6,7,8]], axis 1,
// block 2, scale [[1,2],[4,8]], zero point [[0,1],[2,3]]:
// row0 [(1-0)*1, (2-0)*1, (3-1)*2, (4-1)*2] = [1,2,4,6];
// row1 [(5-2)*4, (6-2)*4, (7-3)*8, (8-3)*8] = [12,16,32,40].
TEST(DequantizeLinear, BlockedOpset21) {
  EXPECT_THAT(RunDq({U8({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({2, 2}, {1, 2, 4, 8}), U8({2, 2}, {0, 1, 2, 3})},
                    {Axis(1), Attribute::Int("block_size", 2)}, DType::kFloat32, 21),
              ElementsAre(1, 2, 4, 6, 12, 16, 32, 40));
  auto bad = RunNode("DequantizeLinear", {U8({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({2, 1}, {1, 1})},
                     {Axis(1), Attribute::Int("block_size", 2)}, 1, 21);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'n0' (DequantizeLinear)"));
  EXPECT_THAT(bad.status().message(), HasSubstr("block"));
}

// Opset 23 output_dtype sets y's type apart from the scale's:
// float32 scale 0.5, uint8 x [4,7], zero point 2, output float16 (10): [1, 2.5].
TEST(DequantizeLinear, OutputDtypeOpset23) {
  EXPECT_THAT(RunDq({U8({2}, {4, 7}), F32({}, {0.5f}), U8({}, {2})}, {Attribute::Int("output_dtype", 10)}, DType::kFloat16, 23),
              ElementsAre(1, 2.5f));
  auto bad = RunNode("DequantizeLinear", {U8({2}, {4, 7}), F32({}, {0.5f})}, {Attribute::Int("output_dtype", 6)}, 1, 23);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("output_dtype"));
}

TEST(DequantizeLinear, Errors) {
  // Zero point of another type than x.
  auto zt = RunNode("DequantizeLinear", {U8({2}, {1, 2}), F32({}, {1}), I8({}, {0})}, {}, 1, 13);
  ASSERT_FALSE(zt.ok());
  EXPECT_THAT(zt.status().message(), HasSubstr("'n0' (DequantizeLinear)"));
  // Per-axis scale of the wrong length.
  auto len = RunNode("DequantizeLinear", {U8({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2}, {1, 1})}, {Axis(1)}, 1, 13);
  ASSERT_FALSE(len.ok());
  EXPECT_THAT(len.status().message(), HasSubstr("'n0' (DequantizeLinear)"));
  EXPECT_THAT(len.status().message(), HasSubstr("scale has 2 elements"));
  // A float x is not quantized.
  auto xf = RunNode("DequantizeLinear", {F32({2}, {1, 2}), F32({}, {1})}, {}, 1, 13);
  ASSERT_FALSE(xf.ok());
  EXPECT_THAT(xf.status().message(), HasSubstr("'n0' (DequantizeLinear)"));
}

// ---------------------------------------------------------------------------
// DynamicQuantizeLinear (uint8):
//   scale = (max(0, max x) - min(0, min x)) / 255
//   zero_point = saturate(round_half_even(0 - min(0, min x) / scale))
//   y = saturate(round_half_even(x / scale) + zero_point), all in float32.

struct Dql {
  std::vector<int64_t> y;
  float scale = 0;
  int64_t zp = -1;
};
Dql RunDql(const Tensor& x) {
  Dql r;
  auto out = RunNode("DynamicQuantizeLinear", {x}, {}, 3, 11);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return r;
  EXPECT_EQ((*out)[0].dtype(), DType::kUint8);
  EXPECT_EQ((*out)[0].shape(), x.shape());
  EXPECT_EQ((*out)[1].dtype(), DType::kFloat32);
  EXPECT_EQ((*out)[1].shape(), (Shape{}));
  EXPECT_EQ((*out)[2].dtype(), DType::kUint8);
  EXPECT_EQ((*out)[2].shape(), (Shape{}));
  r.y = ToInts((*out)[0]);
  r.scale = ToFloats((*out)[1])[0];
  r.zp = ToInts((*out)[2])[0];
  return r;
}

// The spec's example: x = [0, 2, -3, -2.5, 1.34, 0.5].
// scale = (2 - -3)/255 = float32(5/255) = 0.019607844; zero point = round(3/scale) = round(153.0) = 153.
// x/scale (float32): 0, 102, -153, -127.49999 (-> -127), 68.34 (-> 68), 25.5 (-> 26, even);
// + 153: 153, 255, 0, 26, 221, 179.
TEST(DynamicQuantizeLinear, SpecExample) {
  Dql r = RunDql(F32({2, 3}, {0, 2, -3, -2.5f, 1.34f, 0.5f}));
  EXPECT_THAT(r.y, ElementsAre(153, 255, 0, 26, 221, 179));
  EXPECT_FLOAT_EQ(r.scale, 5.0f / 255.0f);
  EXPECT_EQ(r.zp, 153);
}

// The range always includes 0.
// All positive [1,2,3]: scale (3-0)/255 = 0.011764706, zero point 0, y = [85,170,255].
// All negative [-1,-2]: scale (0 - -2)/255, zero point round(2/scale) = round(254.99998) = 255,
// y = [round(-127.49999) + 255, round(-254.99998) + 255] = [-127+255, -255+255] = [128, 0].
TEST(DynamicQuantizeLinear, RangeIncludesZero) {
  Dql pos = RunDql(F32({3}, {1, 2, 3}));
  EXPECT_THAT(pos.y, ElementsAre(85, 170, 255));
  EXPECT_FLOAT_EQ(pos.scale, 3.0f / 255.0f);
  EXPECT_EQ(pos.zp, 0);
  Dql neg = RunDql(F32({2}, {-1, -2}));
  EXPECT_THAT(neg.y, ElementsAre(128, 0));
  EXPECT_FLOAT_EQ(neg.scale, 2.0f / 255.0f);
  EXPECT_EQ(neg.zp, 255);
}

// Range [-126.5, 128.5]: scale 255/255 = 1 exactly, so every division is exact.
// zero point round(126.5) = 126 (half to even; half away from zero would give 127).
// y = round(x) + 126: -126.5 -> -126+126 = 0; 128.5 -> 128+126 = 254;
// 2.5 -> 2+126 = 128; 3.5 -> 4+126 = 130; -0.5 -> 0+126 = 126.
TEST(DynamicQuantizeLinear, RoundingOfZeroPointAndValues) {
  Dql r = RunDql(F32({5}, {-126.5f, 128.5f, 2.5f, 3.5f, -0.5f}));
  EXPECT_FLOAT_EQ(r.scale, 1.0f);
  EXPECT_EQ(r.zp, 126);
  EXPECT_THAT(r.y, ElementsAre(0, 254, 128, 130, 126));
}

// All zeros: the range is 0, so scale 0; kiln returns zero point 0 and y 0
// rather than dividing by zero.
TEST(DynamicQuantizeLinear, AllZeros) {
  Dql r = RunDql(F32({3}, {0, 0, 0}));
  EXPECT_EQ(r.scale, 0.0f);
  EXPECT_EQ(r.zp, 0);
  EXPECT_THAT(r.y, ElementsAre(0, 0, 0));
}

TEST(DynamicQuantizeLinear, Errors) {
  auto f64 = RunNode("DynamicQuantizeLinear", {Tensor::FromVector<double>(DType::kFloat64, {2}, {1, 2})}, {}, 3, 11);
  ASSERT_FALSE(f64.ok());
  EXPECT_THAT(f64.status().message(), HasSubstr("'n0' (DynamicQuantizeLinear)"));
}

}  // namespace
}  // namespace kiln
