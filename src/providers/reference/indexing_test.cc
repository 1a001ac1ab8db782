// Tests of the indexing ops: Gather, GatherElements, GatherND, Scatter,
// ScatterElements, ScatterND, OneHot, NonZero, Unique. Expected values are
// worked by hand from the ONNX spec's definitions (most are the spec's own
// examples); each comment shows the index arithmetic.
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
using testing::I64;
using testing::RunNode;
using testing::ToFloats;
using testing::ToInts;

Tensor I32(const Shape& s, const std::vector<int32_t>& v) { return Tensor::FromVector<int32_t>(DType::kInt32, s, v); }

// Runs a one-output node and returns its tensor (undefined on failure).
Tensor Run1(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, int64_t opset = 18) {
  auto out = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return Tensor();
  return (*out)[0];
}

// The error of a run that must fail; it must name the node and its op.
std::string RunError(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs,
                     int64_t opset = 18, size_t outputs = 1) {
  auto out = RunNode(op, in, attrs, outputs, opset);
  EXPECT_FALSE(out.ok()) << op << " unexpectedly succeeded";
  if (out.ok()) return "";
  const std::string msg = out.status().ToString();
  EXPECT_THAT(msg, HasSubstr("'n0'"));
  EXPECT_THAT(msg, HasSubstr(op));
  return msg;
}

Attribute Axis(int64_t a) { return Attribute::Int("axis", a); }

// ---------------------------------------------------------------- Gather

// Spec example 1: data [[1.0,1.2],[2.3,3.4],[4.5,5.7]], indices [[0,1],[1,2]],
// axis 0: out[i][j] = data[indices[i][j]], shape [2,2] + [2] = [2,2,2].
TEST(Gather, Axis0SpecExample) {
  Tensor out = Run1("Gather", {F32({3, 2}, {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}), I64({2, 2}, {0, 1, 1, 2})}, {});
  EXPECT_EQ(out.shape(), (Shape{2, 2, 2}));
  EXPECT_THAT(ToFloats(out), ElementsAre(1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f));
}

// Spec example 2: data 3x3, indices [[0, 2]], axis 1: out[i][0][j] =
// data[i][indices[0][j]], shape [3] + [1,2] = [3,1,2]. axis -1 is axis 1.
TEST(Gather, Axis1AndNegativeAxis) {
  Tensor data = F32({3, 3}, {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f});
  for (int64_t axis : {1, -1}) {
    Tensor out = Run1("Gather", {data, I64({1, 2}, {0, 2})}, {Axis(axis)});
    EXPECT_EQ(out.shape(), (Shape{3, 1, 2})) << "axis " << axis;
    EXPECT_THAT(ToFloats(out), ElementsAre(1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f)) << "axis " << axis;
  }
  // axis -2 on rank 2 is axis 0: rows 2 and 0.
  Tensor out = Run1("Gather", {data, I64({2}, {2, 0})}, {Axis(-2)});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(ToFloats(out), ElementsAre(4.5f, 5.7f, 5.9f, 1.0f, 1.2f, 1.9f));
}

// Negative indices count from the end of the axis: -1 -> 4, -5 -> 0.
TEST(Gather, NegativeIndices) {
  Tensor out = Run1("Gather", {F32({5}, {10, 20, 30, 40, 50}), I64({3}, {-1, -5, 2})}, {});
  EXPECT_THAT(ToFloats(out), ElementsAre(50, 10, 30));
  // int32 indices, the other allowed index type.
  Tensor out32 = Run1("Gather", {F32({5}, {10, 20, 30, 40, 50}), I32({2}, {-2, 1})}, {});
  EXPECT_THAT(ToFloats(out32), ElementsAre(40, 20));
}

// A scalar index removes the axis: rank r + 0 - 1.
TEST(Gather, ScalarIndexDropsRank) {
  Tensor data = F32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor row = Run1("Gather", {data, I64({}, {1})}, {});
  EXPECT_EQ(row.shape(), (Shape{2}));
  EXPECT_THAT(ToFloats(row), ElementsAre(3, 4));
  Tensor col = Run1("Gather", {data, I64({}, {-1})}, {Axis(1)});
  EXPECT_EQ(col.shape(), (Shape{3}));
  EXPECT_THAT(ToFloats(col), ElementsAre(2, 4, 6));
}

