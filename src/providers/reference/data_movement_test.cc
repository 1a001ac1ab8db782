// Tests of Concat, Split, Slice, Transpose and Tile (reference kernels and
// their inference), plus graphs where a view (Transpose / Slice output) flows
// into the next op. Expected values are written by hand from the spec or
// computed by small independent formulas below.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>

#include "runtime/session_internal.h"
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

// Row-major index <-> linear helpers for expected values.
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

// ------------------------------------------------------------ Concat

TEST(DataMovementConcat, EveryAxisOf3D) {
  const Shape a_shape{2, 3, 4}, b_shape_base{2, 3, 4};
  for (int64_t axis = -3; axis < 3; ++axis) {
    const size_t ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
    Shape bs = b_shape_base;
    bs[ax] = 2;  // the second input is thinner on the axis
    Tensor a = Iota(a_shape), b = Iota(bs);
    for (int64_t i = 0; i < b.numel(); ++i) b.data<float>()[i] += 100;
    auto out = RunNode("Concat", {a, b}, {ir::Attribute::Int("axis", axis)}, 1, 13);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    Shape os = a_shape;
    os[ax] += 2;
    ASSERT_EQ((*out)[0].shape(), os);
    auto v = ToFloats((*out)[0]);
    for (int64_t lin = 0; lin < (*out)[0].numel(); ++lin) {
      auto idx = Unravel(lin, os);
      float want;
      if (idx[ax] < a_shape[ax]) {
        want = static_cast<float>(Ravel(idx, a_shape));
      } else {
        idx[ax] -= a_shape[ax];
        want = 100.f + static_cast<float>(Ravel(idx, bs));
      }
      EXPECT_EQ(v[static_cast<size_t>(lin)], want) << "axis " << axis << " at " << lin;
    }
  }
}

TEST(DataMovementConcat, EmptyInputsAndStrings) {
  Tensor e = Tensor::Zeros(DType::kFloat32, {0, 2});
  auto out = RunNode("Concat", {e, F32({1, 2}, {1, 2}), e}, {ir::Attribute::Int("axis", 0)}, 1, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 2}));
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(1, 2));
  Tensor s1 = Tensor::FromVector<std::string>(DType::kString, {1}, {"a"});
  Tensor s2 = Tensor::FromVector<std::string>(DType::kString, {2}, {"b", "c"});
  auto os = RunNode("Concat", {s1, s2}, {ir::Attribute::Int("axis", 0)}, 1, 13);
  ASSERT_TRUE(os.ok());
  Tensor o = (*os)[0].Contiguous();
  EXPECT_EQ(o.data<std::string>()[0] + o.data<std::string>()[1] + o.data<std::string>()[2], "abc");
}

TEST(DataMovementConcat, Errors) {
  auto shape = RunNode("Concat", {Iota({2, 3}), Iota({2, 4})}, {ir::Attribute::Int("axis", 0)}, 1, 13);
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(), HasSubstr("node 'n0' (Concat)"));
  EXPECT_FALSE(RunNode("Concat", {Iota({2, 3}), Iota({2, 3, 1})}, {ir::Attribute::Int("axis", 0)}, 1, 13).ok());
  EXPECT_FALSE(RunNode("Concat", {Iota({2, 3})}, {ir::Attribute::Int("axis", 2)}, 1, 13).ok());
  EXPECT_FALSE(RunNode("Concat", {Iota({2, 3})}, {}, 1, 13).ok());  // axis required
}

// ------------------------------------------------------------ Split

TEST(DataMovementSplit, EqualPartsDefaultAxis) {
  auto out = RunNode("Split", {Iota({6, 2})}, {}, 3, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*out)[i].shape(), (Shape{2, 2}));
    EXPECT_EQ(ToFloats((*out)[i])[0], 4.f * i);
  }
}

TEST(DataMovementSplit, SplitInputAttributeAndZeroParts) {
  auto a = RunNode("Split", {Iota({2, 5}), I64({3}, {1, 0, 4})}, {ir::Attribute::Int("axis", -1)}, 3, 13);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)[0].shape(), (Shape{2, 1}));
  EXPECT_EQ((*a)[1].shape(), (Shape{2, 0}));
  EXPECT_EQ((*a)[2].shape(), (Shape{2, 4}));
  EXPECT_THAT(ToFloats((*a)[0]), ElementsAre(0, 5));
  EXPECT_THAT(ToFloats((*a)[2]), ElementsAre(1, 2, 3, 4, 6, 7, 8, 9));
  auto b = RunNode("Split", {Iota({5})}, {ir::Attribute::Ints("split", {2, 3})}, 2, 11);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_THAT(ToFloats((*b)[1]), ElementsAre(2, 3, 4));
}

