// Unit tests of the Reduce* and ArgMax/ArgMin reference kernels. Expected
// values are worked out by hand or by an independent loop in the test.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

Tensor Run1(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, int64_t opset) {
  auto r = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? (*r)[0] : Tensor();
}

// x[i][j] = i - 1.5 * j + 0.25 * i * j, a 3x4 matrix with mixed signs.
Tensor Sample() {
  std::vector<float> v;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) v.push_back(static_cast<float>(i - 1.5 * j + 0.25 * i * j));
  return F32({3, 4}, v);
}

TEST(ReduceSum, AxesAttributeKeepdims) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = Run1("ReduceSum", {x}, {Attribute::Ints("axes", {1})}, 11);
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_THAT(ToFloats(y), ElementsAre(6, 15));
  y = Run1("ReduceSum", {x}, {Attribute::Ints("axes", {0}), Attribute::Int("keepdims", 0)}, 11);
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_THAT(ToFloats(y), ElementsAre(5, 7, 9));
  y = Run1("ReduceSum", {x}, {Attribute::Ints("axes", {-1}), Attribute::Int("keepdims", 0)}, 11);
  EXPECT_THAT(ToFloats(y), ElementsAre(6, 15));
}

TEST(ReduceSum, DefaultReducesAllAxes) {
  Tensor y = Run1("ReduceSum", {F32({2, 3}, {1, 2, 3, 4, 5, 6})}, {}, 11);
  EXPECT_EQ(y.shape(), (Shape{1, 1}));
  EXPECT_THAT(ToFloats(y), ElementsAre(21));
  y = Run1("ReduceSum", {F32({2, 3}, {1, 2, 3, 4, 5, 6})}, {Attribute::Int("keepdims", 0)}, 13);
  EXPECT_EQ(y.shape(), (Shape{}));
  EXPECT_THAT(ToFloats(y), ElementsAre(21));
}

TEST(ReduceSum, AxesInputFromOpset13) {
  Tensor x = F32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor y = Run1("ReduceSum", {x, I64({2}, {0, 2})}, {Attribute::Int("keepdims", 0)}, 13);
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_THAT(ToFloats(y), ElementsAre(1 + 2 + 5 + 6, 3 + 4 + 7 + 8));
}

TEST(ReduceSum, NoopWithEmptyAxes) {
  Tensor x = F32({2, 2}, {1, 2, 3, 4});
  Tensor y = Run1("ReduceSum", {x, I64({0}, {})}, {Attribute::Int("noop_with_empty_axes", 1)}, 13);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_THAT(ToFloats(y), ElementsAre(1, 2, 3, 4));
  // Without the flag, empty axes reduce everything.
  y = Run1("ReduceSum", {x, I64({0}, {})}, {}, 13);
  EXPECT_THAT(ToFloats(y), ElementsAre(10));
}

TEST(ReduceSum, Int64IsExact) {
  const int64_t big = (int64_t{1} << 60) + 1;
  Tensor y = Run1("ReduceSum", {I64({2}, {big, 2})}, {Attribute::Int("keepdims", 0)}, 11);
  EXPECT_EQ(y.data<int64_t>()[0], big + 2);
}

// Every Reduce* op along axis 1 of Sample(), against the textbook formula.
TEST(Reduce, AllKindsAlongAxis1) {
  Tensor x = Sample();
  struct Case { const char* op; double (*f)(const std::vector<double>&); };
  const Case cases[] = {
      {"ReduceSum", [](const std::vector<double>& r) { double s = 0; for (double v : r) s += v; return s; }},
      {"ReduceMean", [](const std::vector<double>& r) { double s = 0; for (double v : r) s += v; return s / r.size(); }},
      {"ReduceMax", [](const std::vector<double>& r) { double m = r[0]; for (double v : r) m = std::max(m, v); return m; }},
      {"ReduceMin", [](const std::vector<double>& r) { double m = r[0]; for (double v : r) m = std::min(m, v); return m; }},
      {"ReduceProd", [](const std::vector<double>& r) { double p = 1; for (double v : r) p *= v; return p; }},
      {"ReduceL1", [](const std::vector<double>& r) { double s = 0; for (double v : r) s += std::fabs(v); return s; }},
      {"ReduceL2", [](const std::vector<double>& r) { double s = 0; for (double v : r) s += v * v; return std::sqrt(s); }},
      {"ReduceSumSquare", [](const std::vector<double>& r) { double s = 0; for (double v : r) s += v * v; return s; }},
      {"ReduceLogSumExp", [](const std::vector<double>& r) { double s = 0; for (double v : r) s += std::exp(v); return std::log(s); }},
  };
  for (const auto& c : cases) {
    Tensor y = Run1(c.op, {x}, {Attribute::Ints("axes", {1}), Attribute::Int("keepdims", 0)}, 11);
    ASSERT_EQ(y.shape(), (Shape{3})) << c.op;
    for (int i = 0; i < 3; ++i) {
      std::vector<double> row;
      for (int j = 0; j < 4; ++j) row.push_back(x.GetAsDouble(i * 4 + j));
      EXPECT_NEAR(y.GetAsDouble(i), c.f(row), 1e-5 * (1 + std::fabs(c.f(row)))) << c.op << " row " << i;
    }
  }
}

TEST(ReduceLogSum, OfPositiveValues) {
  Tensor y = Run1("ReduceLogSum", {F32({2, 2}, {1, 2, 3, 4})}, {Attribute::Ints("axes", {0})}, 11);
  EXPECT_THAT(ToFloats(y), ElementsAre(std::log(4.0f), std::log(6.0f)));
}

