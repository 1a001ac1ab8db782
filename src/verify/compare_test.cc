// Compare: each metric on small tensors whose figures are worked out by hand
// in the comments, the tolerance rule and its defaults, NaN/Inf handling,
// dtype and shape mismatches.
#include "verify/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kiln::verify {
namespace {

using ::testing::HasSubstr;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor F32(const Shape& shape, const std::vector<float>& v) { return Tensor::FromVector<float>(DType::kFloat32, shape, v); }

Tensor OfDtype(DType dtype, const Shape& shape, const std::vector<double>& v) {
  Tensor t = Tensor::Zeros(dtype, shape);
  for (size_t i = 0; i < v.size(); ++i) t.SetFromDouble(static_cast<int64_t>(i), v[i]);
  return t;
}

// ref [[1,-2],[3,4]], test [[1,-2.5],[3,5]]: |diff| = 0, 0.5, 0, 1.
TEST(CompareMetrics, EachFigureOnAHandMadePair) {
  const Tolerance tol{1e-3, 1e-4};
  CompareResult r = Compare(F32({2, 2}, {1, -2, 3, 4}), F32({2, 2}, {1, -2.5f, 3, 5}), tol);
  ASSERT_TRUE(r.has_metrics);
  EXPECT_FALSE(r.ok);
  const Metrics& m = r.metrics;
  EXPECT_EQ(m.count, 4);
  EXPECT_DOUBLE_EQ(m.max_abs_ref, 4);
  EXPECT_DOUBLE_EQ(m.max_abs_diff, 1);
  EXPECT_DOUBLE_EQ(m.mean_abs_diff, 1.5 / 4);
  EXPECT_DOUBLE_EQ(m.rel_error, 0.25);
  // sorted: [-2,1,3,4] against [-2.5,1,3,5]: 0.5, 0, 0, 1.
  EXPECT_DOUBLE_EQ(m.sorted_max_diff, 1);
  EXPECT_DOUBLE_EQ(m.rms, std::sqrt((0.25 + 1) / 4));
  // <r,t> = 1 + 5 + 9 + 20 = 35; |r|^2 = 30; |t|^2 = 41.25.
  EXPECT_DOUBLE_EQ(m.cosine, 35 / std::sqrt(30 * 41.25));
  EXPECT_EQ(m.bad_count, 2);
  EXPECT_EQ(m.worst_flat, 3);
  EXPECT_EQ(m.worst_index, (std::vector<int64_t>{1, 1}));
  EXPECT_DOUBLE_EQ(m.worst_ref, 4);
  EXPECT_DOUBLE_EQ(m.worst_test, 5);
  // atol needed at rtol 1e-3: max(0.5 - 0.002, 1 - 0.004) = 0.996.
  EXPECT_DOUBLE_EQ(m.min_atol, 0.996);
  // rtol needed at atol 1e-4: max((0.5 - 1e-4) / 2, (1 - 1e-4) / 4) = 0.249975.
  EXPECT_DOUBLE_EQ(m.min_rtol, (1 - 1e-4) / 4);
  EXPECT_EQ(m.ref_nan + m.ref_inf + m.test_nan + m.test_inf, 0);
  EXPECT_EQ(r.reason, "2 of 4 elements outside rtol 0.001 atol 0.0001");
}

TEST(CompareMetrics, SmallestTolerancesReallyPass) {
  const Tensor ref = F32({2, 2}, {1, -2, 3, 4}), test = F32({2, 2}, {1, -2.5f, 3, 5});
  const Tolerance tol{1e-3, 1e-4};
  const Metrics m = Compare(ref, test, tol).metrics;
  EXPECT_TRUE(Compare(ref, test, {tol.rtol, m.min_atol}).ok);
  EXPECT_TRUE(Compare(ref, test, {m.min_rtol, tol.atol}).ok);
  EXPECT_FALSE(Compare(ref, test, {tol.rtol, m.min_atol * 0.99}).ok);
  EXPECT_FALSE(Compare(ref, test, {m.min_rtol * 0.99, tol.atol}).ok);
}

TEST(CompareMetrics, PermutedValuesHaveZeroSortedDiff) {
  CompareResult r = Compare(F32({4}, {1, 2, 3, 4}), F32({4}, {4, 3, 2, 1}), {1e-3, 1e-4});
  EXPECT_FALSE(r.ok);
  EXPECT_DOUBLE_EQ(r.metrics.max_abs_diff, 3);
  EXPECT_DOUBLE_EQ(r.metrics.sorted_max_diff, 0);
  EXPECT_EQ(r.metrics.worst_flat, 0);  // ties: the first of |diff| = 3
}

TEST(CompareMetrics, WorstIndexIsAMultiIndex) {
  std::vector<float> ref(60), test(60);
  for (int i = 0; i < 60; ++i) ref[i] = test[i] = static_cast<float>(i);
  test[59] = 100;  // [0,2,3,4] of 1x3x4x5: 2*20 + 3*5 + 4 = 59
  CompareResult r = Compare(F32({1, 3, 4, 5}, ref), F32({1, 3, 4, 5}, test), {1e-3, 1e-4});
  EXPECT_EQ(r.metrics.worst_index, (std::vector<int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(IndexToString(r.metrics.worst_index), "[0,2,3,4]");
  EXPECT_DOUBLE_EQ(r.metrics.worst_test, 100);
  EXPECT_EQ(UnravelIndex(23, {1, 3, 4, 5}), (std::vector<int64_t>{0, 1, 0, 3}));
}

TEST(CompareMetrics, ZeroReferenceGivesInfiniteRelativeFigures) {
  CompareResult r = Compare(F32({2}, {0, 0}), F32({2}, {0, 1}), {1e-3, 1e-4});
  EXPECT_EQ(r.metrics.rel_error, kInf);
  EXPECT_EQ(r.metrics.min_rtol, kInf);  // no rtol helps where ref is 0
  EXPECT_DOUBLE_EQ(r.metrics.min_atol, 1);
  EXPECT_DOUBLE_EQ(r.metrics.cosine, 0);
  EXPECT_TRUE(Compare(F32({2}, {0, 0}), F32({2}, {0, 0}), {0, 0}).ok);
  EXPECT_DOUBLE_EQ(Compare(F32({2}, {0, 0}), F32({2}, {0, 0}), {0, 0}).metrics.cosine, 1);
}

TEST(CompareNan, NanEqualsNanAndInfEqualsOnlyItself) {
  EXPECT_TRUE(WithinTolerance(kNan, kNan, {0, 0}));
  EXPECT_FALSE(WithinTolerance(kNan, 1, {1, 1}));
  EXPECT_FALSE(WithinTolerance(1, kNan, {1, 1}));
  EXPECT_TRUE(WithinTolerance(kInf, kInf, {0, 0}));
  EXPECT_FALSE(WithinTolerance(kInf, -kInf, {1, 1}));
  EXPECT_FALSE(WithinTolerance(1e30, kInf, {1, 1}));
  const Tensor ref = OfDtype(DType::kFloat32, {4}, {kNan, 1, kInf, 2});
  CompareResult same = Compare(ref, OfDtype(DType::kFloat32, {4}, {kNan, 1, kInf, 2}), {1e-3, 1e-4});
  EXPECT_TRUE(same.ok) << same.reason;
  EXPECT_EQ(same.metrics.ref_nan, 1);
  EXPECT_EQ(same.metrics.test_inf, 1);
  EXPECT_DOUBLE_EQ(same.metrics.max_abs_ref, 2);  // finite values only
  EXPECT_DOUBLE_EQ(same.metrics.sorted_max_diff, 0);
}

TEST(CompareNan, NanOnOneSideIsTheWorstElement) {
  const Tensor ref = OfDtype(DType::kFloat32, {4}, {1, 2, 3, kInf});
  CompareResult r = Compare(ref, OfDtype(DType::kFloat32, {4}, {1, kNan, 30, -kInf}), {1e-3, 1e-4});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.metrics.test_nan, 1);
  EXPECT_EQ(r.metrics.ref_inf, 1);
  EXPECT_EQ(r.metrics.test_inf, 1);
  EXPECT_EQ(r.metrics.nonfinite_mismatches, 2);
  EXPECT_EQ(r.metrics.bad_count, 3);
  EXPECT_EQ(r.metrics.worst_flat, 1);  // the NaN, though |30 - 3| is the largest finite diff
  EXPECT_DOUBLE_EQ(r.metrics.max_abs_diff, 27);
  EXPECT_EQ(r.metrics.min_atol, kInf);
  EXPECT_EQ(r.metrics.min_rtol, kInf);
  EXPECT_EQ(r.metrics.sorted_max_diff, kInf);
}

TEST(CompareTolerance, DefaultsPerDtype) {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    EXPECT_DOUBLE_EQ(DefaultTolerance(t).rtol, 1e-3);
    EXPECT_DOUBLE_EQ(DefaultTolerance(t).atol, 1e-4);
  }
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    EXPECT_DOUBLE_EQ(DefaultTolerance(t).rtol, 1e-2);
    EXPECT_DOUBLE_EQ(DefaultTolerance(t).atol, 1e-2);
  }
  for (DType t : {DType::kInt8, DType::kUint8, DType::kInt32, DType::kInt64, DType::kBool}) {
    EXPECT_EQ(DefaultTolerance(t).rtol, 0);
    EXPECT_EQ(DefaultTolerance(t).atol, 0);
  }
  // 8 against 8.0625: 0.0625 is inside fp16's 0.01 + 0.01 * 8; 0.005 is outside fp32's 1e-4 + 1e-3 * 1.
  EXPECT_TRUE(Compare(OfDtype(DType::kFloat16, {1}, {8}), OfDtype(DType::kFloat16, {1}, {8.0625}), DefaultTolerance(DType::kFloat16)).ok);
  EXPECT_FALSE(Compare(F32({1}, {1}), F32({1}, {1.005f}), DefaultTolerance(DType::kFloat32)).ok);
  EXPECT_TRUE(Compare(F32({1}, {1}), F32({1}, {1.0005f}), DefaultTolerance(DType::kFloat32)).ok);
  // Integers are exact.
  CompareResult ints = Compare(OfDtype(DType::kInt32, {2}, {1, 2}), OfDtype(DType::kInt32, {2}, {1, 3}), DefaultTolerance(DType::kInt32));
  EXPECT_FALSE(ints.ok);
  EXPECT_EQ(ints.metrics.bad_count, 1);
}