TEST(DataMovementSplit, NumOutputsUnevenLastChunk) {
  // Opset 18: 7 into 3 parts of ceil(7/3) = 3: [3, 3, 1].
  auto out = RunNode("Split", {Iota({7})}, {ir::Attribute::Int("num_outputs", 3)}, 3, 18);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(0, 1, 2));
  EXPECT_THAT(ToFloats((*out)[1]), ElementsAre(3, 4, 5));
  EXPECT_THAT(ToFloats((*out)[2]), ElementsAre(6));
}

TEST(DataMovementSplit, Errors) {
  auto sum = RunNode("Split", {Iota({5}), I64({2}, {2, 2})}, {}, 2, 13);
  ASSERT_FALSE(sum.ok());
  EXPECT_THAT(sum.status().message(), HasSubstr("node 'n0' (Split)"));
  EXPECT_FALSE(RunNode("Split", {Iota({5})}, {}, 2, 13).ok());  // not divisible
  EXPECT_FALSE(RunNode("Split", {Iota({5}), I64({2}, {6, -1})}, {}, 2, 13).ok());
  EXPECT_FALSE(RunNode("Split", {Iota({6})}, {ir::Attribute::Int("num_outputs", 2)}, 3, 18).ok());
}

// ------------------------------------------------------------ Slice

Result<std::vector<Tensor>> Slice13(const Tensor& x, std::vector<int64_t> starts, std::vector<int64_t> ends,
                                    std::vector<int64_t> axes = {}, std::vector<int64_t> steps = {}) {
  const int64_t n = static_cast<int64_t>(starts.size());
  std::vector<Tensor> in{x, I64({n}, starts), I64({n}, ends)};
  in.push_back(axes.empty() ? Tensor() : I64({n}, axes));
  in.push_back(steps.empty() ? Tensor() : I64({n}, steps));
  return RunNode("Slice", in, {}, 1, 13);
}

TEST(DataMovementSlice, StartsEndsAxesSteps) {
  // x[1:3, 0:4:2] of a 4x5 iota.
  auto out = Slice13(Iota({4, 5}), {1, 0}, {3, 4}, {0, 1}, {1, 2});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 2}));
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(5, 7, 10, 12));
  // Negative axes, default steps; only axis -1 sliced: x[:, 2:].
  auto neg = Slice13(Iota({2, 4}), {2}, {INT64_MAX}, {-1});
  ASSERT_TRUE(neg.ok());
  EXPECT_THAT(ToFloats((*neg)[0]), ElementsAre(2, 3, 6, 7));
}

TEST(DataMovementSlice, NegativeStepsAndClamping) {
  Tensor x = Iota({5});
  // x[::-1] written with INT_MAX start and INT_MIN end.
  auto rev = Slice13(x, {INT64_MAX}, {INT64_MIN}, {0}, {-1});
  ASSERT_TRUE(rev.ok()) << rev.status().ToString();
  EXPECT_THAT(ToFloats((*rev)[0]), ElementsAre(4, 3, 2, 1, 0));
  // x[-1:0:-2] -> indices 4, 2 (end 0 excluded).
  auto two = Slice13(x, {-1}, {0}, {0}, {-2});
  ASSERT_TRUE(two.ok());
  EXPECT_THAT(ToFloats((*two)[0]), ElementsAre(4, 2));
  // x[3:-100:-1] -> 3, 2, 1, 0 (end clamps to -1, i.e. through index 0).
  auto clamp = Slice13(x, {3}, {-100}, {0}, {-1});
  ASSERT_TRUE(clamp.ok());
  EXPECT_THAT(ToFloats((*clamp)[0]), ElementsAre(3, 2, 1, 0));
  // Starts past the end give empty outputs; ends past the end clamp.
  auto empty = Slice13(x, {10}, {20});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)[0].shape(), (Shape{0}));
  auto over = Slice13(x, {-7}, {1000});
  ASSERT_TRUE(over.ok());
  EXPECT_EQ((*over)[0].numel(), 5);
  // A huge step takes one element.
  auto big = Slice13(x, {1}, {5}, {0}, {INT64_MAX});
  ASSERT_TRUE(big.ok());
  EXPECT_THAT(ToFloats((*big)[0]), ElementsAre(1));
}

