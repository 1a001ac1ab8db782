// Diagnose: each kind of error built by construction from a reference with
// distinct values (1..60 in a 1x3x4x5 NCHW tensor), with the index maps
// written out as loops here rather than through the code under test, and
// the named diagnosis asserted; then the same maps on every numeric dtype.
#include "verify/diagnose.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace kiln::verify {
namespace {

using ::testing::HasSubstr;
using Index = std::vector<int64_t>;

constexpr int64_t N = 1, C = 3, H = 4, W = 5;

// A tensor whose element at each index is value(index).
Tensor Make(DType dtype, const Shape& shape, const std::function<double(const Index&)>& value) {
  Tensor t = Tensor::Zeros(dtype, shape);
  Index idx(shape.size(), 0);
  for (int64_t flat = 0; flat < t.numel(); ++flat) {
    t.SetFromDouble(flat, value(idx));
    for (size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return t;
}

// ref[n,c,h,w] = 1 + its NCHW flat index: 1..60, all distinct.
double RefValue(const Index& i) { return 1 + ((i[0] * C + i[1]) * H + i[2]) * W + i[3]; }
Tensor Ref(DType dtype = DType::kFloat32) { return Make(dtype, {N, C, H, W}, RefValue); }

Diagnosis DiagnoseDefault(const Tensor& ref, const Tensor& test) { return Diagnose(ref, test, DefaultTolerance(ref.dtype())); }

// The motivating bug: ref's NCHW buffer read by code that assumes NHWC, i.e.
// test[n,c,h,w] = buffer[((n*H + h)*W + w)*C + c].
Tensor NchwReadAsNhwc(DType dtype = DType::kFloat32) {
  return Make(dtype, {N, C, H, W}, [](const Index& i) { return 1.0 + ((i[0] * H + i[2]) * W + i[3]) * C + i[1]; });
}

// The reverse: ref converted to an NHWC buffer, then read with NCHW strides.
// buffer[((n*H + h)*W + w)*C + c] = ref[n,c,h,w]; test's flat element f is buffer[f].
Tensor NhwcReadAsNchw(DType dtype = DType::kFloat32) {
  Tensor t = Tensor::Zeros(dtype, {N, C, H, W});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) t.SetFromDouble(((n * H + h) * W + w) * C + c, RefValue({n, c, h, w}));
  return t;
}

TEST(DiagnoseControl, IdenticalTensorsHaveNothingToDiagnose) {
  Diagnosis d = DiagnoseDefault(Ref(), Ref());
  EXPECT_EQ(d.kind, DiagnosisKind::kNone);
  EXPECT_EQ(d.bad_count, 0);
  EXPECT_FALSE(d.has_map);
  EXPECT_TRUE(Compare(Ref(), Ref(), DefaultTolerance(DType::kFloat32)).ok);
}

TEST(DiagnoseLayout, NchwDataReadAsNhwc) {
  Diagnosis d = DiagnoseDefault(Ref(), NchwReadAsNhwc());
  EXPECT_EQ(d.kind, DiagnosisKind::kIndexMap);
  EXPECT_TRUE(d.sorted_values_agree);
  ASSERT_TRUE(d.has_map);
  EXPECT_EQ(d.map.type, IndexMap::Type::kRefReadAsTransposed);
  EXPECT_EQ(d.map.perm, (Index{0, 2, 3, 1}));
  EXPECT_THAT(d.text, HasSubstr("misplaced values: test equals ref's NCHW data read as NHWC"));
  EXPECT_THAT(d.text, HasSubstr("channels-first buffer read with channels-last strides"));
}

TEST(DiagnoseLayout, NhwcDataReadAsNchw) {
  Diagnosis d = DiagnoseDefault(Ref(), NhwcReadAsNchw());
  EXPECT_EQ(d.kind, DiagnosisKind::kIndexMap);
  EXPECT_EQ(d.map.type, IndexMap::Type::kTransposedReadAsRef);
  EXPECT_EQ(d.map.perm, (Index{0, 2, 3, 1}));
  EXPECT_THAT(d.text, HasSubstr("test equals ref's NHWC data read as NCHW"));
  EXPECT_THAT(d.text, HasSubstr("channels-last buffer read with channels-first strides"));
}

TEST(DiagnoseLayout, OtherRank4Permutation) {
  // Buffer of ref in N,W,C,H order, read as NCHW.
  Tensor t = Tensor::Zeros(DType::kFloat32, {N, C, H, W});
  for (int64_t c = 0; c < C; ++c)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) t.SetFromDouble((w * C + c) * H + h, RefValue({0, c, h, w}));
  Diagnosis d = DiagnoseDefault(Ref(), t);
  EXPECT_EQ(d.kind, DiagnosisKind::kIndexMap);
  EXPECT_EQ(d.map.perm, (Index{0, 3, 1, 2}));
  EXPECT_THAT(d.text, HasSubstr("ref's NWCH data read as NCHW"));
}

TEST(DiagnoseLayout, Rank3ChwReadAsHwc) {
  auto chw = [](const Index& i) { return 1.0 + (i[0] * H + i[1]) * W + i[2]; };
  Tensor ref = Make(DType::kFloat32, {C, H, W}, chw);
  Tensor test = Make(DType::kFloat32, {C, H, W}, [](const Index& i) { return 1.0 + (i[1] * W + i[2]) * C + i[0]; });
  Diagnosis d = DiagnoseDefault(ref, test);
  EXPECT_EQ(d.kind, DiagnosisKind::kIndexMap);
  EXPECT_EQ(d.map.perm, (Index{1, 2, 0}));
  EXPECT_THAT(d.text, HasSubstr("ref's CHW data read as HWC"));
}

TEST(DiagnoseLayout, ShapeMismatchIsDiagnosedOnTheFlatData) {
  // test is ref correctly transposed to NHWC, with the NHWC shape: its flat
  // buffer is ref's NHWC data.
  Tensor test = Ref().Permuted({0, 2, 3, 1}).Contiguous();
  ASSERT_EQ(test.shape(), (Shape{1, 4, 5, 3}));
  EXPECT_FALSE(Compare(Ref(), test, DefaultTolerance(DType::kFloat32)).ok);
  Diagnosis d = DiagnoseDefault(Ref(), test);
  EXPECT_EQ(d.kind, DiagnosisKind::kIndexMap);
  EXPECT_EQ(d.map.type, IndexMap::Type::kTransposedReadAsRef);
  EXPECT_THAT(d.text, HasSubstr("so test is ref transposed to NHWC"));
}

TEST(DiagnoseMap, FlipAlongW) {
  Diagnosis d = DiagnoseDefault(Ref(), Make(DType::kFloat32, {N, C, H, W}, [](const Index& i) {
                  return RefValue({i[0], i[1], i[2], W - 1 - i[3]});
                }));
  EXPECT_EQ(d.kind, DiagnosisKind::kIndexMap);
  EXPECT_EQ(d.map.type, IndexMap::Type::kFlip);
  EXPECT_EQ(d.map.axis, 3);
  EXPECT_THAT(d.text, HasSubstr("flipped along axis 3 (W)"));
}

TEST(DiagnoseMap, CyclicShiftAlongH) {
  // test[.., h, ..] = ref[.., (h - 1) mod H, ..]
  Diagnosis d = DiagnoseDefault(Ref(), Make(DType::kFloat32, {N, C, H, W}, [](const Index& i) {
                  return RefValue({i[0], i[1], (i[2] + H - 1) % H, i[3]});
                }));
  EXPECT_EQ(d.kind, DiagnosisKind::kIndexMap);
  EXPECT_EQ(d.map.type, IndexMap::Type::kShift);
  EXPECT_EQ(d.map.axis, 2);
  EXPECT_EQ(d.map.shift, 1);
  EXPECT_THAT(d.text, HasSubstr("rolled by +1 along axis 2 (H)"));
}

TEST(DiagnoseMap, NegativeCyclicShiftAlongW) {
  Diagnosis d = DiagnoseDefault(Ref(), Make(DType::kFloat32, {N, C, H, W}, [](const Index& i) {
                  return RefValue({i[0], i[1], i[2], (i[3] + 2) % W});
                }));
  EXPECT_EQ(d.map.type, IndexMap::Type::kShift);
  EXPECT_EQ(d.map.axis, 3);
  EXPECT_EQ(d.map.shift, -2);
}

TEST(DiagnoseMap, SwappedSpatialAxes) {
  auto sq = [](const Index& i) { return 1.0 + ((i[1] * 4) + i[2]) * 4 + i[3]; };
  Tensor ref = Make(DType::kFloat32, {1, 2, 4, 4}, sq);
  Tensor test = Make(DType::kFloat32, {1, 2, 4, 4}, [&](const Index& i) { return sq({i[0], i[1], i[3], i[2]}); });
  Diagnosis d = DiagnoseDefault(ref, test);
  EXPECT_EQ(d.kind, DiagnosisKind::kIndexMap);
  EXPECT_EQ(d.map.type, IndexMap::Type::kSwapAxes);
  EXPECT_EQ(d.map.axis, 2);
  EXPECT_EQ(d.map.axis2, 3);
  EXPECT_THAT(d.text, HasSubstr("spatial axis 2 (H) and axis 3 (W) swapped"));
}

TEST(DiagnoseMap, MisplacedWithoutASimpleMap) {
  Tensor test = Ref().Clone();
  test.SetFromDouble(7, RefValue({0, 0, 1, 3}));  // swap flat 7 and 8
  test.SetFromDouble(8, RefValue({0, 0, 1, 2}));
  Diagnosis d = DiagnoseDefault(Ref(), test);
  EXPECT_EQ(d.kind, DiagnosisKind::kMisplaced);
  EXPECT_TRUE(d.sorted_values_agree);
  EXPECT_EQ(d.bad_count, 2);
  EXPECT_EQ(d.region, (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 0}, {1, 1}, {2, 3}}));
  EXPECT_THAT(d.text, HasSubstr("lie in [0, 0, 1, 2:4]"));
}