TEST(CompareTolerance, GlobalOverridesFloatsOnlyPerOutputOverridesAll) {
  ToleranceOverrides o;
  o.rtol = 0.5;
  Tolerance f = ResolveTolerance("y", DType::kFloat32, o);
  EXPECT_DOUBLE_EQ(f.rtol, 0.5);
  EXPECT_DOUBLE_EQ(f.atol, 1e-4);  // the dtype default stays
  EXPECT_EQ(ResolveTolerance("idx", DType::kInt64, o).rtol, 0);
  o.atol = 0.25;
  EXPECT_DOUBLE_EQ(ResolveTolerance("y", DType::kFloat16, o).atol, 0.25);
  o.per_output["idx"] = {0, 1};
  o.per_output["y"] = {0.125, 0};
  EXPECT_DOUBLE_EQ(ResolveTolerance("idx", DType::kInt64, o).atol, 1);
  EXPECT_DOUBLE_EQ(ResolveTolerance("y", DType::kFloat32, o).rtol, 0.125);
  EXPECT_DOUBLE_EQ(ResolveTolerance("y", DType::kFloat32, o).atol, 0);
  EXPECT_DOUBLE_EQ(ResolveTolerance("z", DType::kFloat32, o).rtol, 0.5);
  // With the override an integer off by one passes.
  EXPECT_TRUE(Compare(OfDtype(DType::kInt64, {2}, {1, 2}), OfDtype(DType::kInt64, {2}, {1, 3}), ResolveTolerance("idx", DType::kInt64, o)).ok);
}

