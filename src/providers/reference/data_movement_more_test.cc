// Tests of Pad, DepthToSpace, SpaceToDepth, ReverseSequence, Trilu and
// Compress. Expected values come from the spec's definitions: numpy.pad
// results written out by hand, the reshape-transpose-reshape formulation of
// DepthToSpace/SpaceToDepth done with a naive permutation below, and the
// index conditions of Trilu.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToFloats;
using testing::ToInts;

Tensor Iota(const Shape& s) {
  Tensor t = Tensor::Zeros(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}
std::vector<int64_t> Unravel(int64_t lin, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = lin % s[k];
    lin /= s[k];
  }
  return idx;
}
int64_t Ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t lin = 0;
  for (size_t k = 0; k < s.size(); ++k) lin = lin * s[k] + idx[k];
  return lin;
}
// numpy: data.reshape(shape).transpose(perm).ravel()
std::vector<float> ReshapeTranspose(const std::vector<float>& data, const Shape& shape, const std::vector<int64_t>& perm) {
  Shape os;
  for (int64_t p : perm) os.push_back(shape[static_cast<size_t>(p)]);
  std::vector<float> out(data.size());
  for (size_t lin = 0; lin < data.size(); ++lin) {
    auto o = Unravel(static_cast<int64_t>(lin), os);
    std::vector<int64_t> i(shape.size());
    for (size_t k = 0; k < perm.size(); ++k) i[static_cast<size_t>(perm[k])] = o[k];
    out[lin] = data[static_cast<size_t>(Ravel(i, shape))];
  }
  return out;
}

// ------------------------------------------------------------ Pad

Result<std::vector<Tensor>> Pad11(const Tensor& x, std::vector<int64_t> pads, const std::string& mode, Tensor value = Tensor()) {
  return RunNode("Pad", {x, I64({static_cast<int64_t>(pads.size())}, pads), value}, {ir::Attribute::String("mode", mode)}, 1, 13);
}

TEST(DataMovementPad, Modes1D) {
  Tensor x = F32({3}, {1, 2, 3});
  // np.pad([1,2,3], (2,2), mode)
  auto c = Pad11(x, {2, 2}, "constant", Tensor::Scalar(9.f));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_THAT(ToFloats((*c)[0]), ElementsAre(9, 9, 1, 2, 3, 9, 9));
  auto r = Pad11(x, {2, 2}, "reflect");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToFloats((*r)[0]), ElementsAre(3, 2, 1, 2, 3, 2, 1));
  auto e = Pad11(x, {2, 2}, "edge");
  ASSERT_TRUE(e.ok());
  EXPECT_THAT(ToFloats((*e)[0]), ElementsAre(1, 1, 1, 2, 3, 3, 3));
  // Pads wider than the axis reflect again: np.pad([1,2,3], (5,4), 'reflect').
  auto wide = Pad11(x, {5, 4}, "reflect");
  ASSERT_TRUE(wide.ok());
  EXPECT_THAT(ToFloats((*wide)[0]), ElementsAre(2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3));
  auto w = RunNode("Pad", {x, I64({2}, {2, 1})}, {ir::Attribute::String("mode", "wrap")}, 1, 19);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_THAT(ToFloats((*w)[0]), ElementsAre(2, 3, 1, 2, 3, 1));
}

TEST(DataMovementPad, TwoDimsNegativePadsCrop) {
  // 3x3 iota, pads begin [1,-1], end [-2, 1] with 0: rows -1..0, cols 1..3.
  auto out = Pad11(Iota({3, 3}), {1, -1, -2, 1}, "constant");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(0, 0, 0, 1, 2, 0));
  // Edge mode on 2-D: np.pad(iota(2,2), ((1,0),(0,1)), 'edge').
  auto e = Pad11(Iota({2, 2}), {1, 0, 0, 1}, "edge");
  ASSERT_TRUE(e.ok());
  EXPECT_THAT(ToFloats((*e)[0]), ElementsAre(0, 1, 1, 0, 1, 1, 2, 3, 3));
}

TEST(DataMovementPad, AttributeFormsAndAxesInput) {
  // Opset 2-10: pads and value are attributes.
  auto a = RunNode("Pad", {F32({2}, {1, 2})}, {ir::Attribute::Ints("pads", {1, 0}), ir::Attribute::Float("value", 5.f)}, 1, 2);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_THAT(ToFloats((*a)[0]), ElementsAre(5, 1, 2));
  // Opset 1 calls them paddings.
  auto p1 = RunNode("Pad", {F32({2}, {1, 2})}, {ir::Attribute::Ints("paddings", {0, 2})}, 1, 1);
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  EXPECT_THAT(ToFloats((*p1)[0]), ElementsAre(1, 2, 0, 0));
  // Opset 18: pads over the listed axes only.
  auto ax = RunNode("Pad", {Iota({2, 2}), I64({2}, {1, 0}), Tensor::Scalar(7.f), I64({1}, {-1})}, {}, 1, 18);
  ASSERT_TRUE(ax.ok()) << ax.status().ToString();
  EXPECT_EQ((*ax)[0].shape(), (Shape{2, 3}));
  EXPECT_THAT(ToFloats((*ax)[0]), ElementsAre(7, 0, 1, 7, 2, 3));
}

