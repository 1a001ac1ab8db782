// Tests of the Sequence and Optional reference kernels. Expected values are
// worked out by hand from the ONNX spec.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::F32;
using testing::I64;
using testing::RunNodeDatums;
using testing::ToFloats;

Datum Seq(std::vector<Tensor> items) { return Datum::Sequence(std::move(items)); }
Datum Seq3() { return Seq({F32({1}, {1}), F32({2}, {2, 3}), F32({3}, {4, 5, 6})}); }

TEST(Sequence, ConstructKeepsOrder) {
  auto r = RunNodeDatums("SequenceConstruct", {F32({2}, {1, 2}), F32({1}, {3})}, {}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE((*r)[0].is_sequence());
  ASSERT_EQ((*r)[0].sequence().size(), 2u);
  EXPECT_THAT(ToFloats((*r)[0].sequence()[0]), ElementsAre(1, 2));
  EXPECT_THAT(ToFloats((*r)[0].sequence()[1]), ElementsAre(3));
}

TEST(Sequence, ConstructRejectsMixedDTypes) {
  auto r = RunNodeDatums("SequenceConstruct", {F32({1}, {1}), I64({1}, {1})}, {}, 1, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("node 'n0'"));
}

TEST(Sequence, EmptyHasDTypeAttr) {
  auto r = RunNodeDatums("SequenceEmpty", {}, {ir::Attribute::Int("dtype", 7)}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE((*r)[0].is_sequence());
  EXPECT_TRUE((*r)[0].sequence().empty());
  EXPECT_EQ((*r)[0].sequence_dtype(), DType::kInt64);
  auto d = RunNodeDatums("SequenceEmpty", {}, {}, 1, 11);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)[0].sequence_dtype(), DType::kFloat32);  // spec default
}

TEST(Sequence, LengthCountsItems) {
  auto r = RunNodeDatums("SequenceLength", {Seq3()}, {}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].tensor().dtype(), DType::kInt64);
  EXPECT_EQ((*r)[0].tensor().rank(), 0);
  EXPECT_EQ((*r)[0].tensor().GetAsDouble(0), 3);
}

TEST(Sequence, AtPositiveAndNegative) {
  auto r = RunNodeDatums("SequenceAt", {Seq3(), I64({}, {1})}, {}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToFloats((*r)[0].tensor()), ElementsAre(2, 3));
  auto n = RunNodeDatums("SequenceAt", {Seq3(), I64({}, {-1})}, {}, 1, 11);
  ASSERT_TRUE(n.ok());
  EXPECT_THAT(ToFloats((*n)[0].tensor()), ElementsAre(4, 5, 6));
}

TEST(Sequence, AtOutOfRangeFails) {
  for (int64_t p : {3, -4}) {
    auto r = RunNodeDatums("SequenceAt", {Seq3(), I64({}, {p})}, {}, 1, 11);
    ASSERT_FALSE(r.ok()) << p;
    EXPECT_THAT(r.status().message(), HasSubstr("node 'n0'"));
    EXPECT_THAT(r.status().message(), HasSubstr("out of range"));
  }
}

TEST(Sequence, InsertAtEndFrontAndNegative) {
  auto end = RunNodeDatums("SequenceInsert", {Seq3(), F32({1}, {9})}, {}, 1, 11);
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  ASSERT_EQ((*end)[0].sequence().size(), 4u);
  EXPECT_THAT(ToFloats((*end)[0].sequence()[3]), ElementsAre(9));
  auto front = RunNodeDatums("SequenceInsert", {Seq3(), F32({1}, {9}), I64({}, {0})}, {}, 1, 11);
  ASSERT_TRUE(front.ok());
  EXPECT_THAT(ToFloats((*front)[0].sequence()[0]), ElementsAre(9));
  EXPECT_THAT(ToFloats((*front)[0].sequence()[1]), ElementsAre(1));
  // -1 inserts before the last item.
  auto neg = RunNodeDatums("SequenceInsert", {Seq3(), F32({1}, {9}), I64({}, {-1})}, {}, 1, 11);
  ASSERT_TRUE(neg.ok());
  EXPECT_THAT(ToFloats((*neg)[0].sequence()[2]), ElementsAre(9));
  EXPECT_THAT(ToFloats((*neg)[0].sequence()[3]), ElementsAre(4, 5, 6));
  // position == length is the end.
  auto at3 = RunNodeDatums("SequenceInsert", {Seq3(), F32({1}, {9}), I64({}, {3})}, {}, 1, 11);
  ASSERT_TRUE(at3.ok());
  EXPECT_THAT(ToFloats((*at3)[0].sequence()[3]), ElementsAre(9));
}