TEST(ReduceLogSumExp, LargeValuesDoNotOverflow) {
  Tensor y = Run1("ReduceLogSumExp", {F32({2}, {1000, 1000})}, {Attribute::Int("keepdims", 0)}, 13);
  EXPECT_NEAR(y.GetAsDouble(0), 1000 + std::log(2.0), 1e-3);
}

TEST(Reduce, AxesInputFromOpset18) {
  Tensor x = F32({2, 3}, {1, 5, 3, 4, 2, 6});
  Tensor y = Run1("ReduceMax", {x, I64({1}, {1})}, {Attribute::Int("keepdims", 0)}, 18);
  EXPECT_THAT(ToFloats(y), ElementsAre(5, 6));
  y = Run1("ReduceMin", {x, I64({1}, {0})}, {}, 18);
  EXPECT_EQ(y.shape(), (Shape{1, 3}));
  EXPECT_THAT(ToFloats(y), ElementsAre(1, 2, 3));
}

// Reductions over an empty set give the identity of the reduction.
TEST(Reduce, EmptySetIdentities) {
  Tensor x = F32({2, 0}, {});
  const float inf = std::numeric_limits<float>::infinity();
  auto reduce = [&](const char* op) {
    return Run1(op, {x}, {Attribute::Ints("axes", {1}), Attribute::Int("keepdims", 0)}, 11);
  };
  EXPECT_THAT(ToFloats(reduce("ReduceSum")), ElementsAre(0, 0));
  EXPECT_THAT(ToFloats(reduce("ReduceProd")), ElementsAre(1, 1));
  EXPECT_THAT(ToFloats(reduce("ReduceMax")), ElementsAre(-inf, -inf));
  EXPECT_THAT(ToFloats(reduce("ReduceMin")), ElementsAre(inf, inf));
  EXPECT_THAT(ToFloats(reduce("ReduceL1")), ElementsAre(0, 0));
  EXPECT_THAT(ToFloats(reduce("ReduceL2")), ElementsAre(0, 0));
  EXPECT_THAT(ToFloats(reduce("ReduceSumSquare")), ElementsAre(0, 0));
  EXPECT_THAT(ToFloats(reduce("ReduceLogSum")), ElementsAre(-inf, -inf));
  EXPECT_THAT(ToFloats(reduce("ReduceLogSumExp")), ElementsAre(-inf, -inf));
  EXPECT_TRUE(std::isnan(reduce("ReduceMean").GetAsDouble(0)));
}

TEST(Reduce, IntegerMaxUsesTypeLimits) {
  Tensor y = Run1("ReduceMax", {I64({3}, {-5, 7, 2})}, {Attribute::Int("keepdims", 0)}, 13);
  EXPECT_THAT(ToInts(y), ElementsAre(7));
}

TEST(Reduce, BadAxesAreErrors) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = RunNode("ReduceSum", {x}, {Attribute::Ints("axes", {2})}, 1, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
  EXPECT_THAT(r.status().message(), HasSubstr("out of range"));
  r = RunNode("ReduceMean", {x}, {Attribute::Ints("axes", {1, -1})}, 1, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("repeated"));
  r = RunNode("ReduceSum", {x}, {Attribute::Ints("axes", {1})}, 1, 13);  // axes is an input from 13
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
  r = RunNode("ReduceSum", {x, I64({1}, {5})}, {}, 1, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("out of range"));
}

TEST(ArgMax, KeepdimsAndAxis) {
  Tensor x = F32({2, 3}, {1, 9, 3, 7, 2, 7});
  Tensor y = Run1("ArgMax", {x}, {Attribute::Int("axis", 1)}, 13);
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_THAT(ToInts(y), ElementsAre(1, 0));
  y = Run1("ArgMax", {x}, {Attribute::Int("keepdims", 0)}, 13);  // axis 0
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_THAT(ToInts(y), ElementsAre(1, 0, 1));
  y = Run1("ArgMax", {x}, {Attribute::Int("axis", -1), Attribute::Int("keepdims", 0)}, 13);
  EXPECT_THAT(ToInts(y), ElementsAre(1, 0));
}

TEST(ArgMax, SelectLastIndex) {
  Tensor x = F32({2, 3}, {1, 9, 3, 7, 2, 7});
  Tensor y = Run1("ArgMax", {x}, {Attribute::Int("axis", 1), Attribute::Int("keepdims", 0),
                                  Attribute::Int("select_last_index", 1)}, 13);
  EXPECT_THAT(ToInts(y), ElementsAre(1, 2));
  y = Run1("ArgMax", {x}, {Attribute::Int("axis", 1), Attribute::Int("keepdims", 0)}, 13);
  EXPECT_THAT(ToInts(y), ElementsAre(1, 0));  // first of the tied 7s
}

TEST(ArgMin, FirstAndLastIndex) {
  Tensor x = F32({2, 3}, {4, 1, 1, 0, 5, -2});
  Tensor y = Run1("ArgMin", {x}, {Attribute::Int("axis", 1), Attribute::Int("keepdims", 0)}, 13);
  EXPECT_THAT(ToInts(y), ElementsAre(1, 2));
  y = Run1("ArgMin", {x}, {Attribute::Int("axis", 1), Attribute::Int("keepdims", 0),
                           Attribute::Int("select_last_index", 1)}, 13);
  EXPECT_THAT(ToInts(y), ElementsAre(2, 2));
}

TEST(ArgMax, AxisOutOfRange) {
  auto r = RunNode("ArgMax", {F32({2}, {1, 2})}, {Attribute::Int("axis", 1)}, 1, 13);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("n0"));
  EXPECT_THAT(r.status().message(), HasSubstr("out of range"));
}

}  // namespace
}  // namespace kiln