TEST(DataMovementPad, IntStringAndFloat16) {
  auto i = RunNode("Pad", {I64({2}, {4, 5}), I64({2}, {1, 1}), I64({}, {-3})}, {}, 1, 13);
  ASSERT_TRUE(i.ok()) << i.status().ToString();
  EXPECT_EQ(ToInts((*i)[0]), (std::vector<int64_t>{-3, 4, 5, -3}));
  Tensor s = Tensor::FromVector<std::string>(DType::kString, {2}, {"a", "b"});
  auto os = RunNode("Pad", {s, I64({2}, {0, 2})}, {ir::Attribute::String("mode", "edge")}, 1, 13);
  ASSERT_TRUE(os.ok()) << os.status().ToString();
  Tensor o = (*os)[0].Contiguous();
  EXPECT_EQ(o.data<std::string>()[3], "b");
  Tensor h = Tensor::FromVector<Float16>(DType::kFloat16, {1}, {Float16(2.5f)});
  auto oh = RunNode("Pad", {h, I64({2}, {1, 0})}, {ir::Attribute::String("mode", "reflect")}, 1, 13);
  ASSERT_TRUE(oh.ok()) << oh.status().ToString();
  EXPECT_THAT(ToFloats((*oh)[0]), ElementsAre(2.5f, 2.5f));
}

TEST(DataMovementPad, Errors) {
  auto len = Pad11(Iota({2, 2}), {1, 1}, "constant");
  ASSERT_FALSE(len.ok());
  EXPECT_THAT(len.status().message(), HasSubstr("node 'n0' (Pad)"));
  EXPECT_FALSE(Pad11(Iota({2}), {-2, -1}, "constant").ok());  // crops below zero
  EXPECT_FALSE(Pad11(Iota({2}), {1, 1}, "mirror").ok());
  EXPECT_FALSE(Pad11(Tensor::Zeros(DType::kFloat32, {0}), {1, 0}, "reflect").ok());
  EXPECT_FALSE(Pad11(Iota({2}), {1, 1}, "constant", I64({}, {1})).ok());  // value dtype
}

// ------------------------------------------------------------ DepthToSpace / SpaceToDepth

TEST(DataMovementDepthToSpace, DcrAndCrd) {
  const int64_t n = 1, c = 8, h = 2, w = 3, b = 2;
  Tensor x = Iota({n, c, h, w});
  const std::vector<float> data = ToFloats(x);
  auto dcr = RunNode("DepthToSpace", {x}, {ir::Attribute::Int("blocksize", b)}, 1, 13);
  ASSERT_TRUE(dcr.ok()) << dcr.status().ToString();
  EXPECT_EQ((*dcr)[0].shape(), (Shape{n, c / 4, h * b, w * b}));
  EXPECT_EQ(ToFloats((*dcr)[0]), ReshapeTranspose(data, {n, b, b, c / 4, h, w}, {0, 3, 4, 1, 5, 2}));
  auto crd = RunNode("DepthToSpace", {x}, {ir::Attribute::Int("blocksize", b), ir::Attribute::String("mode", "CRD")}, 1, 13);
  ASSERT_TRUE(crd.ok()) << crd.status().ToString();
  EXPECT_EQ(ToFloats((*crd)[0]), ReshapeTranspose(data, {n, c / 4, b, b, h, w}, {0, 1, 4, 2, 5, 3}));
  EXPECT_NE(ToFloats((*crd)[0]), ToFloats((*dcr)[0]));
}

TEST(DataMovementSpaceToDepth, Blocks) {
  const int64_t n = 2, c = 2, h = 4, w = 6, b = 2;
  Tensor x = Iota({n, c, h, w});
  auto out = RunNode("SpaceToDepth", {x}, {ir::Attribute::Int("blocksize", b)}, 1, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{n, c * b * b, h / b, w / b}));
  EXPECT_EQ(ToFloats((*out)[0]), ReshapeTranspose(ToFloats(x), {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}));
}

TEST(DataMovementDepthToSpace, Errors) {
  auto ch = RunNode("DepthToSpace", {Iota({1, 3, 2, 2})}, {ir::Attribute::Int("blocksize", 2)}, 1, 13);
  ASSERT_FALSE(ch.ok());
  EXPECT_THAT(ch.status().message(), HasSubstr("node 'n0' (DepthToSpace)"));
  EXPECT_FALSE(RunNode("DepthToSpace", {Iota({4, 2, 2})}, {ir::Attribute::Int("blocksize", 2)}, 1, 13).ok());
  EXPECT_FALSE(RunNode("DepthToSpace", {Iota({1, 4, 2, 2})}, {}, 1, 13).ok());
  EXPECT_FALSE(RunNode("SpaceToDepth", {Iota({1, 1, 3, 2})}, {ir::Attribute::Int("blocksize", 2)}, 1, 13).ok());
}

// ------------------------------------------------------------ ReverseSequence

