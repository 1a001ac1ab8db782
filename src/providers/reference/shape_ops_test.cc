// Tests of the shape-only ops: kernels through RunNode, and shape inference
// directly (symbolic dims, values known / unknown), since models with
// dynamic dims depend on it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/op_registry.h"
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
std::vector<float> IotaValues(int64_t n) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
  return v;
}

// Runs one op's shape inference on given input types and (optional) values.
struct Inferred {
  Status status;
  std::vector<ir::TypeInfo> outputs;
};
Inferred Infer(const std::string& op, int64_t opset, const std::vector<ir::TypeInfo>& types,
               const std::vector<const Tensor*>& values, const std::vector<ir::Attribute>& attrs = {}, size_t nout = 1) {
  ir::Node n;
  n.name = "n0";
  n.op_type = op;
  for (size_t i = 0; i < types.size(); ++i) n.inputs.push_back(types[i].kind == ir::TypeInfo::Kind::kUnknown ? "" : "in" + std::to_string(i));
  for (size_t i = 0; i < nout; ++i) n.outputs.push_back("out" + std::to_string(i));
  for (const auto& a : attrs) n.attrs[a.name] = a;
  std::vector<const ir::TypeInfo*> tp;
  for (const auto& t : types) tp.push_back(&t);
  std::vector<const Tensor*> vals = values;
  vals.resize(types.size(), nullptr);
  ops::InferContext ctx(n, opset, tp, vals);
  const ops::OpSchema* s = ops::OpRegistry::Global().Find("", op, opset);
  Inferred r;
  if (!s) {
    r.status = Internal("no schema");
    return r;
  }
  r.status = ops::InferNode(*s, ctx);
  r.outputs = ctx.outputs();
  return r;
}
ir::TypeInfo T(DType dt, ir::Dims d) { return ir::TypeInfo::Tensor(dt, std::move(d)); }
ir::Dim K(int64_t v) { return ir::Dim::Known(v); }
ir::Dim S(const char* p) { return ir::Dim::Symbol(p); }

// ------------------------------------------------------------ Reshape

TEST(ShapeOpsReshape, ZeroCopiesAndMinusOneInfers) {
  auto out = RunNode("Reshape", {Iota({2, 3, 4}), I64({3}, {0, -1, 2})}, {}, 1, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 6, 2}));  // 24 / (2*2)
  EXPECT_EQ(ToFloats((*out)[0]), IotaValues(24));  // row-major order unchanged
}

TEST(ShapeOpsReshape, AllowZeroMakesZeroADim) {
  Tensor x = Tensor::Zeros(DType::kFloat32, {0, 3, 4});
  auto out = RunNode("Reshape", {x, I64({3}, {3, 4, 0})}, {ir::Attribute::Int("allowzero", 1)}, 1, 14);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 4, 0}));
  // Without allowzero the 0 copies dim 2 (4): [3,4,4] has 48 elements, not 0.
  auto bad = RunNode("Reshape", {x, I64({3}, {3, 4, 0})}, {}, 1, 14);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("n0"));
}

TEST(ShapeOpsReshape, AllowZeroWithMinusOneIsInvalid) {
  auto out = RunNode("Reshape", {Iota({2, 3}), I64({2}, {0, -1})}, {ir::Attribute::Int("allowzero", 1)}, 1, 14);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("allowzero"));
}

TEST(ShapeOpsReshape, Opset1ShapeAttribute) {
  auto out = RunNode("Reshape", {Iota({2, 3})}, {ir::Attribute::Ints("shape", {3, -1})}, 1, 1);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{3, 2}));
}

TEST(ShapeOpsReshape, BadShapes) {
  for (auto shape : {std::vector<int64_t>{5, -1}, {-1, -1}, {-2, 3}, {7}, {0, 0, 0}}) {
    auto out = RunNode("Reshape", {Iota({2, 3}), I64({static_cast<int64_t>(shape.size())}, shape)}, {}, 1, 13);
    ASSERT_FALSE(out.ok()) << ShapeToString(shape);
    EXPECT_THAT(out.status().message(), HasSubstr("node 'n0' (Reshape)"));
  }
}