// Rank 3, axis 1 with 2-D indices [[2, 0]]: out[o][0][j][k] =
// data[o][indices[0][j]][k], shape [2] + [1,2] + [2]; data = 0..11:
// o=0: data[0][2] = [4,5], data[0][0] = [0,1]; o=1: [10,11], [6,7].
TEST(Gather, MiddleAxisOfRank3) {
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  Tensor out = Run1("Gather", {F32({2, 3, 2}, v), I64({1, 2}, {2, 0})}, {Axis(1)});
  EXPECT_EQ(out.shape(), (Shape{2, 1, 2, 2}));
  EXPECT_THAT(ToFloats(out), ElementsAre(4, 5, 0, 1, 10, 11, 6, 7));
}

// Gather copies any dtype: int64 and string data.
TEST(Gather, IntAndStringData) {
  Tensor out = Run1("Gather", {I64({2, 2}, {7, 8, 9, 10}), I64({1}, {1})}, {Axis(1)});
  EXPECT_EQ(out.dtype(), DType::kInt64);
  EXPECT_THAT(ToInts(out), ElementsAre(8, 10));
  Tensor s = Run1("Gather", {Tensor::FromVector<std::string>(DType::kString, {3}, {"a", "b", "c"}), I64({2}, {2, 0})}, {});
  ASSERT_EQ(s.dtype(), DType::kString);
  EXPECT_EQ(s.data<std::string>()[0], "c");
  EXPECT_EQ(s.data<std::string>()[1], "a");
}

// Valid indices are [-3, 2] on an axis of 3.
TEST(Gather, OutOfRangeIndexIsAnErrorNamingTheNode) {
  Tensor data = F32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(RunError("Gather", {data, I64({2}, {0, 3})}, {}), HasSubstr("out of range"));
  EXPECT_THAT(RunError("Gather", {data, I64({1}, {-4})}, {}), HasSubstr("out of range"));
  EXPECT_THAT(RunError("Gather", {data, I64({1}, {2})}, {Axis(1)}), HasSubstr("out of range"));
}

// ---------------------------------------------------------- GatherElements

// Spec example 1: axis 1, out[i][j] = data[i][indices[i][j]]:
// [[d00, d00], [d11, d10]] = [[1, 1], [4, 3]].
TEST(GatherElements, Axis1SpecExample) {
  Tensor out = Run1("GatherElements", {F32({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 0, 1, 0})}, {Axis(1)});
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_THAT(ToFloats(out), ElementsAre(1, 1, 4, 3));
}

// Spec example 2: axis 0 (default), out[i][j] = data[indices[i][j]][j]:
// [[d10, d21, d02], [d20, d01, d02]] = [[4, 8, 3], [7, 2, 3]].
TEST(GatherElements, Axis0SpecExample) {
  Tensor out = Run1("GatherElements", {F32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), I64({2, 3}, {1, 2, 0, 2, 0, 0})}, {});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(ToFloats(out), ElementsAre(4, 8, 3, 7, 2, 3));
}

// Negative axis and negative indices: axis -1 = 1; -1 -> 1, -2 -> 0:
// [[d01, d00], [d10, d11]] = [[2, 1], [3, 4]].
TEST(GatherElements, NegativeAxisAndIndices) {
  Tensor out = Run1("GatherElements", {F32({2, 2}, {1, 2, 3, 4}), I32({2, 2}, {-1, 0, -2, -1})}, {Axis(-1)});
  EXPECT_THAT(ToFloats(out), ElementsAre(2, 1, 3, 4));
}

// indices may be smaller than data on the other axes: indices [[2, 0]]
// (shape [1,2]) on 3x3 data, axis 0: [d20, d01] = [7, 2].
TEST(GatherElements, IndicesSmallerThanData) {
  Tensor out = Run1("GatherElements", {F32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), I64({1, 2}, {2, 0})}, {});
  EXPECT_EQ(out.shape(), (Shape{1, 2}));
  EXPECT_THAT(ToFloats(out), ElementsAre(7, 2));
}

TEST(GatherElements, OutOfRangeIndexIsAnErrorNamingTheNode) {
  EXPECT_THAT(RunError("GatherElements", {F32({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 2, 0, 0})}, {Axis(1)}),
              HasSubstr("out of range"));
  EXPECT_THAT(RunError("GatherElements", {F32({2, 2}, {1, 2, 3, 4}), I64({1, 1}, {-3})}, {}), HasSubstr("out of range"));
}