TEST(DiagnoseKind, Scaled) {
  Diagnosis d = DiagnoseDefault(Ref(), Make(DType::kFloat32, {N, C, H, W}, [](const Index& i) { return 1.5 * RefValue(i); }));
  EXPECT_EQ(d.kind, DiagnosisKind::kScaled);
  EXPECT_FALSE(d.sorted_values_agree);
  EXPECT_NEAR(d.scale, 1.5, 1e-12);
  EXPECT_THAT(d.text, HasSubstr("scaled: test ~= 1.5 * ref"));
}

TEST(DiagnoseKind, AllZeros) {
  Diagnosis d = DiagnoseDefault(Ref(), Tensor::Zeros(DType::kFloat32, {N, C, H, W}));
  EXPECT_EQ(d.kind, DiagnosisKind::kScaled);
  EXPECT_EQ(d.scale, 0);
  EXPECT_THAT(d.text, HasSubstr("all zeros"));
}

TEST(DiagnoseKind, Offset) {
  Diagnosis d = DiagnoseDefault(Ref(), Make(DType::kFloat32, {N, C, H, W}, [](const Index& i) { return RefValue(i) - 0.25; }));
  EXPECT_EQ(d.kind, DiagnosisKind::kOffset);
  EXPECT_NEAR(d.offset, -0.25, 1e-6);
  EXPECT_THAT(d.text, HasSubstr("offset: test ~= ref - 0.25"));
}

