// Unit tests of TopK, Softmax/LogSoftmax/Hardmax and CumSum. Expected values
// are worked out by hand or by an independent formula in the test.
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

std::vector<Tensor> RunOp(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs,
                        size_t outs, int64_t opset) {
  auto r = RunNode(op, in, attrs, outs, opset);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<Tensor>(outs);
}

TEST(TopK, KAttributeBeforeOpset10) {
  Tensor x = F32({2, 4}, {1, 4, 2, 3, 8, 5, 7, 6});
  auto y = RunOp("TopK", {x}, {Attribute::Int("k", 2)}, 2, 1);
  EXPECT_EQ(y[0].shape(), (Shape{2, 2}));
  EXPECT_THAT(ToFloats(y[0]), ElementsAre(4, 3, 8, 7));
  EXPECT_THAT(ToInts(y[1]), ElementsAre(1, 3, 0, 2));
}

TEST(TopK, KInputFromOpset10AndAxis) {
  Tensor x = F32({2, 3}, {1, 6, 2, 5, 3, 4});
  auto y = RunOp("TopK", {x, I64({1}, {1})}, {Attribute::Int("axis", 0)}, 2, 10);
  EXPECT_EQ(y[0].shape(), (Shape{1, 3}));
  EXPECT_THAT(ToFloats(y[0]), ElementsAre(5, 6, 4));
  EXPECT_THAT(ToInts(y[1]), ElementsAre(1, 0, 1));
}