// ---------------------------------------------------------------- GatherND

// Spec examples 1-4, batch_dims 0.
TEST(GatherND, SpecExamplesBatchDims0) {
  // 1: data [[0,1],[2,3]], indices [[0,0],[1,1]] -> [d00, d11] = [0, 3].
  Tensor e1 = Run1("GatherND", {I64({2, 2}, {0, 1, 2, 3}), I64({2, 2}, {0, 0, 1, 1})}, {});
  EXPECT_EQ(e1.shape(), (Shape{2}));
  EXPECT_THAT(ToInts(e1), ElementsAre(0, 3));
  // 2: indices [[1],[0]] take rows: [[2,3],[0,1]].
  Tensor e2 = Run1("GatherND", {I64({2, 2}, {0, 1, 2, 3}), I64({2, 1}, {1, 0})}, {});
  EXPECT_EQ(e2.shape(), (Shape{2, 2}));
  EXPECT_THAT(ToInts(e2), ElementsAre(2, 3, 0, 1));
  // 3: data [[[0,1],[2,3]],[[4,5],[6,7]]], indices [[0,1],[1,0]] -> [d[0][1], d[1][0]] = [[2,3],[4,5]].
  Tensor data3 = I64({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor e3 = Run1("GatherND", {data3, I64({2, 2}, {0, 1, 1, 0})}, {});
  EXPECT_EQ(e3.shape(), (Shape{2, 2}));
  EXPECT_THAT(ToInts(e3), ElementsAre(2, 3, 4, 5));
  // 4: indices [[[0,1]],[[1,0]]] (shape [2,1,2]) -> shape [2,1,2] = [[[2,3]],[[4,5]]].
  Tensor e4 = Run1("GatherND", {data3, I64({2, 1, 2}, {0, 1, 1, 0})}, {});
  EXPECT_EQ(e4.shape(), (Shape{2, 1, 2}));
  EXPECT_THAT(ToInts(e4), ElementsAre(2, 3, 4, 5));
  // Negative components: [-1, -2] = [1, 0] -> d[1][0] = [4, 5].
  Tensor neg = Run1("GatherND", {data3, I64({1, 2}, {-1, -2})}, {});
  EXPECT_THAT(ToInts(neg), ElementsAre(4, 5));
}

// batch_dims 1: out[b, ...] = GatherND(data[b], indices[b]).
TEST(GatherND, BatchDims) {
  Tensor data = I64({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  // Spec example 5: indices [[1],[0]] -> [data[0][1], data[1][0]] = [[2,3],[4,5]].
  Tensor e5 = Run1("GatherND", {data, I64({2, 1}, {1, 0})}, {Attribute::Int("batch_dims", 1)});
  EXPECT_EQ(e5.shape(), (Shape{2, 2}));
  EXPECT_THAT(ToInts(e5), ElementsAre(2, 3, 4, 5));
  // Tuples of 2 per batch: [data[0][0][1], data[1][1][0]] = [1, 6], shape [2].
  Tensor full = Run1("GatherND", {data, I64({2, 2}, {0, 1, 1, 0})}, {Attribute::Int("batch_dims", 1)});
  EXPECT_EQ(full.shape(), (Shape{2}));
  EXPECT_THAT(ToInts(full), ElementsAre(1, 6));
  // batch_dims 2: out[i][j] = data[i][j][indices[i][j][0]], indices
  // [[[1],[0]],[[0],[1]]] -> [[d001, d010], [d100, d111]] = [[1, 2], [4, 7]].
  Tensor b2 = Run1("GatherND", {data, I64({2, 2, 1}, {1, 0, 0, 1})}, {Attribute::Int("batch_dims", 2)});
  EXPECT_EQ(b2.shape(), (Shape{2, 2}));
  EXPECT_THAT(ToInts(b2), ElementsAre(1, 2, 4, 7));
}

TEST(GatherND, OutOfRangeIndexIsAnErrorNamingTheNode) {
  Tensor data = I64({2, 2}, {0, 1, 2, 3});
  EXPECT_THAT(RunError("GatherND", {data, I64({1, 2}, {0, 2})}, {}), HasSubstr("out of range"));
  EXPECT_THAT(RunError("GatherND", {data, I64({1, 1}, {-3})}, {}), HasSubstr("out of range"));
  // With batch_dims 1 the tuple indexes axis 1 (size 2): 2 is out of range.
  EXPECT_THAT(RunError("GatherND", {data, I64({2, 1}, {0, 2})}, {Attribute::Int("batch_dims", 1)}), HasSubstr("out of range"));
}

// ---------------------------------------------------------------- Scatter

// Scatter-9 spec example (axis 0): out[indices[i][j]][j] = updates[i][j]:
// (1,0)=1.0 (0,1)=1.1 (2,2)=1.2 (0,0)=2.0 (2,1)=2.1 (1,2)=2.2.
TEST(Scatter, Opset9SpecExample) {
  Tensor out = Run1("Scatter",
                    {F32({3, 3}, std::vector<float>(9, 0.0f)), I64({2, 3}, {1, 0, 2, 0, 2, 1}),
                     F32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f})},
                    {}, 9);
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_THAT(ToFloats(out), ElementsAre(2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f));
}

// Axis 1 (spec example 2): out[0][1] = 1.1, out[0][3] = 2.1.
TEST(Scatter, Axis1Opset10) {
  Tensor out = Run1("Scatter", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 3}), F32({1, 2}, {1.1f, 2.1f})}, {Axis(1)}, 10);
  EXPECT_THAT(ToFloats(out), ElementsAre(1.0f, 1.1f, 3.0f, 2.1f, 5.0f));
}

