#include <gtest/gtest.h>

#include "ir/graph.h"

namespace kiln::ir {
namespace {

Node MakeNode(const std::string& name, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

TEST(Graph, TopologicalOrderSortsProducersFirst) {
  Graph g;
  g.inputs.push_back({"x", TypeInfo::Tensor(DType::kFloat32)});
  g.nodes.push_back(MakeNode("b", "Relu", {"t"}, {"y"}));
  g.nodes.push_back(MakeNode("a", "Relu", {"x"}, {"t"}));
  auto order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  EXPECT_EQ(*order, (std::vector<size_t>{1, 0}));
}

TEST(Graph, CycleIsReported) {
  Graph g;
  g.name = "main";
  g.inputs.push_back({"x", TypeInfo::Tensor(DType::kFloat32)});
  g.nodes.push_back(MakeNode("a", "Add", {"x", "c"}, {"b"}));
  g.nodes.push_back(MakeNode("n2", "Relu", {"b"}, {"c"}));
  auto order = g.TopologicalOrder();
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("cycle"), std::string::npos);
}

TEST(Graph, DanglingInputNamesNodeAndValue) {
  Graph g;
  g.name = "main";
  g.nodes.push_back(MakeNode("relu_1", "Relu", {"ghost"}, {"y"}));
  auto order = g.TopologicalOrder();
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("node 'relu_1' (Relu)"), std::string::npos);
  EXPECT_NE(order.status().message().find("'ghost'"), std::string::npos);
}

TEST(Graph, DuplicateOutputIsReported) {
  Graph g;
  g.inputs.push_back({"x", TypeInfo::Tensor(DType::kFloat32)});
  g.nodes.push_back(MakeNode("a", "Relu", {"x"}, {"y"}));
  g.nodes.push_back(MakeNode("b", "Relu", {"x"}, {"y"}));
  EXPECT_FALSE(g.TopologicalOrder().ok());
}

TEST(Graph, SubgraphOuterReferencesOrderTheirProducer) {
  Graph g;
  g.inputs.push_back({"cond", TypeInfo::Tensor(DType::kBool)});
  auto then_g = std::make_shared<Graph>();
  then_g->nodes.push_back(MakeNode("inner", "Identity", {"t"}, {"o"}));
  then_g->outputs.push_back({"o", {}});
  Node if_node = MakeNode("if", "If", {"cond"}, {"r"});
  if_node.attrs["then_branch"] = Attribute::GraphValue("then_branch", then_g);
  g.nodes.push_back(if_node);
  g.nodes.push_back(MakeNode("p", "Identity", {"cond"}, {"t"}));
  EXPECT_EQ(OuterReferences(*then_g), (std::vector<std::string>{"t"}));
  auto order = g.TopologicalOrder();
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  EXPECT_EQ(*order, (std::vector<size_t>{1, 0}));
}

TEST(Node, TypedAttributeErrorsNameTheNode) {
  Node n = MakeNode("conv_3", "Conv", {}, {});
  n.attrs["group"] = Attribute::Float("group", 1.5f);
  auto r = n.GetInt("group", 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("node 'conv_3' (Conv)"), std::string::npos);
  EXPECT_EQ(*n.GetInt("missing", 7), 7);
}

TEST(Printer, PrintsNodesAndAttributes) {
  Graph g;
  g.name = "g";
  g.inputs.push_back({"x", TypeInfo::Tensor(DType::kFloat32, DimsFromShape({1, 3}))});
  Node n = MakeNode("r", "LeakyRelu", {"x"}, {"y"});
  n.attrs["alpha"] = Attribute::Float("alpha", 0.5f);
  g.nodes.push_back(n);
  g.outputs.push_back({"y", {}});
  std::string text = ToText(g);
  EXPECT_NE(text.find("%y = LeakyRelu(%x) {alpha=0.5}  # r"), std::string::npos) << text;
  EXPECT_NE(text.find("%x: float32[1,3]"), std::string::npos) << text;
}

}  // namespace
}  // namespace kiln::ir
