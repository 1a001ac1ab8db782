// Unit tests of Gemm, MatMul, MatMulInteger, QLinearMatMul and Det. Expected
// values are worked out by hand or by independent loops in the test.
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
using testing::ToFloats;
using testing::ToInts;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor RunOp(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, int64_t opset) {
  auto r = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? (*r)[0] : Tensor();
}

// A = [[1,2,3],[4,5,6]] (2x3), B = [[1,0],[0,1],[2,-1]] (3x2):
// A B = [[1+6, 2-3], [4+12, 5-6]] = [[7,-1],[16,-1]].
Tensor A23() { return F32({2, 3}, {1, 2, 3, 4, 5, 6}); }
Tensor B32() { return F32({3, 2}, {1, 0, 0, 1, 2, -1}); }

TEST(Gemm, DefaultWithMatrixBias) {
  Tensor y = RunOp("Gemm", {A23(), B32(), F32({2, 2}, {1, 2, 3, 4})}, {}, 13);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_THAT(ToFloats(y), ElementsAre(8, 1, 19, 3));
}

TEST(Gemm, TransposesAlphaBeta) {
  // A^T given as 3x2, B^T as 2x3: the same product [[7,-1],[16,-1]].
  Tensor at = F32({3, 2}, {1, 4, 2, 5, 3, 6});
  Tensor bt = F32({2, 3}, {1, 0, 2, 0, 1, -1});
  Tensor y = RunOp("Gemm", {at, bt, F32({}, {10})},
                   {Attribute::Int("transA", 1), Attribute::Int("transB", 1), Attribute::Float("alpha", 2.0f),
                    Attribute::Float("beta", 0.5f)}, 13);
  EXPECT_THAT(ToFloats(y), ElementsAre(19, 3, 37, 3));
}

TEST(Gemm, BiasBroadcastsAndIsOptional) {
  EXPECT_THAT(ToFloats(RunOp("Gemm", {A23(), B32(), F32({2}, {1, 2})}, {}, 13)), ElementsAre(8, 1, 17, 1));
  EXPECT_THAT(ToFloats(RunOp("Gemm", {A23(), B32(), F32({2, 1}, {1, 2})}, {}, 13)), ElementsAre(8, 0, 18, 1));
  EXPECT_THAT(ToFloats(RunOp("Gemm", {A23(), B32()}, {}, 13)), ElementsAre(7, -1, 16, -1));
}

TEST(Gemm, Opset6BroadcastAttribute) {
  EXPECT_THAT(ToFloats(RunOp("Gemm", {A23(), B32(), F32({2}, {1, 2})}, {Attribute::Int("broadcast", 1)}, 6)),
              ElementsAre(8, 1, 17, 1));
  // broadcast = 0: C must already be [M, N].
  auto r = RunNode("Gemm", {A23(), B32(), F32({2}, {1, 2})}, {}, 1, 6);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
  EXPECT_THAT(ToFloats(RunOp("Gemm", {A23(), B32(), F32({2, 2}, {1, 1, 1, 1})}, {}, 6)), ElementsAre(8, 0, 17, 0));
}

TEST(Gemm, ShapeErrors) {
  auto r = RunNode("Gemm", {A23(), A23()}, {}, 1, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
  EXPECT_THAT(r.status().message(), HasSubstr("K"));
  r = RunNode("Gemm", {F32({6}, {1, 2, 3, 4, 5, 6}), B32()}, {}, 1, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("rank 2"));
}

TEST(MatMul, TwoD) { EXPECT_THAT(ToFloats(RunOp("MatMul", {A23(), B32()}, {}, 13)), ElementsAre(7, -1, 16, -1)); }

TEST(MatMul, OneDOperands) {
  Tensor v = F32({3}, {1, 1, 2});
  Tensor y = RunOp("MatMul", {v, B32()}, {}, 13);  // [1,1,2] x B = [1+0+4, 0+1-2]
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_THAT(ToFloats(y), ElementsAre(5, -1));
  y = RunOp("MatMul", {A23(), v}, {}, 13);  // [1+2+6, 4+5+12]
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_THAT(ToFloats(y), ElementsAre(9, 21));
  y = RunOp("MatMul", {v, v}, {}, 13);
  EXPECT_EQ(y.shape(), (Shape{}));
  EXPECT_THAT(ToFloats(y), ElementsAre(6));
}

TEST(MatMul, BatchBroadcast) {
  // a: [2, 1, 2, 3], b: [3, 3, 2] -> [2, 3, 2, 2].
  std::vector<float> av, bv;
  for (int i = 0; i < 12; ++i) av.push_back(static_cast<float>(i % 5 - 2));
  for (int i = 0; i < 18; ++i) bv.push_back(static_cast<float>(i % 7 - 3));
  Tensor y = RunOp("MatMul", {F32({2, 1, 2, 3}, av), F32({3, 3, 2}, bv)}, {}, 13);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 3; ++q)
      for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 2; ++n) {
          double e = 0;
          for (int k = 0; k < 3; ++k) e += av[static_cast<size_t>(p * 6 + m * 3 + k)] * bv[static_cast<size_t>(q * 6 + k * 2 + n)];
          EXPECT_EQ(y.GetAsDouble(((p * 3 + q) * 2 + m) * 2 + n), e);
        }
}