TEST(Scatter, OutOfRangeIndexIsAnErrorNamingTheNode) {
  EXPECT_THAT(RunError("Scatter", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 5}), F32({1, 2}, {1.1f, 2.1f})}, {Axis(1)}, 10),
              HasSubstr("out of range"));
}

TEST(Scatter, HasNoReduction) {
  RunError("Scatter", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 3}), F32({1, 2}, {1.1f, 2.1f})},
           {Axis(1), Attribute::String("reduction", "add")}, 10);
}

// --------------------------------------------------------- ScatterElements

// Spec examples: axis 0 as Scatter; axis 1 with [[1, 3]] writes out[0][1], out[0][3].
TEST(ScatterElements, AxisSpecExamples) {
  Tensor a0 = Run1("ScatterElements",
                   {F32({3, 3}, std::vector<float>(9, 0.0f)), I64({2, 3}, {1, 0, 2, 0, 2, 1}),
                    F32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f})},
                   {}, 11);
  EXPECT_THAT(ToFloats(a0), ElementsAre(2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f));
  Tensor a1 = Run1("ScatterElements", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 3}), F32({1, 2}, {1.1f, 2.1f})}, {Axis(1)}, 13);
  EXPECT_THAT(ToFloats(a1), ElementsAre(1.0f, 1.1f, 3.0f, 2.1f, 5.0f));
  // axis -1 = 1 on rank 2; negative index -3 -> 2 (spec example with negative indices).
  Tensor neg = Run1("ScatterElements", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, -3}), F32({1, 2}, {1.1f, 2.1f})},
                    {Axis(-1)}, 13);
  EXPECT_THAT(ToFloats(neg), ElementsAre(1.0f, 1.1f, 2.1f, 4.0f, 5.0f));
}

// Reductions (opset 16: add/mul, 18: max/min) with both updates on out[0][1] = 2:
// none keeps the data elsewhere; add 2+1.1+2.1 = 5.2; mul 2*1.1*2.1 = 4.62;
// max(2, 1.1, 2.1) = 2.1; min(2, 1.1, 2.1) = 1.1.
TEST(ScatterElements, Reductions) {
  auto run = [](const std::string& red) {
    return ToFloats(Run1("ScatterElements", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 1}), F32({1, 2}, {1.1f, 2.1f})},
                         {Axis(1), Attribute::String("reduction", red)}, 18));
  };
  EXPECT_THAT(run("add"), ElementsAre(1.0f, FloatNear(5.2f, 1e-6f), 3.0f, 4.0f, 5.0f));
  EXPECT_THAT(run("mul"), ElementsAre(1.0f, FloatNear(4.62f, 1e-6f), 3.0f, 4.0f, 5.0f));
  EXPECT_THAT(run("max"), ElementsAre(1.0f, 2.1f, 3.0f, 4.0f, 5.0f));
  EXPECT_THAT(run("min"), ElementsAre(1.0f, 1.1f, 3.0f, 4.0f, 5.0f));
  // "none" with distinct indices: plain writes at 1 and 3.
  Tensor none = Run1("ScatterElements", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 3}), F32({1, 2}, {1.1f, 2.1f})},
                     {Axis(1), Attribute::String("reduction", "none")}, 18);
  EXPECT_THAT(ToFloats(none), ElementsAre(1.0f, 1.1f, 3.0f, 2.1f, 5.0f));
  // add on axis 0 of int64: column j gets updates[i][j] for each i with
  // indices[i][j]: out[0][0] = 1+10+20 = 31, out[1][1] = 4+30 = 34.
  Tensor ints = Run1("ScatterElements", {I64({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 1, 0, 1}), I64({2, 2}, {10, 30, 20, 0})},
                     {Attribute::String("reduction", "add")}, 16);
  EXPECT_THAT(ToInts(ints), ElementsAre(31, 2, 3, 34));
}

