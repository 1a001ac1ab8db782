// FusedSeparableConv (ops/fused.h): its inference chains the three
// FusedConv steps and names the input that does not fit; on the reference
// provider it equals the three FusedConv nodes run one after the other; the
// prefixed activation attributes round-trip.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ops/fused.h"
#include "ops/op_registry.h"
#include "support/op_test_util.h"

namespace kiln {
namespace {

using ir::Attribute;
using kiln::testing::RunNode;

Tensor Random(const Shape& s, uint64_t seed) {
  ir::SeededRng rng(seed);
  return *ir::RandomTensor(DType::kFloat32, s, rng, -1, 1);
}

ir::TypeInfo F32Type(const ir::Dims& dims) { return ir::TypeInfo::Tensor(DType::kFloat32, dims); }
ir::TypeInfo F32Type(const Shape& s) { return F32Type(ir::DimsFromShape(s)); }

// The node with inputs x, we, be, wd, bd, wp, bp, z; an empty type = absent.
struct Case {
  std::vector<ir::TypeInfo> types;
  std::vector<Attribute> attrs;
};

Result<ir::TypeInfo> Infer(const Case& c) {
  ir::Node n;
  n.name = "sep";
  n.op_type = "FusedSeparableConv";
  n.domain = ops::kKilnDomain;
  n.outputs = {"y"};
  std::vector<const ir::TypeInfo*> types;
  for (size_t i = 0; i < c.types.size(); ++i) {
    const bool present = c.types[i].kind == ir::TypeInfo::Kind::kTensor;
    n.inputs.push_back(present ? "in" + std::to_string(i) : "");
    types.push_back(present ? &c.types[i] : nullptr);
  }
  for (const auto& a : c.attrs) n.attrs[a.name] = a;
  const ops::OpSchema* schema = ops::OpRegistry::Global().Find(ops::kKilnDomain, "FusedSeparableConv", 1);
  if (!schema) return Internal("no schema");
  ops::InferContext ctx(n, 1, types, std::vector<const Tensor*>(types.size(), nullptr));
  KILN_RETURN_IF_ERROR(ops::InferNode(*schema, ctx));
  return ctx.outputs()[0];
}

// An inverted residual: 8 -> 32 -> depthwise 3x3 stride 2 -> 16, Z [1,16,5,5].
Case Block() {
  return {{F32Type(Shape{1, 8, 10, 10}), F32Type(Shape{32, 8, 1, 1}), F32Type(Shape{32}), F32Type(Shape{32, 1, 3, 3}),
           F32Type(Shape{32}), F32Type(Shape{16, 32, 1, 1}), F32Type(Shape{16}), F32Type(Shape{1, 16, 5, 5})},
          {Attribute::Ints("strides", {2, 2}), Attribute::Ints("pads", {1, 1, 1, 1}), Attribute::Ints("kernel_shape", {3, 3}),
           Attribute::String("expand_activation", "Clip"), Attribute::Floats("expand_activation_params", {0, 6})}};
}

void ExpectInferError(const Case& c, const std::string& what) {
  auto t = Infer(c);
  ASSERT_FALSE(t.ok()) << "expected an error about " << what;
  EXPECT_NE(t.status().message().find(what), std::string::npos) << t.status().ToString();
  EXPECT_NE(t.status().message().find("'sep'"), std::string::npos) << t.status().ToString();
}

TEST(FusedSeparableConv, InfersTheThreeSteps) {
  auto t = Infer(Block());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(t->shape);
  EXPECT_EQ(ir::DimsToString(*t->shape), "[1,16,5,5]");
  EXPECT_EQ(t->dtype, DType::kFloat32);

  // No expansion, a 5x5 depthwise conv, a symbolic batch.
  ir::Dims x = ir::DimsFromShape({2, 8, 9, 9});
  x[0] = ir::Dim();
  Case pair{{F32Type(x), {}, {}, F32Type(Shape{8, 1, 5, 5}), {}, F32Type(Shape{4, 8, 1, 1})},
            {Attribute::Ints("pads", {2, 2, 2, 2})}};
  t = Infer(pair);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(t->shape);
  EXPECT_EQ(t->shape->size(), 4u);
  EXPECT_FALSE((*t->shape)[0].known());
  EXPECT_EQ(ir::DimsToString(*t->shape), "[?,4,9,9]");
}

TEST(FusedSeparableConv, InferenceNamesTheInputThatDoesNotFit) {
  Case c = Block();
  c.types[1] = F32Type(Shape{32, 6, 1, 1});
  ExpectInferError(c, "We");
  c = Block();
  c.types[3] = F32Type(Shape{32, 2, 3, 3});
  ExpectInferError(c, "[M, 1, k, k]");
  c = Block();
  c.types[3] = F32Type(Shape{24, 1, 3, 3});
  ExpectInferError(c, "Wd");
  c = Block();
  c.types[5] = F32Type(Shape{16, 24, 1, 1});
  ExpectInferError(c, "Wp");
  c = Block();
  c.types[5] = F32Type(Shape{16, 32, 3, 3});
  ExpectInferError(c, "not 1x1");
  c = Block();
  c.types[7] = F32Type(Shape{1, 16, 10, 10});
  ExpectInferError(c, "residual Z");
  c = Block();
  c.types[0] = F32Type(Shape{1, 8, 10});
  ExpectInferError(c, "rank 3");
  c = Block();
  c.attrs.push_back(Attribute::String("auto_pad", "SAME_UPPER"));
  ExpectInferError(c, "auto_pad");
  c = Block();
  c.attrs.push_back(Attribute::String("depthwise_activation", "Gelu"));
  ExpectInferError(c, "depthwise_activation");
  c = Block();
  c.types.resize(5);
  ExpectInferError(c, "input");
  c = Block();
  c.types[1] = {};
  c.types[2] = {};
  c.types[3] = F32Type(Shape{8, 1, 3, 3});
  c.types[4] = F32Type(Shape{8});
  c.types[5] = F32Type(Shape{16, 8, 1, 1});
  ExpectInferError(c, "expand_activation");  // an expansion activation without We
}

TEST(FusedSeparableConv, PrefixedActivationAttributesRoundTrip) {
  ops::ActivationAttrs a{ops::Activation::kHardSigmoid, 0.3f, 0.4f, 2.f, -1.f};
  ir::Node n;
  n.name = "f";
  n.op_type = "FusedSeparableConv";
  for (auto& x : ops::ActivationToAttributes(a, "depthwise_")) n.attrs[x.name] = x;
  EXPECT_TRUE(n.attrs.count("depthwise_activation_params"));
  EXPECT_TRUE(n.attrs.count("depthwise_post_affine"));
  auto back = ops::ParseActivation(n, "depthwise_");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->kind, a.kind);
  EXPECT_EQ(back->alpha, a.alpha);
  EXPECT_EQ(back->beta, a.beta);
  EXPECT_EQ(back->post_scale, a.post_scale);
  EXPECT_EQ(back->post_shift, a.post_shift);
  auto plain = ops::ParseActivation(n);  // the unprefixed attributes are absent
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->kind, ops::Activation::kNone);
}