TEST(MatMul, Int64AndErrors) {
  Tensor y = RunOp("MatMul", {I64({1, 2}, {3, 4}), I64({2, 1}, {5, 6})}, {}, 13);
  EXPECT_THAT(ToInts(y), ElementsAre(39));
  auto r = RunNode("MatMul", {A23(), A23()}, {}, 1, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
  r = RunNode("MatMul", {F32({2, 2, 3}, std::vector<float>(12, 1)), F32({3, 3, 1}, std::vector<float>(9, 1))}, {}, 1, 13);
  ASSERT_FALSE(r.ok());
}

Tensor U8(const Shape& s, const std::vector<uint8_t>& v) { return Tensor::FromVector<uint8_t>(DType::kUint8, s, v); }
Tensor I8(const Shape& s, const std::vector<int8_t>& v) { return Tensor::FromVector<int8_t>(DType::kInt8, s, v); }

TEST(MatMulInteger, ZeroPoints) {
  Tensor a = U8({2, 2}, {10, 12, 14, 16});
  Tensor b = U8({2, 2}, {1, 2, 3, 4});
  // No zero points: [[10+36, 20+48], [14+48, 28+64]].
  Tensor y = RunOp("MatMulInteger", {a, b}, {}, 10);
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_THAT(ToInts(y), ElementsAre(46, 68, 62, 92));
  // a - 10 = [[0,2],[4,6]], b - 1 = [[0,1],[2,3]]: [[4,6],[12,22]].
  y = RunOp("MatMulInteger", {a, b, U8({}, {10}), U8({}, {1})}, {}, 10);
  EXPECT_THAT(ToInts(y), ElementsAre(4, 6, 12, 22));
  // Per-row zero points of A: rows minus 10 and 14 -> [[0,2],[0,2]]; b as is.
  y = RunOp("MatMulInteger", {a, b, U8({2}, {10, 14})}, {}, 10);
  EXPECT_THAT(ToInts(y), ElementsAre(6, 8, 6, 8));
}

TEST(MatMulInteger, SignedAndBadZeroPoint) {
  Tensor y = RunOp("MatMulInteger", {I8({1, 2}, {-128, 127}), I8({2, 1}, {-1, -1})}, {}, 10);
  EXPECT_THAT(ToInts(y), ElementsAre(1));
  auto r = RunNode("MatMulInteger", {U8({2, 2}, {1, 2, 3, 4}), U8({2, 2}, {1, 2, 3, 4}), U8({3}, {1, 2, 3})}, {}, 1, 10);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("a_zero_point"));
}

TEST(QLinearMatMul, RequantizesWithRounding) {
  // real a = 0.5 (a - 1), real b = 0.25 (b - 2); y = real / 0.5 + 3.
  Tensor a = U8({1, 2}, {3, 5});  // real 1, 2
  Tensor b = U8({2, 2}, {6, 2, 10, 4});  // real [[1, 0], [2, 0.5]]
  // real product: [1 + 4, 0 + 1] = [5, 1] -> 5/0.5 + 3 = 13, 1/0.5 + 3 = 5.
  Tensor y = RunOp("QLinearMatMul", {a, F32({}, {0.5f}), U8({}, {1}), b, F32({}, {0.25f}), U8({}, {2}), F32({}, {0.5f}),
                                     U8({}, {3})}, {}, 10);
  EXPECT_EQ(y.dtype(), DType::kUint8);
  EXPECT_THAT(ToInts(y), ElementsAre(13, 5));
  // y_scale 4: 5/4 = 1.25 -> 1, 1/4 = 0.25 -> 0; then + 3. Saturation: y_zp 254 -> 255, 254.
  y = RunOp("QLinearMatMul", {a, F32({}, {0.5f}), U8({}, {1}), b, F32({}, {0.25f}), U8({}, {2}), F32({}, {4.0f}),
                              U8({}, {3})}, {}, 10);
  EXPECT_THAT(ToInts(y), ElementsAre(4, 3));
  y = RunOp("QLinearMatMul", {a, F32({}, {0.5f}), U8({}, {1}), b, F32({}, {0.25f}), U8({}, {2}), F32({}, {1.0f}),
                              U8({}, {254})}, {}, 10);
  EXPECT_THAT(ToInts(y), ElementsAre(255, 255));
  // Round half to even: real 2.5 -> 2 with y_scale 2 on a product of 5.
  y = RunOp("QLinearMatMul", {a, F32({}, {0.5f}), U8({}, {1}), b, F32({}, {0.25f}), U8({}, {2}), F32({}, {2.0f}),
                              U8({}, {0})}, {}, 10);
  EXPECT_THAT(ToInts(y), ElementsAre(2, 0));
}

TEST(Det, SmallMatrices) {
  EXPECT_NEAR(RunOp("Det", {F32({2, 2}, {3, 8, 4, 6})}, {}, 11).GetAsDouble(0), 3 * 6 - 8 * 4, 1e-5);
  // Cofactor expansion of [[2,0,1],[1,3,2],[1,1,1]]: 2(3-2) - 0 + 1(1-3) = 0.
  EXPECT_NEAR(RunOp("Det", {F32({3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 1})}, {}, 11).GetAsDouble(0), 0, 1e-5);
  // [[0,1,2],[1,0,3],[4,-3,8]]: 0 - 1(8-12) + 2(-3-0) = -2 (needs a row swap).
  EXPECT_NEAR(RunOp("Det", {F32({3, 3}, {0, 1, 2, 1, 0, 3, 4, -3, 8})}, {}, 11).GetAsDouble(0), -2, 1e-5);
}

TEST(Det, BatchAndErrors) {
  Tensor y = RunOp("Det", {F32({2, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 5})}, {}, 11);
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_NEAR(y.GetAsDouble(0), -2, 1e-5);
  EXPECT_NEAR(y.GetAsDouble(1), 10, 1e-5);
  auto r = RunNode("Det", {F32({2, 3}, {1, 2, 3, 4, 5, 6})}, {}, 1, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
}

}  // namespace
}  // namespace kiln