TEST(CompareTolerance, ParseAssignment) {
  auto a = ParseToleranceAssignment("logits=1e-2,1e-3");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->first, "logits");
  EXPECT_DOUBLE_EQ(a->second.rtol, 1e-2);
  EXPECT_DOUBLE_EQ(a->second.atol, 1e-3);
  auto b = ParseToleranceAssignment("a=b=0,0.5");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->first, "a=b");
  EXPECT_DOUBLE_EQ(b->second.atol, 0.5);
  for (const char* bad : {"logits", "=1,2", "y=0.1", "y=x,1", "y=-1,0", "y=1,inf", "y=1,"}) {
    auto r = ParseToleranceAssignment(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) EXPECT_THAT(r.status().message(), HasSubstr(bad));
  }
}

TEST(CompareMismatch, DtypeDifferenceIsAMismatchWithMetrics) {
  CompareResult r = Compare(F32({2}, {1, 2}), OfDtype(DType::kFloat16, {2}, {1, 2}), {1e-3, 1e-4});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "dtype float16, expected float32");
  ASSERT_TRUE(r.has_metrics);
  EXPECT_EQ(r.metrics.bad_count, 0);
}

TEST(CompareMismatch, ShapeDifference) {
  CompareResult same_count = Compare(F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 2}, {1, 2, 3, 4, 5, 6}), {1e-3, 1e-4});
  EXPECT_FALSE(same_count.ok);
  EXPECT_EQ(same_count.reason, "shape [3,2], expected [2,3]");
  EXPECT_TRUE(same_count.has_metrics);  // flat data compared
  EXPECT_EQ(same_count.metrics.bad_count, 0);
  CompareResult other_count = Compare(F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2, 2}, {1, 2, 3, 4}), {1e-3, 1e-4});
  EXPECT_FALSE(other_count.ok);
  EXPECT_FALSE(other_count.has_metrics);
  CompareResult both = Compare(F32({2}, {1, 2}), OfDtype(DType::kFloat64, {1, 2}, {1, 2}), {1e-3, 1e-4});
  EXPECT_EQ(both.reason, "dtype float64, expected float32; shape [1,2], expected [2]");
}

