// The executor's per-signature reuse of inferred output types
// (Executor::Specialization): runs that differ only in the values of inputs
// a node's output shape depends on, or in the shapes of dynamic inputs, must
// each get their own output shapes, never the types of an earlier run.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "runtime/session_internal.h"

namespace kiln {
namespace {

Tensor Int64s(std::vector<int64_t> v) {
  Tensor t = Tensor::Zeros(DType::kInt64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

Tensor Iota(const Shape& s) {
  Tensor t = Tensor::Zeros(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

// Reshape(x, shape) where `shape` is a graph input (its value changes between
// runs of the same signature) or a feedable default (an initializer that is
// also an input): the output shape follows each run's value.
void ExpectReshapeFollowsValues(bool feedable_default, const std::string& provider) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 6});
  std::string shape;
  if (feedable_default) {
    shape = b.AddInitializer("shape", Int64s({3, 4}));
    b.AddInput("shape", DType::kInt64, Shape{2});
  } else {
    shape = b.AddInput("shape", DType::kInt64, Shape{2});
  }
  b.AddOutput(b.AddNode("Reshape", {x, shape}, {}));
  auto m = b.Build();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  SessionOptions o;
  o.provider = provider;
  auto s = CreateSessionFromModel(*m, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{3, 4}, {4, 3}, {12, 1}, {3, 4}}) {
    auto r = (*s)->Run({{"x", Iota({2, 6})}, {"shape", Int64s(dims)}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)[0].shape(), Shape(dims)) << provider << (feedable_default ? " feedable default" : " input");
    EXPECT_EQ((*r)[0].Contiguous().data<float>()[11], 11.f);
  }
}

TEST(ExecutorSpecialization, OutputShapeFollowsAnInputsValue) {
  for (const char* p : {"reference", "cpu"}) ExpectReshapeFollowsValues(false, p);
}

TEST(ExecutorSpecialization, OutputShapeFollowsAFeedableDefault) {
  for (const char* p : {"reference", "cpu"}) ExpectReshapeFollowsValues(true, p);
}

// Symbolic dims: each signature gets its own types, and coming back to an
// earlier one reuses its types correctly (more signatures than are kept).
TEST(ExecutorSpecialization, DynamicShapesAlternate) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3)});
  auto y = b.AddNode("Add", {x, x}, {});
  b.AddOutput(b.AddNode("ReduceSum", {y}, {ir::Attribute::Ints("axes", {1}), ir::Attribute::Int("keepdims", 0)}));
  b.SetOpset("", 12);
  auto m = b.Build();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  for (const char* p : {"reference", "cpu"}) {
    SessionOptions o;
    o.provider = p;
    auto s = CreateSessionFromModel(*m, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    for (int64_t n : {1, 5, 2, 9, 3, 4, 6, 7, 8, 10, 11, 1, 5}) {
      auto r = (*s)->Run({{"x", Iota({n, 3})}});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ((*r)[0].shape(), Shape{n}) << p;
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ((*r)[0].data<float>()[i], 2.f * (9 * i + 3)) << p << " n " << n;
    }
  }
}

}  // namespace
}  // namespace kiln