TEST(Sequence, InsertIntoEmptyAndErrors) {
  auto e = RunNodeDatums("SequenceInsert", {Datum::Sequence({}, DType::kFloat32), F32({2}, {1, 2})}, {}, 1, 11);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)[0].sequence().size(), 1u);
  auto bad = RunNodeDatums("SequenceInsert", {Seq3(), I64({1}, {1})}, {}, 1, 11);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("node 'n0'"));
  auto pos = RunNodeDatums("SequenceInsert", {Seq3(), F32({1}, {9}), I64({}, {5})}, {}, 1, 11);
  ASSERT_FALSE(pos.ok());
  EXPECT_THAT(pos.status().message(), HasSubstr("out of range"));
}

TEST(Sequence, EraseDefaultAndPosition) {
  auto last = RunNodeDatums("SequenceErase", {Seq3()}, {}, 1, 11);
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  ASSERT_EQ((*last)[0].sequence().size(), 2u);
  EXPECT_THAT(ToFloats((*last)[0].sequence()[1]), ElementsAre(2, 3));
  auto first = RunNodeDatums("SequenceErase", {Seq3(), I64({}, {-3})}, {}, 1, 11);
  ASSERT_TRUE(first.ok());
  EXPECT_THAT(ToFloats((*first)[0].sequence()[0]), ElementsAre(2, 3));
  auto empty = RunNodeDatums("SequenceErase", {Datum::Sequence({}, DType::kFloat32)}, {}, 1, 11);
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("node 'n0'"));
}

// x = [[0,1,2],[3,4,5]]
Tensor X23() { return F32({2, 3}, {0, 1, 2, 3, 4, 5}); }

TEST(SplitToSequence, NoSplitKeepdims) {
  auto r = RunNodeDatums("SplitToSequence", {X23()}, {ir::Attribute::Int("axis", 1)}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& s = (*r)[0].sequence();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[1].shape(), (Shape{2, 1}));
  EXPECT_THAT(ToFloats(s[1]), ElementsAre(1, 4));
  auto k0 = RunNodeDatums("SplitToSequence", {X23()}, {ir::Attribute::Int("axis", 1), ir::Attribute::Int("keepdims", 0)}, 1, 11);
  ASSERT_TRUE(k0.ok());
  EXPECT_EQ((*k0)[0].sequence()[2].shape(), (Shape{2}));
  EXPECT_THAT(ToFloats((*k0)[0].sequence()[2]), ElementsAre(2, 5));
}

TEST(SplitToSequence, ScalarSplitLeavesShortLastChunk) {
  auto r = RunNodeDatums("SplitToSequence", {X23(), I64({}, {2})}, {ir::Attribute::Int("axis", -1)}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& s = (*r)[0].sequence();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_THAT(ToFloats(s[0]), ElementsAre(0, 1, 3, 4));
  EXPECT_EQ(s[1].shape(), (Shape{2, 1}));
  EXPECT_THAT(ToFloats(s[1]), ElementsAre(2, 5));
}

TEST(SplitToSequence, ListSplit) {
  auto r = RunNodeDatums("SplitToSequence", {X23(), I64({2}, {1, 2})}, {ir::Attribute::Int("axis", 1)}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& s = (*r)[0].sequence();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_THAT(ToFloats(s[0]), ElementsAre(0, 3));
  EXPECT_THAT(ToFloats(s[1]), ElementsAre(1, 2, 4, 5));
  auto bad = RunNodeDatums("SplitToSequence", {X23(), I64({2}, {1, 1})}, {ir::Attribute::Int("axis", 1)}, 1, 11);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("node 'n0'"));
  auto axis = RunNodeDatums("SplitToSequence", {X23()}, {ir::Attribute::Int("axis", 2)}, 1, 11);
  ASSERT_FALSE(axis.ok());
}

TEST(ConcatFromSequence, ExistingAxis) {
  Datum s = Seq({F32({1, 2}, {1, 2}), F32({2, 2}, {3, 4, 5, 6})});
  auto r = RunNodeDatums("ConcatFromSequence", {s}, {ir::Attribute::Int("axis", 0)}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 2}));
  EXPECT_THAT(ToFloats((*r)[0].tensor()), ElementsAre(1, 2, 3, 4, 5, 6));
  Datum t = Seq({F32({2, 1}, {1, 2}), F32({2, 2}, {3, 4, 5, 6})});
  auto c1 = RunNodeDatums("ConcatFromSequence", {t}, {ir::Attribute::Int("axis", -1)}, 1, 11);
  ASSERT_TRUE(c1.ok()) << c1.status().ToString();
  EXPECT_EQ((*c1)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_THAT(ToFloats((*c1)[0].tensor()), ElementsAre(1, 3, 4, 2, 5, 6));
}