TEST(ShapeOpsReshape, StringsAndBool) {
  Tensor s = Tensor::FromVector<std::string>(DType::kString, {2, 2}, {"a", "b", "c", "d"});
  auto out = RunNode("Reshape", {s, I64({1}, {-1})}, {}, 1, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  Tensor o = (*out)[0].Contiguous();
  EXPECT_EQ(o.shape(), (Shape{4}));
  EXPECT_EQ(o.data<std::string>()[3], "d");
  Tensor b = Tensor::FromVector<bool>(DType::kBool, {4}, {true, false, false, true});
  auto ob = RunNode("Reshape", {b, I64({2}, {2, 2})}, {}, 1, 13);
  ASSERT_TRUE(ob.ok());
  EXPECT_EQ(ToInts((*ob)[0]), (std::vector<int64_t>{1, 0, 0, 1}));
}

TEST(ShapeOpsReshape, InferSymbolicDimsCancel) {
  // [N,3,4] -> [0,-1]: N is copied, so -1 = 12 exactly.
  Tensor shape = I64({2}, {0, -1});
  auto r = Infer("Reshape", 13, {T(DType::kFloat32, {S("N"), K(3), K(4)}), T(DType::kInt64, {K(2)})}, {nullptr, &shape});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(ir::DimsToString(*r.outputs[0].shape), ir::DimsToString({S("N"), K(12)}));
  // [N,3,4] -> [-1,4]: N does not cancel, -1 unknown.
  Tensor shape2 = I64({2}, {-1, 4});
  r = Infer("Reshape", 13, {T(DType::kFloat32, {S("N"), K(3), K(4)}), T(DType::kInt64, {K(2)})}, {nullptr, &shape2});
  ASSERT_TRUE(r.status.ok());
  EXPECT_FALSE((*r.outputs[0].shape)[0].known());
  EXPECT_EQ((*r.outputs[0].shape)[1].value, 4);
  // Unknown shape value of known length: rank only.
  r = Infer("Reshape", 13, {T(DType::kFloat32, {K(2), K(3)}), T(DType::kInt64, {K(3)})}, {});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.outputs[0].shape->size(), 3u);
  EXPECT_EQ(r.outputs[0].dtype, DType::kFloat32);
}

// ------------------------------------------------------------ Flatten

TEST(ShapeOpsFlatten, EveryAxis) {
  const Shape in{2, 3, 4, 5};
  for (int64_t axis = -4; axis <= 4; ++axis) {
    auto out = RunNode("Flatten", {Iota(in)}, {ir::Attribute::Int("axis", axis)}, 1, 13);
    ASSERT_TRUE(out.ok()) << axis << ": " << out.status().ToString();
    const int64_t a = axis < 0 ? axis + 4 : axis;
    int64_t outer = 1;
    for (int64_t k = 0; k < a; ++k) outer *= in[static_cast<size_t>(k)];
    EXPECT_EQ((*out)[0].shape(), (Shape{outer, 120 / outer})) << axis;
    EXPECT_EQ(ToFloats((*out)[0]), IotaValues(120));
  }
  auto def = RunNode("Flatten", {Iota(in)}, {}, 1, 13);
  ASSERT_TRUE(def.ok());
  EXPECT_EQ((*def)[0].shape(), (Shape{2, 60}));
}

TEST(ShapeOpsFlatten, AxisOutOfRange) {
  auto out = RunNode("Flatten", {Iota({2, 3})}, {ir::Attribute::Int("axis", 3)}, 1, 13);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("node 'n0' (Flatten)"));
  // Negative axes only from opset 11.
  EXPECT_FALSE(RunNode("Flatten", {Iota({2, 3})}, {ir::Attribute::Int("axis", -1)}, 1, 9).ok());
}

// ------------------------------------------------------------ Squeeze / Unsqueeze

TEST(ShapeOpsSqueeze, AxesInputAttributeAndAll) {
  auto a = RunNode("Squeeze", {Iota({1, 3, 1, 2}), I64({1}, {-2})}, {}, 1, 13);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)[0].shape(), (Shape{1, 3, 2}));
  auto b = RunNode("Squeeze", {Iota({1, 3, 1, 2})}, {ir::Attribute::Ints("axes", {0, 2})}, 1, 11);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)[0].shape(), (Shape{3, 2}));
  auto c = RunNode("Squeeze", {Iota({1, 3, 1, 2})}, {}, 1, 13);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(ToFloats((*c)[0]), IotaValues(6));
}

TEST(ShapeOpsSqueeze, NonOneAxisFails) {
  auto out = RunNode("Squeeze", {Iota({1, 3}), I64({1}, {1})}, {}, 1, 13);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("node 'n0' (Squeeze)"));
  EXPECT_FALSE(RunNode("Squeeze", {Iota({1, 3}), I64({1}, {2})}, {}, 1, 13).ok());
}

TEST(ShapeOpsUnsqueeze, AxesInputAndAttribute) {
  // Axes refer to the output rank, in any order.
  auto a = RunNode("Unsqueeze", {Iota({3, 4}), I64({3}, {4, 0, -3})}, {}, 1, 13);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ((*a)[0].shape(), (Shape{1, 3, 1, 4, 1}));
  auto b = RunNode("Unsqueeze", {Iota({3, 4})}, {ir::Attribute::Ints("axes", {1})}, 1, 11);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)[0].shape(), (Shape{3, 1, 4}));
  auto s = RunNode("Unsqueeze", {Tensor::Scalar(2.f), I64({1}, {0})}, {}, 1, 13);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].shape(), (Shape{1}));
}

TEST(ShapeOpsUnsqueeze, BadAxes) {
  for (auto axes : {std::vector<int64_t>{3}, {0, 0}, {-4}}) {
    auto out = RunNode("Unsqueeze", {Iota({3, 4}), I64({static_cast<int64_t>(axes.size())}, axes)}, {}, 1, 13);
    ASSERT_FALSE(out.ok()) << ShapeToString(axes);
    EXPECT_THAT(out.status().message(), HasSubstr("node 'n0' (Unsqueeze)"));
  }
}

