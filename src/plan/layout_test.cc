#include "plan/layout.h"

#include <gtest/gtest.h>

namespace kiln::plan {
namespace {

ir::Node MakeNode(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  ir::Node n;
  n.op_type = op;
  n.name = out[0];
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// x -(T: view)-> a -(Conv: NHWC in/out)-> b -(Ref)-> c, b -(Ref2)-> d
TEST(LayoutPlan, ConversionsAtBoundariesAreMadeOnceAndTransposeIsAbsorbed) {
  ir::Graph g;
  g.nodes.push_back(MakeNode("Transpose", {"x"}, {"a"}));
  g.nodes.push_back(MakeNode("Conv", {"a"}, {"b"}));
  g.nodes.push_back(MakeNode("Ref", {"b"}, {"c"}));
  g.nodes.push_back(MakeNode("Ref2", {"b"}, {"d"}));
  runtime::KernelLayouts transpose;
  transpose.inputs.resize(1);
  transpose.inputs[0].any_dense = true;
  transpose.output_order = [](const std::vector<DimOrder>& in) { return PermutedOrder(in[0], {0, 3, 1, 2}); };
  runtime::KernelLayouts conv;
  conv.inputs.resize(1);
  conv.inputs[0].orders = {kChannelsLast};
  conv.output_order = [](const std::vector<DimOrder>&) { return kChannelsLast; };
  runtime::KernelLayouts ref;
  std::unordered_map<std::string, ir::TypeInfo> types;
  for (const char* v : {"x", "a", "b", "c", "d"}) types[v] = ir::TypeInfo::Tensor(DType::kFloat32, ir::DimsFromShape({1, 3, 4, 5}));
  LayoutPlan p = PlanLayouts(g, {0, 1, 2, 3}, {&transpose, &conv, &ref, &ref}, types);
  EXPECT_EQ(OrderName(p.orders["a"], 4), "NHWC");  // the Transpose became a layout
  EXPECT_EQ(OrderName(p.orders["b"], 4), "NHWC");
  EXPECT_EQ(OrderName(p.orders["c"], 4), "NCHW");
  // No conversion in front of the Conv; one for b, shared by both reference consumers.
  ASSERT_EQ(p.conversions.size(), 1u);
  EXPECT_EQ(p.conversions[0].value, "b");
  EXPECT_EQ(p.conversions[0].node, 2u);
  EXPECT_EQ(OrderName(p.conversions[0].to, 4), "NCHW");
}

TEST(LayoutPlan, AcceptsTensorConvertsOnlyWhatIsNotDeclared) {
  runtime::InputLayouts row_major;
  runtime::InputLayouts cl;
  cl.orders = {kChannelsLast};
  Tensor x = Tensor::Zeros(DType::kFloat32, {1, 3, 4, 5});
  DimOrder target;
  EXPECT_TRUE(AcceptsTensor(row_major, x, &target));
  EXPECT_FALSE(AcceptsTensor(cl, x, &target));
  EXPECT_EQ(target, kChannelsLast);
  EXPECT_TRUE(AcceptsTensor(cl, ToOrder(x, kChannelsLast), &target));
  EXPECT_FALSE(AcceptsTensor(row_major, ToOrder(x, kChannelsLast), &target));
  EXPECT_EQ(target, kRowMajor);
  // A rank-2 value offered to a kernel that wants channels-last gets row-major.
  Tensor m = Tensor::Zeros(DType::kFloat32, {3, 4});
  EXPECT_FALSE(AcceptsTensor(cl, m.Permuted({1, 0}), &target));
  EXPECT_EQ(target, kRowMajor);
}

}  // namespace
}  // namespace kiln::plan