void ExpectNear(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_NEAR(a.GetAsDouble(i), b.GetAsDouble(i), tol) << "at " << i;
}

Tensor RunFusedConv(const std::vector<Tensor>& in, std::vector<Attribute> attrs) {
  auto r = RunNode("FusedConv", in, attrs, 1, 1, ops::kKilnDomain);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? (*r)[0] : Tensor();
}

TEST(FusedSeparableConv, ReferenceIsTheThreeFusedConvs) {
  const Tensor x = Random({1, 4, 7, 7}, 1), we = Random({12, 4, 1, 1}, 2), be = Random({12}, 3), wd = Random({12, 1, 3, 3}, 4),
               bd = Random({12}, 5), wp = Random({6, 12, 1, 1}, 6), bp = Random({6}, 7), z = Random({1, 6, 4, 4}, 8);
  const std::vector<Attribute> spatial = {Attribute::Ints("strides", {2, 2}), Attribute::Ints("pads", {1, 1, 1, 1}),
                                          Attribute::Ints("kernel_shape", {3, 3})};
  std::vector<Attribute> attrs = spatial;
  for (auto& a : ops::ActivationToAttributes({ops::Activation::kClip, 0, 6}, "expand_")) attrs.push_back(a);
  for (auto& a : ops::ActivationToAttributes({ops::Activation::kHardSwish}, "depthwise_")) attrs.push_back(a);
  for (auto& a : ops::ActivationToAttributes({ops::Activation::kRelu, 0, 0, 0.5f, 0.25f}, "")) attrs.push_back(a);

  const Tensor h = RunFusedConv({x, we, be}, {Attribute::String("activation", "Clip"), Attribute::Floats("activation_params", {0, 6})});
  std::vector<Attribute> dw_attrs = spatial;
  dw_attrs.push_back(Attribute::Int("group", 12));
  dw_attrs.push_back(Attribute::String("activation", "HardSwish"));
  const Tensor d = RunFusedConv({h, wd, bd}, dw_attrs);
  const Tensor y = RunFusedConv({d, wp, bp, z}, {Attribute::String("activation", "Relu"), Attribute::Floats("post_affine", {0.5f, 0.25f})});

  auto fused = RunNode("FusedSeparableConv", {x, we, be, wd, bd, wp, bp, z}, attrs, 1, 1, ops::kKilnDomain);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  ExpectNear((*fused)[0], y);

  // Without expansion, biases and residual.
  const Tensor d2 = RunFusedConv({x, Random({4, 1, 3, 3}, 9)}, {Attribute::Ints("pads", {1, 1, 1, 1}), Attribute::Int("group", 4)});
  const Tensor y2 = RunFusedConv({d2, Random({5, 4, 1, 1}, 10)}, {});
  auto pair = RunNode("FusedSeparableConv", {x, Tensor(), Tensor(), Random({4, 1, 3, 3}, 9), Tensor(), Random({5, 4, 1, 1}, 10)},
                      {Attribute::Ints("pads", {1, 1, 1, 1})}, 1, 1, ops::kKilnDomain);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  ExpectNear((*pair)[0], y2);
}

}  // namespace
}  // namespace kiln