// ------------------------------------------------------------ Shape / Size

TEST(ShapeOpsShape, StartEnd) {
  Tensor x = Iota({2, 3, 4, 5});
  struct Case { std::vector<ir::Attribute> attrs; std::vector<int64_t> want; };
  std::vector<Case> cases = {
      {{}, {2, 3, 4, 5}},
      {{ir::Attribute::Int("start", 1)}, {3, 4, 5}},
      {{ir::Attribute::Int("end", -1)}, {2, 3, 4}},
      {{ir::Attribute::Int("start", -3), ir::Attribute::Int("end", 3)}, {3, 4}},
      {{ir::Attribute::Int("start", -10)}, {2, 3, 4, 5}},  // clamped
      {{ir::Attribute::Int("end", 10)}, {2, 3, 4, 5}},
      {{ir::Attribute::Int("start", 3), ir::Attribute::Int("end", 1)}, {}},
  };
  for (const auto& c : cases) {
    auto out = RunNode("Shape", {x}, c.attrs, 1, 15);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].dtype(), DType::kInt64);
    EXPECT_EQ(ToInts((*out)[0]), c.want);
  }
}

TEST(ShapeOpsSize, CountsElements) {
  auto out = RunNode("Size", {Iota({2, 3, 4})}, {}, 1, 13);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].shape(), Shape{});
  EXPECT_EQ(ToInts((*out)[0]), (std::vector<int64_t>{24}));
  Tensor s = Tensor::FromVector<std::string>(DType::kString, {0, 5}, {});
  auto e = RunNode("Size", {s}, {}, 1, 13);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(ToInts((*e)[0]), (std::vector<int64_t>{0}));
}

// ------------------------------------------------------------ Expand

TEST(ShapeOpsExpand, Bidirectional) {
  // [3,1] with shape [2,1,6] -> [2,3,6]; value depends on the row only.
  auto out = RunNode("Expand", {F32({3, 1}, {1, 2, 3}), I64({3}, {2, 1, 6})}, {}, 1, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)[0].shape(), (Shape{2, 3, 6}));
  auto v = ToFloats((*out)[0]);
  for (int64_t i = 0; i < 36; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], static_cast<float>((i / 6) % 3 + 1));
  // A shape smaller than the input keeps the input's dims.
  auto keep = RunNode("Expand", {Iota({2, 3}), I64({1}, {1})}, {}, 1, 13);
  ASSERT_TRUE(keep.ok());
  EXPECT_EQ((*keep)[0].shape(), (Shape{2, 3}));
}

TEST(ShapeOpsExpand, Float16AndStrings) {
  Tensor h = Tensor::FromVector<Float16>(DType::kFloat16, {1}, {Float16(1.5f)});
  auto out = RunNode("Expand", {h, I64({2}, {2, 2})}, {}, 1, 13);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(ToFloats((*out)[0]), (std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f}));
  Tensor s = Tensor::FromVector<std::string>(DType::kString, {2, 1}, {"x", "y"});
  auto os = RunNode("Expand", {s, I64({2}, {2, 2})}, {}, 1, 13);
  ASSERT_TRUE(os.ok());
  Tensor o = (*os)[0].Contiguous();
  EXPECT_EQ(o.data<std::string>()[1], "x");
  EXPECT_EQ(o.data<std::string>()[2], "y");
}

TEST(ShapeOpsExpand, Incompatible) {
  auto out = RunNode("Expand", {Iota({3}), I64({1}, {4})}, {}, 1, 13);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("node 'n0' (Expand)"));
}

TEST(ShapeOpsIdentity, PassesThrough) {
  auto out = RunNode("Identity", {F32({2}, {1, 2})}, {}, 1, 13);
  ASSERT_TRUE(out.ok());
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(1, 2));
}

TEST(ShapeOpsInfer, SqueezeUnknownDimsAndShapeRank) {
  auto r = Infer("Squeeze", 13, {T(DType::kFloat32, {S("N"), K(1), K(3)})}, {});
  ASSERT_TRUE(r.status.ok());
  EXPECT_FALSE(r.outputs[0].shape.has_value());  // N might be 1
  Tensor axes = I64({1}, {1});
  r = Infer("Squeeze", 13, {T(DType::kFloat32, {S("N"), K(1), K(3)}), T(DType::kInt64, {K(1)})}, {nullptr, &axes});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(ir::DimsToString(*r.outputs[0].shape), ir::DimsToString({S("N"), K(3)}));
  r = Infer("Shape", 15, {T(DType::kFloat32, {S("N"), K(1), K(3)})}, {}, {ir::Attribute::Int("start", 1)});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.outputs[0].dtype, DType::kInt64);
  EXPECT_EQ(ir::DimsToString(*r.outputs[0].shape), "[2]");
  r = Infer("Flatten", 13, {T(DType::kFloat32, {S("N"), K(3), K(4)})}, {});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(ir::DimsToString(*r.outputs[0].shape), ir::DimsToString({S("N"), K(12)}));
}

}  // namespace
}  // namespace kiln