TEST(CompareMismatch, LargeInt64ComparedExactly) {
  const int64_t big = int64_t{1} << 53;  // big and big + 1 are the same double
  Tensor a = Tensor::FromVector<int64_t>(DType::kInt64, {1}, {big});
  Tensor b = Tensor::FromVector<int64_t>(DType::kInt64, {1}, {big + 1});
  EXPECT_FALSE(Compare(a, b, {0, 0}).ok);
  EXPECT_TRUE(Compare(a, a.Clone(), {0, 0}).ok);
}

TEST(CompareMismatch, StringsAndEmptyTensors) {
  Tensor s1 = Tensor::FromVector<std::string>(DType::kString, {2}, {"a", "b"});
  Tensor s2 = Tensor::FromVector<std::string>(DType::kString, {2}, {"a", "c"});
  EXPECT_TRUE(Compare(s1, s1.Clone(), {0, 0}).ok);
  CompareResult r = Compare(s1, s2, {0, 0});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, "1 of 2 strings differ, first at [1]");
  CompareResult empty = Compare(F32({0, 3}, {}), F32({0, 3}, {}), {1e-3, 1e-4});
  EXPECT_TRUE(empty.ok);
  EXPECT_EQ(empty.metrics.count, 0);
  EXPECT_EQ(empty.metrics.worst_flat, -1);
}

TEST(CompareMismatch, StridedViewsCompareInLogicalOrder) {
  Tensor base = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor transposed = base.Permuted({1, 0});  // [[1,4],[2,5],[3,6]] as a view
  EXPECT_TRUE(Compare(F32({3, 2}, {1, 4, 2, 5, 3, 6}), transposed, {0, 0}).ok);
}

TEST(CompareFormat, Numbers) {
  EXPECT_EQ(FormatNumber(0.25), "0.25");
  EXPECT_EQ(FormatNumber(1e-4), "0.0001");
  EXPECT_EQ(FormatNumber(kInf), "inf");
  EXPECT_EQ(FormatNumber(-kInf), "-inf");
  EXPECT_EQ(FormatNumber(kNan), "nan");
}

}  // namespace
}  // namespace kiln::verify