TEST(DiagnoseKind, CorruptedRegion) {
  // [0, 1, 1:3, 2:4] overwritten: 4 of 60 elements.
  Tensor test = Make(DType::kFloat32, {N, C, H, W}, [](const Index& i) {
    const bool in = i[1] == 1 && i[2] >= 1 && i[2] <= 2 && i[3] >= 2 && i[3] <= 3;
    return in ? 1000.0 : RefValue(i);
  });
  Diagnosis d = DiagnoseDefault(Ref(), test);
  EXPECT_EQ(d.kind, DiagnosisKind::kRegion);
  EXPECT_EQ(d.bad_count, 4);
  EXPECT_EQ(d.region, (std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {1, 1}, {1, 2}, {2, 3}}));
  EXPECT_THAT(d.text, HasSubstr("lie in [0, 1, 1:3, 2:4], a box of 4 elements"));
}

TEST(DiagnoseKind, ShiftWithAZeroBorder) {
  // test[.., w] = ref[.., w - 1], and 0 where w - 1 falls off the tensor.
  Tensor test = Make(DType::kFloat32, {N, C, H, W}, [](const Index& i) {
    return i[3] == 0 ? 0.0 : RefValue({i[0], i[1], i[2], i[3] - 1});
  });
  Diagnosis d = DiagnoseDefault(Ref(), test);
  EXPECT_EQ(d.kind, DiagnosisKind::kBorderShift);
  EXPECT_EQ(d.map.axis, 3);
  EXPECT_EQ(d.map.shift, 1);
  EXPECT_THAT(d.text, HasSubstr("shifted by +1 along axis 3 (W)"));
}

TEST(DiagnoseKind, BadBorderAloneIsARegionNotAShift) {
  // Constant along W, so any W shift matches the interior; only w = 0 is bad.
  auto constant_w = [](const Index& i) { return 1.0 + i[1] * H + i[2]; };
  Tensor ref = Make(DType::kFloat32, {N, C, H, W}, constant_w);
  Tensor test = Make(DType::kFloat32, {N, C, H, W}, [&](const Index& i) { return i[3] == 0 && i[1] == 0 && i[2] == 0 ? 99.0 : constant_w(i); });
  EXPECT_EQ(DiagnoseDefault(ref, test).kind, DiagnosisKind::kRegion);
}