TEST(ScatterElements, OutOfRangeIndexAndBadReductionAreErrors) {
  EXPECT_THAT(RunError("ScatterElements", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, 5}), F32({1, 2}, {1, 2})}, {Axis(1)}, 13),
              HasSubstr("out of range"));
  EXPECT_THAT(RunError("ScatterElements", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 1}, {-6}), F32({1, 1}, {1})}, {Axis(1)}, 13),
              HasSubstr("out of range"));
  RunError("ScatterElements", {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 1}, {0}), F32({1, 1}, {1})},
           {Axis(1), Attribute::String("reduction", "sum")}, 18);
}

// ---------------------------------------------------------------- ScatterND

// Spec example 1: data [1..8], indices [[4],[3],[1],[7]], updates
// [9,10,11,12] -> [1, 11, 3, 10, 9, 6, 7, 12].
TEST(ScatterND, ElementUpdatesSpecExample) {
  Tensor out = Run1("ScatterND", {F32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), I64({4, 1}, {4, 3, 1, 7}), F32({4}, {9, 10, 11, 12})}, {}, 11);
  EXPECT_THAT(ToFloats(out), ElementsAre(1, 11, 3, 10, 9, 6, 7, 12));
}

// Slices: indices [[1]] on 2x2 replace row 1; full tuples [[0,1],[1,0]]
// write single elements; a negative component [-1] is the last row.
TEST(ScatterND, SlicesAndFullTuples) {
  Tensor data = F32({2, 2}, {1, 2, 3, 4});
  EXPECT_THAT(ToFloats(Run1("ScatterND", {data, I64({1, 1}, {1}), F32({1, 2}, {9, 8})}, {}, 13)), ElementsAre(1, 2, 9, 8));
  EXPECT_THAT(ToFloats(Run1("ScatterND", {data, I64({2, 2}, {0, 1, 1, 0}), F32({2}, {5, 6})}, {}, 13)), ElementsAre(1, 5, 6, 4));
  EXPECT_THAT(ToFloats(Run1("ScatterND", {data, I64({1, 1}, {-1}), F32({1, 2}, {7, 7})}, {}, 13)), ElementsAre(1, 2, 7, 7));
}

// Duplicate index [0] twice on data [1, 2, 3] with updates [5, 6]:
// add 1+5+6 = 12, mul 1*5*6 = 30; on index [1] (data 2) with updates [5, 0]:
// max(2,5,0) = 5, min(2,5,0) = 0.
TEST(ScatterND, Reductions) {
  auto run = [](const std::string& red, int64_t at, std::vector<float> upd) {
    return ToFloats(Run1("ScatterND", {F32({3}, {1, 2, 3}), I64({2, 1}, {at, at}), F32({2}, upd)},
                         {Attribute::String("reduction", red)}, 18));
  };
  EXPECT_THAT(run("add", 0, {5, 6}), ElementsAre(12, 2, 3));
  EXPECT_THAT(run("mul", 0, {5, 6}), ElementsAre(30, 2, 3));
  EXPECT_THAT(run("max", 1, {5, 0}), ElementsAre(1, 5, 3));
  EXPECT_THAT(run("min", 1, {5, 0}), ElementsAre(1, 0, 3));
  // Slice reduction: row 0 of [[1,2],[3,4]] += [10,20] twice -> [21, 42].
  Tensor rows = Run1("ScatterND", {F32({2, 2}, {1, 2, 3, 4}), I64({2, 1}, {0, 0}), F32({2, 2}, {10, 20, 10, 20})},
                     {Attribute::String("reduction", "add")}, 16);
  EXPECT_THAT(ToFloats(rows), ElementsAre(21, 42, 3, 4));
}

