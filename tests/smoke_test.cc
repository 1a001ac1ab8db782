#include <gtest/gtest.h>

#include "kiln/session.h"
#include "runtime/session_internal.h"

namespace kiln {
namespace {

TEST(Smoke, IdentityModelRuns) {
  ir::Model m;
  m.opsets[""] = 17;
  m.graph.name = "g";
  m.graph.inputs.push_back({"x", ir::TypeInfo::Tensor(DType::kFloat32, ir::DimsFromShape({2, 3}))});
  m.graph.outputs.push_back({"y", {}});
  ir::Node n;
  n.name = "id";
  n.op_type = "Identity";
  n.inputs = {"x"};
  n.outputs = {"y"};
  m.graph.nodes.push_back(n);
  auto s = CreateSessionFromModel(m);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Tensor x = Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = (*s)->Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ((*out)[0].data<float>()[5], 6.0f);
  EXPECT_EQ((*s)->outputs()[0].ShapeString(), "[2,3]");
}

}  // namespace
}  // namespace kiln