TEST(DiagnoseKind, RandomNoise) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  Tensor test = Ref().Clone();
  for (int64_t i = 0; i < test.numel(); ++i) test.SetFromDouble(i, test.GetAsDouble(i) + u(rng));
  Diagnosis d = DiagnoseDefault(Ref(), test);
  EXPECT_EQ(d.kind, DiagnosisKind::kNoise);
  EXPECT_THAT(d.text, HasSubstr("noise: "));
}

TEST(DiagnoseKind, DifferentElementCounts) {
  Diagnosis d = DiagnoseDefault(Ref(), Tensor::Zeros(DType::kFloat32, {2, 2}));
  EXPECT_EQ(d.kind, DiagnosisKind::kIncomparable);
  EXPECT_THAT(d.text, HasSubstr("4 elements, ref 60"));
}

TEST(DiagnoseNames, Layouts) {
  EXPECT_EQ(LayoutName(4, {0, 2, 3, 1}), "NHWC");
  EXPECT_EQ(LayoutName(3, {1, 2, 0}), "HWC");
  EXPECT_EQ(LayoutName(5, {0, 2, 3, 4, 1}), "NDHWC");
  EXPECT_EQ(LayoutName(6, {1, 0, 2, 3, 4, 5}), "axes(1,0,2,3,4,5)");
  EXPECT_STREQ(DiagnosisKindName(DiagnosisKind::kIndexMap), "index_map");
}

// The same maps, scale and noise on every numeric dtype (values 1..60 are
// exact in all of them; scale 2 stays under int8's 127).
class DiagnoseEveryDtype : public ::testing::TestWithParam<DType> {};

TEST_P(DiagnoseEveryDtype, MapsScaleAndNoise) {
  const DType dt = GetParam();
  const Tensor ref = Ref(dt);
  EXPECT_EQ(DiagnoseDefault(ref, Ref(dt)).kind, DiagnosisKind::kNone);

  Diagnosis layout = DiagnoseDefault(ref, NchwReadAsNhwc(dt));
  EXPECT_EQ(layout.kind, DiagnosisKind::kIndexMap);
  EXPECT_THAT(layout.text, HasSubstr("ref's NCHW data read as NHWC"));
  EXPECT_THAT(DiagnoseDefault(ref, NhwcReadAsNchw(dt)).text, HasSubstr("ref's NHWC data read as NCHW"));

  Diagnosis flip = DiagnoseDefault(ref, Make(dt, {N, C, H, W}, [](const Index& i) { return RefValue({i[0], C - 1 - i[1], i[2], i[3]}); }));
  EXPECT_EQ(flip.map.type, IndexMap::Type::kFlip);
  EXPECT_EQ(flip.map.axis, 1);

  Diagnosis shift = DiagnoseDefault(ref, Make(dt, {N, C, H, W}, [](const Index& i) { return RefValue({i[0], i[1], i[2], (i[3] + W - 3) % W}); }));
  EXPECT_EQ(shift.map.type, IndexMap::Type::kShift);
  EXPECT_EQ(shift.map.shift, -2);  // a roll by +3 on a ring of 5 is the roll by -2

  Diagnosis scaled = DiagnoseDefault(ref, Make(dt, {N, C, H, W}, [](const Index& i) { return 2 * RefValue(i); }));
  EXPECT_EQ(scaled.kind, DiagnosisKind::kScaled);
  EXPECT_NEAR(scaled.scale, 2, 1e-12);

  // 2..4 added at random: more than any of these tolerances, no common offset.
  std::mt19937 rng(3);
  Tensor noisy = Make(dt, {N, C, H, W}, [&](const Index& i) { return RefValue(i) + 2 + static_cast<double>(rng() % 3); });
  EXPECT_EQ(DiagnoseDefault(ref, noisy).kind, DiagnosisKind::kNoise);
}

INSTANTIATE_TEST_SUITE_P(DiagnoseDtypes, DiagnoseEveryDtype,
                         ::testing::Values(DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
                                           DType::kUint8, DType::kInt32, DType::kInt64),
                         [](const ::testing::TestParamInfo<DType>& info) { return std::string(DTypeName(info.param)); });

}  // namespace
}  // namespace kiln::verify