TEST(ScatterND, OutOfRangeIndexIsAnErrorNamingTheNode) {
  EXPECT_THAT(RunError("ScatterND", {F32({3}, {1, 2, 3}), I64({1, 1}, {3}), F32({1}, {9})}, {}, 13), HasSubstr("out of range"));
  EXPECT_THAT(RunError("ScatterND", {F32({2, 2}, {1, 2, 3, 4}), I64({1, 2}, {0, -3}), F32({1}, {9})}, {}, 13),
              HasSubstr("out of range"));
}

// ---------------------------------------------------------------- OneHot

// indices [1, 2, 0], depth 3, values [off=0, on=1]; default axis -1
// appends the depth axis: row i has its 1 at column indices[i].
TEST(OneHot, DefaultAxisAppendsDepth) {
  Tensor out = Run1("OneHot", {I64({3}, {1, 2, 0}), I64({}, {3}), F32({2}, {0, 1})}, {}, 11);
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  EXPECT_THAT(ToFloats(out), ElementsAre(0, 1, 0, 0, 0, 1, 1, 0, 0));
}

// axis 0 puts depth first: out[d][i] = (indices[i] == d), the transpose.
TEST(OneHot, Axis) {
  Tensor out = Run1("OneHot", {I64({3}, {1, 2, 0}), I64({}, {3}), F32({2}, {0, 1})}, {Axis(0)}, 11);
  EXPECT_EQ(out.shape(), (Shape{3, 3}));
  EXPECT_THAT(ToFloats(out), ElementsAre(0, 0, 1, 1, 0, 0, 0, 1, 0));
  // 2-D indices [[1,0],[2,1]], axis 1: out[i][d][j] = (indices[i][j] == d), shape [2,3,2].
  Tensor mid = Run1("OneHot", {I64({2, 2}, {1, 0, 2, 1}), I64({1}, {3}), F32({2}, {0, 1})}, {Axis(1)}, 11);
  EXPECT_EQ(mid.shape(), (Shape{2, 3, 2}));
  EXPECT_THAT(ToFloats(mid), ElementsAre(0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0));
  // axis -2 on output rank 3 is axis 1 again.
  Tensor neg = Run1("OneHot", {I64({2, 2}, {1, 0, 2, 1}), I64({1}, {3}), F32({2}, {0, 1})}, {Axis(-2)}, 11);
  EXPECT_THAT(ToFloats(neg), ElementsAre(0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0));
}

// depth sets the axis length; values gives [off, on] in their own dtype.
TEST(OneHot, DepthAndValues) {
  Tensor out = Run1("OneHot", {I64({2}, {0, 3}), I64({}, {5}), I64({2}, {-2, 7})}, {}, 11);
  EXPECT_EQ(out.shape(), (Shape{2, 5}));
  EXPECT_EQ(out.dtype(), DType::kInt64);
  EXPECT_THAT(ToInts(out), ElementsAre(7, -2, -2, -2, -2, -2, -2, -2, 7, -2));
  // Float depth 2.0 and float indices [1.0, 0.0] (both cast to int64).
  Tensor f = Run1("OneHot", {F32({2}, {1, 0}), F32({}, {2}), F32({2}, {0.5f, 1.5f})}, {}, 11);
  EXPECT_EQ(f.shape(), (Shape{2, 2}));
  EXPECT_THAT(ToFloats(f), ElementsAre(0.5f, 1.5f, 1.5f, 0.5f));
}

// depth as a 1-element float tensor 3.7 is cast to int64: 3.
TEST(OneHot, FloatDepthIsTruncated) {
  Tensor out = Run1("OneHot", {I64({2}, {2, 0}), F32({1}, {3.7f}), F32({2}, {0, 1})}, {}, 11);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(ToFloats(out), ElementsAre(0, 0, 1, 1, 0, 0));
}

// Negative indices count from depth (-1 -> 2, -3 -> 0); indices outside
// [-depth, depth-1] give an all-off row.
TEST(OneHot, NegativeAndOutOfRangeIndices) {
  Tensor out = Run1("OneHot", {I64({4}, {-1, -3, 3, -4}), I64({}, {3}), F32({2}, {0, 1})}, {}, 11);
  EXPECT_THAT(ToFloats(out), ElementsAre(0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0));
}