TEST(DataMovementSlice, Opset1AttributesAndStrings) {
  auto out = RunNode("Slice", {Iota({3, 4})},
                     {ir::Attribute::Ints("starts", {1}), ir::Attribute::Ints("ends", {3}), ir::Attribute::Ints("axes", {1})}, 1, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(1, 2, 5, 6, 9, 10));
  Tensor s = Tensor::FromVector<std::string>(DType::kString, {4}, {"a", "b", "c", "d"});
  auto os = Slice13(s, {3}, {0}, {0}, {-2});
  ASSERT_TRUE(os.ok());
  Tensor o = (*os)[0].Contiguous();
  ASSERT_EQ(o.numel(), 2);
  EXPECT_EQ(o.data<std::string>()[0], "d");
  EXPECT_EQ(o.data<std::string>()[1], "b");
}

TEST(DataMovementSlice, Errors) {
  auto step0 = Slice13(Iota({5}), {0}, {5}, {0}, {0});
  ASSERT_FALSE(step0.ok());
  EXPECT_THAT(step0.status().message(), HasSubstr("node 'n0' (Slice)"));
  EXPECT_FALSE(Slice13(Iota({5}), {0}, {5}, {1}).ok());            // axis out of range
  EXPECT_FALSE(Slice13(Iota({5, 2}), {0, 0}, {5, 1}, {0, -2}).ok());  // repeated axis
  EXPECT_FALSE(RunNode("Slice", {Iota({5}), I64({1}, {0}), I64({2}, {1, 2})}, {}, 1, 13).ok());
}

// ------------------------------------------------------------ Transpose