TEST(TopK, SmallestAndTiesKeepLowerIndexFirst) {
  Tensor x = F32({6}, {3, 1, 2, 1, 3, 2});
  auto y = RunOp("TopK", {x, I64({1}, {4})}, {Attribute::Int("largest", 0)}, 2, 11);
  EXPECT_THAT(ToFloats(y[0]), ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(ToInts(y[1]), ElementsAre(1, 3, 2, 5));
  y = RunOp("TopK", {x, I64({1}, {3})}, {Attribute::Int("largest", 1), Attribute::Int("sorted", 1)}, 2, 11);
  EXPECT_THAT(ToFloats(y[0]), ElementsAre(3, 3, 2));
  EXPECT_THAT(ToInts(y[1]), ElementsAre(0, 4, 2));
}

TEST(TopK, KTooLargeIsError) {
  auto r = RunNode("TopK", {F32({3}, {1, 2, 3}), I64({1}, {4})}, {}, 2, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
  EXPECT_THAT(r.status().message(), HasSubstr("k = 4"));
  r = RunNode("TopK", {F32({3}, {1, 2, 3}), I64({1}, {-1})}, {}, 2, 11);
  ASSERT_FALSE(r.ok());
}

// softmax(x)_j = exp(x_j) / sum_k exp(x_k), written out per row.
std::vector<double> SoftmaxRow(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += std::exp(v);
  std::vector<double> o;
  for (double v : r) o.push_back(std::exp(v) / s);
  return o;
}

TEST(Softmax, Opset13SingleAxis) {
  // [2, 2, 2]; axis 1 pairs elements k and k + 2 within each block of 4.
  Tensor x = F32({2, 2, 2}, {0, 1, 2, 3, -1, 0.5f, 1, 2});
  Tensor y = RunOp("Softmax", {x}, {Attribute::Int("axis", 1)}, 1, 13)[0];
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 2; ++i) {
      auto e = SoftmaxRow({x.GetAsDouble(b * 4 + i), x.GetAsDouble(b * 4 + 2 + i)});
      EXPECT_NEAR(y.GetAsDouble(b * 4 + i), e[0], 1e-6);
      EXPECT_NEAR(y.GetAsDouble(b * 4 + 2 + i), e[1], 1e-6);
    }
}

TEST(Softmax, BeforeOpset13CoercesTo2D) {
  // axis 1 of [2, 2, 2] means rows of 4 elements (dims 1 and 2 flattened).
  Tensor x = F32({2, 2, 2}, {0, 1, 2, 3, -1, 0.5f, 1, 2});
  Tensor y = RunOp("Softmax", {x}, {}, 1, 11)[0];
  for (int b = 0; b < 2; ++b) {
    std::vector<double> row;
    for (int j = 0; j < 4; ++j) row.push_back(x.GetAsDouble(b * 4 + j));
    auto e = SoftmaxRow(row);
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(y.GetAsDouble(b * 4 + j), e[static_cast<size_t>(j)], 1e-6);
  }
}

TEST(Softmax, LargeNumbers) {
  Tensor y = RunOp("Softmax", {F32({2}, {10000, 10001})}, {}, 1, 13)[0];
  EXPECT_NEAR(y.GetAsDouble(0), 1 / (1 + std::exp(1.0)), 1e-6);
  EXPECT_NEAR(y.GetAsDouble(1), std::exp(1.0) / (1 + std::exp(1.0)), 1e-6);
}

TEST(LogSoftmax, IsLogOfSoftmax) {
  Tensor x = F32({1, 3}, {1, 2, 3});
  Tensor y = RunOp("LogSoftmax", {x}, {}, 1, 13)[0];
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(y.GetAsDouble(0), 1 - lse, 1e-6);
  EXPECT_NEAR(y.GetAsDouble(2), 3 - lse, 1e-6);
}

TEST(Hardmax, FirstMaximumWins) {
  Tensor x = F32({2, 3}, {1, 3, 3, 0, -1, -5});
  EXPECT_THAT(ToFloats(RunOp("Hardmax", {x}, {}, 1, 13)[0]), ElementsAre(0, 1, 0, 1, 0, 0));
  // Opset 11, axis 0: the whole 2x3 tensor is one row; the first 3 wins.
  EXPECT_THAT(ToFloats(RunOp("Hardmax", {x}, {Attribute::Int("axis", 0)}, 1, 11)[0]), ElementsAre(0, 1, 0, 0, 0, 0));
}

TEST(Softmax, AxisOutOfRangeAndIntegerInput) {
  auto r = RunNode("Softmax", {F32({2, 2}, {1, 2, 3, 4})}, {Attribute::Int("axis", 2)}, 1, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
  r = RunNode("Softmax", {I64({2}, {1, 2})}, {}, 1, 13);
  ASSERT_FALSE(r.ok());
}

TEST(CumSum, Modes) {
  Tensor x = F32({4}, {1, 2, 3, 4});
  Tensor axis = I64({}, {0});
  EXPECT_THAT(ToFloats(RunOp("CumSum", {x, axis}, {}, 1, 14)[0]), ElementsAre(1, 3, 6, 10));
  EXPECT_THAT(ToFloats(RunOp("CumSum", {x, axis}, {Attribute::Int("exclusive", 1)}, 1, 14)[0]), ElementsAre(0, 1, 3, 6));
  EXPECT_THAT(ToFloats(RunOp("CumSum", {x, axis}, {Attribute::Int("reverse", 1)}, 1, 14)[0]), ElementsAre(10, 9, 7, 4));
  EXPECT_THAT(ToFloats(RunOp("CumSum", {x, axis}, {Attribute::Int("reverse", 1), Attribute::Int("exclusive", 1)}, 1, 14)[0]),
              ElementsAre(9, 7, 4, 0));
}

TEST(CumSum, AxisInput2D) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(ToFloats(RunOp("CumSum", {x, I64({}, {1})}, {}, 1, 14)[0]), ElementsAre(1, 3, 6, 4, 9, 15));
  EXPECT_THAT(ToFloats(RunOp("CumSum", {x, I64({1}, {-2})}, {}, 1, 11)[0]), ElementsAre(1, 2, 3, 5, 7, 9));
  auto r = RunNode("CumSum", {x, I64({}, {2})}, {}, 1, 14);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
}

}  // namespace
}  // namespace kiln