// ---------------------------------------------------------------- NonZero

// Spec example: [[1,0],[1,1]] -> non-zeros at (0,0), (1,0), (1,1):
// rows [[0,1,1],[0,0,1]].
TEST(NonZero, SpecExample) {
  Tensor out = Run1("NonZero", {F32({2, 2}, {1, 0, 1, 1})}, {}, 13);
  EXPECT_EQ(out.dtype(), DType::kInt64);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(ToInts(out), ElementsAre(0, 1, 1, 0, 0, 1));
}

TEST(NonZero, RanksAndDTypes) {
  // 1-D: positions 1 and 3; negative values are non-zero.
  Tensor v = Run1("NonZero", {I64({4}, {0, -3, 0, 5})}, {}, 9);
  EXPECT_EQ(v.shape(), (Shape{1, 2}));
  EXPECT_THAT(ToInts(v), ElementsAre(1, 3));
  // 3-D [2,1,2]: non-zeros at (0,0,1) and (1,0,0).
  Tensor t = Run1("NonZero", {F32({2, 1, 2}, {0, 2, 3, 0})}, {}, 13);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_THAT(ToInts(t), ElementsAre(0, 1, 0, 0, 1, 0));
  // All zero: shape [rank, 0].
  Tensor z = Run1("NonZero", {F32({2, 3}, std::vector<float>(6, 0.0f))}, {}, 13);
  EXPECT_EQ(z.shape(), (Shape{2, 0}));
  // bool: true at 0 and 2.
  Tensor b = Run1("NonZero", {Tensor::FromVector<bool>(DType::kBool, {3}, {true, false, true})}, {}, 13);
  EXPECT_THAT(ToInts(b), ElementsAre(0, 2));
}

// ---------------------------------------------------------------- Unique

struct UniqueOut {
  Tensor y;
  std::vector<int64_t> indices, inverse, counts;
};

UniqueOut RunUnique(Tensor x, std::vector<Attribute> attrs) {
  auto out = RunNode("Unique", {std::move(x)}, attrs, 4, 11);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ((*out)[i].dtype(), DType::kInt64);
  return {(*out)[0], ToInts((*out)[1]), ToInts((*out)[2]), ToInts((*out)[3])};
}