TEST(DataMovementTranspose, PermAndDefault) {
  const Shape s{2, 3, 4};
  const std::vector<int64_t> perm{1, 2, 0};
  auto out = RunNode("Transpose", {Iota(s)}, {ir::Attribute::Ints("perm", perm)}, 1, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Shape os{3, 4, 2};
  ASSERT_EQ((*out)[0].shape(), os);
  auto v = ToFloats((*out)[0]);
  for (int64_t lin = 0; lin < 24; ++lin) {
    auto o = Unravel(lin, os);
    std::vector<int64_t> i(3);
    for (size_t k = 0; k < 3; ++k) i[static_cast<size_t>(perm[k])] = o[k];  // out dim k = in dim perm[k]
    EXPECT_EQ(v[static_cast<size_t>(lin)], static_cast<float>(Ravel(i, s)));
  }
  auto def = RunNode("Transpose", {Iota({2, 3})}, {}, 1, 13);
  ASSERT_TRUE(def.ok());
  EXPECT_EQ((*def)[0].shape(), (Shape{3, 2}));
  EXPECT_THAT(ToFloats((*def)[0]), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(DataMovementTranspose, BadPerm) {
  for (auto perm : {std::vector<int64_t>{0, 0}, {0}, {0, 2}}) {
    auto out = RunNode("Transpose", {Iota({2, 3})}, {ir::Attribute::Ints("perm", perm)}, 1, 13);
    ASSERT_FALSE(out.ok());
    EXPECT_THAT(out.status().message(), HasSubstr("node 'n0' (Transpose)"));
  }
}

// ------------------------------------------------------------ Tile

TEST(DataMovementTile, Repeats) {
  const Shape s{2, 3};
  auto out = RunNode("Tile", {Iota(s), I64({2}, {2, 3})}, {}, 1, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Shape os{4, 9};
  ASSERT_EQ((*out)[0].shape(), os);
  auto v = ToFloats((*out)[0]);
  for (int64_t lin = 0; lin < 36; ++lin) {
    auto o = Unravel(lin, os);
    EXPECT_EQ(v[static_cast<size_t>(lin)], static_cast<float>(Ravel({o[0] % 2, o[1] % 3}, s)));
  }
  auto zero = RunNode("Tile", {Iota(s), I64({2}, {0, 1})}, {}, 1, 13);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ((*zero)[0].shape(), (Shape{0, 3}));
  Tensor b = Tensor::FromVector<bool>(DType::kBool, {2}, {true, false});
  auto ob = RunNode("Tile", {b, I64({1}, {2})}, {}, 1, 13);
  ASSERT_TRUE(ob.ok());
  EXPECT_EQ(ToInts((*ob)[0]), (std::vector<int64_t>{1, 0, 1, 0}));
}

TEST(DataMovementTile, Errors) {
  auto len = RunNode("Tile", {Iota({2, 3}), I64({1}, {2})}, {}, 1, 13);
  ASSERT_FALSE(len.ok());
  EXPECT_THAT(len.status().message(), HasSubstr("node 'n0' (Tile)"));
  EXPECT_FALSE(RunNode("Tile", {Iota({2}), I64({1}, {-1})}, {}, 1, 13).ok());
}

// ------------------------------------------------------------ graphs with views

ir::Node MakeNode(const std::string& name, const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                  std::vector<ir::Attribute> attrs = {}) {
  ir::Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  for (auto& a : attrs) n.attrs[a.name] = a;
  return n;
}

TEST(DataMovementGraph, TransposeAndSliceViewsFeedNextOps) {
  // y = Reshape(Slice(Transpose(x)), [-1]) and z = Concat(Transpose(x), Transpose(x)):
  // the views must be read in their logical order by the next kernels.
  ir::Model m;
  m.opsets[""] = 17;
  m.graph.name = "g";
  m.graph.inputs.push_back({"x", ir::TypeInfo::Tensor(DType::kFloat32, ir::DimsFromShape({2, 3}))});
  m.graph.initializers["starts"] = I64({1}, {2});
  m.graph.initializers["ends"] = I64({1}, {INT64_MIN});
  m.graph.initializers["axes"] = I64({1}, {0});
  m.graph.initializers["steps"] = I64({1}, {-2});
  m.graph.initializers["flat"] = I64({1}, {-1});
  m.graph.nodes.push_back(MakeNode("t", "Transpose", {"x"}, {"xt"}));
  m.graph.nodes.push_back(MakeNode("s", "Slice", {"xt", "starts", "ends", "axes", "steps"}, {"xs"}));
  m.graph.nodes.push_back(MakeNode("r", "Reshape", {"xs", "flat"}, {"y"}));
  m.graph.nodes.push_back(MakeNode("c", "Concat", {"xt", "xt"}, {"z"}, {ir::Attribute::Int("axis", 1)}));
  m.graph.outputs.push_back({"y", {}});
  m.graph.outputs.push_back({"z", {}});
  auto s = CreateSessionFromModel(m);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto out = (*s)->Run({{"x", Iota({2, 3})}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // xt = [[0,3],[1,4],[2,5]]; rows 2 and 0 of it: [2,5,0,3].
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(2, 5, 0, 3));
  EXPECT_EQ((*out)[1].shape(), (Shape{3, 4}));
  EXPECT_THAT(ToFloats((*out)[1]), ElementsAre(0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2, 5));
}

TEST(DataMovementGraph, DynamicShapeChain) {
  // Shape -> Slice -> Concat -> Reshape with a dynamic batch: [N,3,4] -> [N,12].
  ir::Model m;
  m.opsets[""] = 17;
  m.graph.name = "g";
  m.graph.inputs.push_back({"x", ir::TypeInfo::Tensor(DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3), ir::Dim::Known(4)})});
  m.graph.initializers["zero"] = I64({1}, {0});
  m.graph.initializers["one"] = I64({1}, {1});
  m.graph.initializers["minus1"] = I64({1}, {-1});
  m.graph.nodes.push_back(MakeNode("shape", "Shape", {"x"}, {"sh"}));
  m.graph.nodes.push_back(MakeNode("batch", "Slice", {"sh", "zero", "one"}, {"n"}));
  m.graph.nodes.push_back(MakeNode("cat", "Concat", {"n", "minus1"}, {"target"}, {ir::Attribute::Int("axis", 0)}));
  m.graph.nodes.push_back(MakeNode("reshape", "Reshape", {"x", "target"}, {"y"}));
  m.graph.outputs.push_back({"y", {}});
  auto s = CreateSessionFromModel(m);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  for (int64_t n : {1, 3}) {
    auto out = (*s)->Run({{"x", Iota({n, 3, 4})}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].shape(), (Shape{n, 12}));
  }
}

}  // namespace
}  // namespace kiln