TEST(DataMovementReverseSequence, TimeAndBatchAxes) {
  // Spec example 1: time_axis 0, batch_axis 1, lens [4,3,2,1] on a 4x4.
  Tensor x = Iota({4, 4});
  auto t = RunNode("ReverseSequence", {x, I64({4}, {4, 3, 2, 1})}, {ir::Attribute::Int("time_axis", 0), ir::Attribute::Int("batch_axis", 1)}, 1, 13);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_THAT(ToFloats((*t)[0]), ElementsAre(12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15));
  // Spec example 2: batch_axis 0, time_axis 1, lens [1,2,3,4].
  auto b = RunNode("ReverseSequence", {x, I64({4}, {1, 2, 3, 4})}, {ir::Attribute::Int("time_axis", 1), ir::Attribute::Int("batch_axis", 0)}, 1, 13);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_THAT(ToFloats((*b)[0]), ElementsAre(0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12));
}

TEST(DataMovementReverseSequence, Errors) {
  auto big = RunNode("ReverseSequence", {Iota({2, 2}), I64({2}, {3, 1})}, {}, 1, 13);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.status().message(), HasSubstr("node 'n0' (ReverseSequence)"));
  EXPECT_FALSE(RunNode("ReverseSequence", {Iota({2, 2}), I64({3}, {1, 1, 1})}, {}, 1, 13).ok());
  EXPECT_FALSE(RunNode("ReverseSequence", {Iota({2, 2}), I64({2}, {1, 1})}, {ir::Attribute::Int("time_axis", 1)}, 1, 13).ok());
}

// ------------------------------------------------------------ Trilu

TEST(DataMovementTrilu, UpperLowerK) {
  const Shape s{2, 3, 4};
  for (int upper : {0, 1}) {
    for (int64_t k : {-5, -1, 0, 2, 6}) {
      auto out = RunNode("Trilu", {Iota(s), I64({}, {k})}, {ir::Attribute::Int("upper", upper)}, 1, 14);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      auto v = ToFloats((*out)[0]);
      for (int64_t lin = 0; lin < 24; ++lin) {
        auto idx = Unravel(lin, s);
        const bool keep = upper ? idx[2] - idx[1] >= k : idx[2] - idx[1] <= k;
        EXPECT_EQ(v[static_cast<size_t>(lin)], keep ? static_cast<float>(lin) : 0.f) << upper << " " << k << " " << lin;
      }
    }
  }
  auto def = RunNode("Trilu", {F32({2, 2}, {1, 2, 3, 4})}, {}, 1, 14);
  ASSERT_TRUE(def.ok());
  EXPECT_THAT(ToFloats((*def)[0]), ElementsAre(1, 2, 0, 4));
}

TEST(DataMovementTrilu, Errors) {
  auto r1 = RunNode("Trilu", {Iota({3})}, {}, 1, 14);
  ASSERT_FALSE(r1.ok());
  EXPECT_THAT(r1.status().message(), HasSubstr("node 'n0' (Trilu)"));
  EXPECT_FALSE(RunNode("Trilu", {Iota({3, 3}), I64({2}, {1, 2})}, {}, 1, 14).ok());
}

// ------------------------------------------------------------ Compress

Tensor Bools(std::vector<bool> v) {
  Tensor t = Tensor::Zeros(DType::kBool, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}

TEST(DataMovementCompress, AxesAndFlattened) {
  Tensor x = Iota({3, 2});
  auto a0 = RunNode("Compress", {x, Bools({false, true, true})}, {ir::Attribute::Int("axis", 0)}, 1, 11);
  ASSERT_TRUE(a0.ok()) << a0.status().ToString();
  EXPECT_EQ((*a0)[0].shape(), (Shape{2, 2}));
  EXPECT_THAT(ToFloats((*a0)[0]), ElementsAre(2, 3, 4, 5));
  auto a1 = RunNode("Compress", {x, Bools({false, true})}, {ir::Attribute::Int("axis", -1)}, 1, 11);
  ASSERT_TRUE(a1.ok());
  EXPECT_THAT(ToFloats((*a1)[0]), ElementsAre(1, 3, 5));
  // A shorter condition ignores the rest; no axis flattens.
  auto flat = RunNode("Compress", {x, Bools({true, false, true})}, {}, 1, 11);
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ((*flat)[0].shape(), (Shape{2}));
  EXPECT_THAT(ToFloats((*flat)[0]), ElementsAre(0, 2));
  auto none = RunNode("Compress", {x, Bools({false})}, {ir::Attribute::Int("axis", 1)}, 1, 11);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)[0].shape(), (Shape{3, 0}));
}

TEST(DataMovementCompress, Errors) {
  auto past = RunNode("Compress", {Iota({2}), Bools({false, false, true})}, {}, 1, 11);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past.status().message(), HasSubstr("node 'n0' (Compress)"));
  EXPECT_FALSE(RunNode("Compress", {Iota({2}), I64({2}, {1, 0})}, {}, 1, 11).ok());
  EXPECT_FALSE(RunNode("Compress", {Iota({2}), Bools({true})}, {ir::Attribute::Int("axis", 1)}, 1, 11).ok());
}

}  // namespace
}  // namespace kiln