// Spec example 1, sorted 0: X = [2, 1, 1, 3, 4, 3] keeps first-occurrence
// order: Y = [2, 1, 3, 4], first indices [0, 1, 3, 4], inverse
// [0, 1, 1, 2, 3, 2], counts [1, 2, 2, 1].
TEST(Unique, UnsortedSpecExample) {
  UniqueOut u = RunUnique(F32({6}, {2, 1, 1, 3, 4, 3}), {Attribute::Int("sorted", 0)});
  EXPECT_EQ(u.y.shape(), (Shape{4}));
  EXPECT_THAT(ToFloats(u.y), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(u.indices, ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(u.inverse, ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(u.counts, ElementsAre(1, 2, 2, 1));
}

// The same X sorted (default sorted=1): Y = [1, 2, 3, 4], first indices
// [1, 0, 3, 4], inverse [1, 0, 0, 2, 3, 2], counts [2, 1, 2, 1].
TEST(Unique, SortedDefault) {
  UniqueOut u = RunUnique(F32({6}, {2, 1, 1, 3, 4, 3}), {});
  EXPECT_THAT(ToFloats(u.y), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(u.indices, ElementsAre(1, 0, 3, 4));
  EXPECT_THAT(u.inverse, ElementsAre(1, 0, 0, 2, 3, 2));
  EXPECT_THAT(u.counts, ElementsAre(2, 1, 2, 1));
  // Explicit sorted=1 is the same.
  UniqueOut e = RunUnique(F32({6}, {2, 1, 1, 3, 4, 3}), {Attribute::Int("sorted", 1)});
  EXPECT_THAT(ToFloats(e.y), ElementsAre(1, 2, 3, 4));
}

// Spec example 2: without axis the input is flattened: [[1,3],[2,3]] ->
// [1,3,2,3]: Y = [1, 2, 3], indices [0, 2, 1], inverse [0, 2, 1, 2], counts [1, 1, 2].
TEST(Unique, FlattensWithoutAxis) {
  UniqueOut u = RunUnique(I64({2, 2}, {1, 3, 2, 3}), {});
  EXPECT_EQ(u.y.shape(), (Shape{3}));
  EXPECT_EQ(u.y.dtype(), DType::kInt64);
  EXPECT_THAT(ToInts(u.y), ElementsAre(1, 2, 3));
  EXPECT_THAT(u.indices, ElementsAre(0, 2, 1));
  EXPECT_THAT(u.inverse, ElementsAre(0, 2, 1, 2));
  EXPECT_THAT(u.counts, ElementsAre(1, 1, 2));
}

// Spec example 3: axis 0 on [[1,0,0],[1,0,0],[2,3,4]]: rows are the unit:
// Y = [[1,0,0],[2,3,4]], indices [0, 2], inverse [0, 0, 1], counts [2, 1].
// axis -2 is the same axis.
TEST(Unique, Axis0SpecExample) {
  for (int64_t axis : {0, -2}) {
    UniqueOut u = RunUnique(F32({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4}), {Axis(axis)});
    EXPECT_EQ(u.y.shape(), (Shape{2, 3})) << "axis " << axis;
    EXPECT_THAT(ToFloats(u.y), ElementsAre(1, 0, 0, 2, 3, 4));
    EXPECT_THAT(u.indices, ElementsAre(0, 2));
    EXPECT_THAT(u.inverse, ElementsAre(0, 0, 1));
    EXPECT_THAT(u.counts, ElementsAre(2, 1));
  }
}

// Spec example 4: axis 1 of a [2,4,2] tensor whose slices x[:, i, :] are
// A=[1,1],[1,1]; B=[0,1],[0,1]; C=[2,1],[2,1]; B. Sorted lexicographically:
// B < A < C: Y[:, :, :] = [[[0,1],[1,1],[2,1]], same], indices [1, 0, 2],
// inverse [1, 0, 2, 0], counts [2, 1, 1].
TEST(Unique, Axis1SpecExample) {
  UniqueOut u = RunUnique(F32({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1}), {Axis(1)});
  EXPECT_EQ(u.y.shape(), (Shape{2, 3, 2}));
  EXPECT_THAT(ToFloats(u.y), ElementsAre(0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1));
  EXPECT_THAT(u.indices, ElementsAre(1, 0, 2));
  EXPECT_THAT(u.inverse, ElementsAre(1, 0, 2, 0));
  EXPECT_THAT(u.counts, ElementsAre(2, 1, 1));
  // Unsorted: first-occurrence order A, B, C: indices [0, 1, 2], inverse [0, 1, 2, 1].
  UniqueOut s = RunUnique(F32({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1}), {Axis(1), Attribute::Int("sorted", 0)});
  EXPECT_THAT(ToFloats(s.y), ElementsAre(1, 1, 0, 1, 2, 1, 1, 1, 0, 1, 2, 1));
  EXPECT_THAT(s.indices, ElementsAre(0, 1, 2));
  EXPECT_THAT(s.inverse, ElementsAre(0, 1, 2, 1));
  EXPECT_THAT(s.counts, ElementsAre(1, 2, 1));
}

// Strings sort lexicographically: ["b", "a", "b"] -> Y ["a", "b"],
// indices [1, 0], inverse [1, 0, 1], counts [1, 2].
TEST(Unique, Strings) {
  UniqueOut u = RunUnique(Tensor::FromVector<std::string>(DType::kString, {3}, {"b", "a", "b"}), {});
  ASSERT_EQ(u.y.dtype(), DType::kString);
  ASSERT_EQ(u.y.numel(), 2);
  EXPECT_EQ(u.y.data<std::string>()[0], "a");
  EXPECT_EQ(u.y.data<std::string>()[1], "b");
  EXPECT_THAT(u.indices, ElementsAre(1, 0));
  EXPECT_THAT(u.inverse, ElementsAre(1, 0, 1));
  EXPECT_THAT(u.counts, ElementsAre(1, 2));
}

// Only Y requested.
TEST(Unique, SingleOutput) {
  auto out = RunNode("Unique", {I64({5}, {3, 3, -1, 3, -1})}, {}, 1, 11);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToInts((*out)[0]), ElementsAre(-1, 3));
}

TEST(Unique, AxisOutOfRangeIsAnError) { RunError("Unique", {F32({2, 2}, {1, 2, 3, 4})}, {Axis(2)}, 11, 4); }

}  // namespace
}  // namespace kiln