TEST(ConcatFromSequence, NewAxis) {
  Datum s = Seq({F32({2}, {1, 2}), F32({2}, {3, 4})});
  auto r = RunNodeDatums("ConcatFromSequence", {s}, {ir::Attribute::Int("axis", 1), ir::Attribute::Int("new_axis", 1)}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_THAT(ToFloats((*r)[0].tensor()), ElementsAre(1, 3, 2, 4));
  // new_axis accepts axis == rank (and -rank-1).
  auto neg = RunNodeDatums("ConcatFromSequence", {s}, {ir::Attribute::Int("axis", -2), ir::Attribute::Int("new_axis", 1)}, 1, 11);
  ASSERT_TRUE(neg.ok()) << neg.status().ToString();
  EXPECT_THAT(ToFloats((*neg)[0].tensor()), ElementsAre(1, 2, 3, 4));
}

TEST(ConcatFromSequence, Errors) {
  Datum s = Seq({F32({1, 2}, {1, 2}), F32({1, 3}, {3, 4, 5})});
  auto r = RunNodeDatums("ConcatFromSequence", {s}, {ir::Attribute::Int("axis", 0)}, 1, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("node 'n0'"));
  auto noaxis = RunNodeDatums("ConcatFromSequence", {s}, {}, 1, 11);
  ASSERT_FALSE(noaxis.ok());
  EXPECT_THAT(noaxis.status().message(), HasSubstr("axis"));
}

TEST(Optional, WrapsInputOrIsEmpty) {
  auto r = RunNodeDatums("Optional", {F32({2}, {1, 2})}, {}, 1, 15);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToFloats((*r)[0].tensor()), ElementsAre(1, 2));
  ir::Attribute tp;
  tp.name = "type";
  tp.type = ir::Attribute::Type::kTypeProto;
  tp.tp = ir::TypeInfo::Tensor(DType::kFloat32);
  auto e = RunNodeDatums("Optional", {}, {tp}, 1, 15);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE((*e)[0].is_none());
  auto bad = RunNodeDatums("Optional", {}, {}, 1, 15);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("node 'n0'"));
}

TEST(Optional, HasElement) {
  auto t = RunNodeDatums("OptionalHasElement", {F32({1}, {1})}, {}, 1, 15);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)[0].tensor().dtype(), DType::kBool);
  EXPECT_EQ((*t)[0].tensor().GetAsDouble(0), 1);
  auto s = RunNodeDatums("OptionalHasElement", {Seq3()}, {}, 1, 15);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].tensor().GetAsDouble(0), 1);
  auto n = RunNodeDatums("OptionalHasElement", {Datum::None()}, {}, 1, 15);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ((*n)[0].tensor().GetAsDouble(0), 0);
  // Opset 18: the input itself may be omitted (false); opset 15 requires it.
  auto absent = RunNodeDatums("OptionalHasElement", {Datum()}, {}, 1, 18);
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_EQ((*absent)[0].tensor().GetAsDouble(0), 0);
  auto absent15 = RunNodeDatums("OptionalHasElement", {Datum()}, {}, 1, 15);
  ASSERT_FALSE(absent15.ok());
}

TEST(Optional, GetElement) {
  auto t = RunNodeDatums("OptionalGetElement", {F32({2}, {3, 4})}, {}, 1, 18);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_THAT(ToFloats((*t)[0].tensor()), ElementsAre(3, 4));
  auto s = RunNodeDatums("OptionalGetElement", {Seq3()}, {}, 1, 15);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].sequence().size(), 3u);
  auto n = RunNodeDatums("OptionalGetElement", {Datum::None()}, {}, 1, 15);
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.status().message(), HasSubstr("node 'n0'"));
  EXPECT_THAT(n.status().message(), HasSubstr("no value"));
}

}  // namespace
}  // namespace kiln
