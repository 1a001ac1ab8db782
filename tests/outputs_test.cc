// Outputs (issue 6): any number, any names, outputs that are graph inputs,
// initializers or Constants, the same value listed twice, intermediate
// values a fusion would absorb, and any subset in any order at Run, on every
// provider and level. The runtime that motivates kiln crashed parsing the
// output names of a model with ten or more outputs.
#include <gtest/gtest.h>

#include <cstring>

#include "ir/builder.h"
#include "runtime/session_internal.h"

namespace kiln {
namespace {

using ir::Attribute;

std::vector<SessionOptions> AllOptions() {
  std::vector<SessionOptions> v;
  SessionOptions ref;
  v.push_back(ref);
  for (const char* level : {"disable", "basic", "extended", "all"}) {
    SessionOptions o;
    o.provider = "cpu";
    o.opt_level = level;
    v.push_back(o);
  }
  return v;
}

std::string Describe(const SessionOptions& o) { return o.provider + "/" + o.opt_level; }

// 64 outputs with awkward names: a chain x -> Relu -> Neg -> ... where every
// intermediate value is an output.
TEST(Outputs, SixtyFourOutputsWithAnyNames) {
  ir::GraphBuilder b(17);
  std::string v = b.AddInput("x", DType::kFloat32, Shape{2, 3});
  std::vector<std::string> names;
  const std::vector<std::string> odd = {"a#1", "b:2", "c/d/3", "with space", "9starts_with_digit", "ünïcödé", "x.y.z", "::"};
  for (int i = 0; i < 64; ++i) {
    std::string name = odd[static_cast<size_t>(i) % odd.size()] + "_" + std::to_string(i);
    b.AddNodeWithOutputs(i % 2 ? "Neg" : "Relu", {v}, {name}, {}, "n" + std::to_string(i));
    b.AddOutput(name);
    names.push_back(name);
    v = name;
  }
  auto m = b.Build();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  Tensor x = Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {-1, 2, -3, 4, -5, 6});
  for (const SessionOptions& o : AllOptions()) {
    auto s = CreateSessionFromModel(*m, o);
    ASSERT_TRUE(s.ok()) << Describe(o) << ": " << s.status().ToString();
    ASSERT_EQ((*s)->outputs().size(), 64u);
    for (size_t i = 0; i < 64; ++i) EXPECT_EQ((*s)->outputs()[i].name, names[i]);
    auto all = (*s)->Run({{"x", x}});
    ASSERT_TRUE(all.ok()) << Describe(o) << ": " << all.status().ToString();
    ASSERT_EQ(all->size(), 64u);
    // relu(x) then alternately negated and relu'd: value i is known in closed form.
    std::vector<float> cur = {-1, 2, -3, 4, -5, 6};
    for (size_t i = 0; i < 64; ++i) {
      for (float& c : cur) c = i % 2 ? -c : std::max(c, 0.f);
      for (size_t k = 0; k < 6; ++k) EXPECT_EQ((*all)[i].data<float>()[k], cur[k]) << Describe(o) << " output " << names[i];
    }
    // A subset in another order, one name twice.
    auto some = (*s)->Run({{"x", x}}, {names[63], names[10], names[0], names[10]});
    ASSERT_TRUE(some.ok()) << Describe(o) << ": " << some.status().ToString();
    ASSERT_EQ(some->size(), 4u);
    EXPECT_EQ(std::memcmp((*some)[0].raw(), (*all)[63].raw(), 24), 0);
    EXPECT_EQ(std::memcmp((*some)[1].raw(), (*all)[10].raw(), 24), 0);
    EXPECT_EQ(std::memcmp((*some)[2].raw(), (*all)[0].raw(), 24), 0);
    EXPECT_EQ(std::memcmp((*some)[3].raw(), (*all)[10].raw(), 24), 0);
    auto bad = (*s)->Run({{"x", x}}, {"no such output"});
    EXPECT_FALSE(bad.ok());
    if (!bad.ok()) EXPECT_NE(bad.status().message().find("no such output"), std::string::npos) << bad.status().ToString();
  }
}

// Outputs that are a graph input, an initializer, a Constant's value, the
// same value twice, and a value a fusion would absorb (a Conv output that
// also feeds a Relu).
TEST(Outputs, InputsInitializersConstantsDuplicatesAndFusedValues) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 2, 4, 4});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {3, 2, 3, 3}, -1, 1);
  auto k = b.AddInitializer("k", Tensor::FromVector<float>(DType::kFloat32, {2}, {7, 8}));
  b.AddNodeWithOutputs("Constant", {}, {"c"}, {Attribute::TensorValue("value", Tensor::FromVector<float>(DType::kFloat32, {3}, {1, 2, 3}))}, "const");
  b.AddNodeWithOutputs("Conv", {x, w}, {"conv"}, {Attribute::Ints("pads", {1, 1, 1, 1})}, "conv");
  b.AddNodeWithOutputs("Relu", {"conv"}, {"relu"}, {}, "relu");
  for (const char* o : {"relu", "conv", "x", "k", "c", "relu"}) b.AddOutput(o);
  auto m = b.Build();
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ir::SeededRng rng(3);
  Tensor xv = *ir::RandomTensor(DType::kFloat32, {1, 2, 4, 4}, rng, -1, 1);
  auto ref = CreateSessionFromModel(*m);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  auto want = (*ref)->Run({{"x", xv}});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_EQ(want->size(), 6u);
  EXPECT_EQ(std::memcmp((*want)[2].raw(), xv.raw(), xv.nbytes()), 0);
  EXPECT_EQ((*want)[3].data<float>()[1], 8.f);
  EXPECT_EQ((*want)[4].data<float>()[2], 3.f);
  for (const SessionOptions& o : AllOptions()) {
    auto s = CreateSessionFromModel(*m, o);
    ASSERT_TRUE(s.ok()) << Describe(o) << ": " << s.status().ToString();
    auto got = (*s)->Run({{"x", xv}});
    ASSERT_TRUE(got.ok()) << Describe(o) << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), 6u) << Describe(o);
    for (size_t i = 0; i < 6; ++i) {
      ASSERT_EQ((*got)[i].shape(), (*want)[i].shape()) << Describe(o) << " output " << i;
      for (int64_t e = 0; e < (*want)[i].numel(); ++e)
        EXPECT_NEAR((*got)[i].GetAsDouble(e), (*want)[i].GetAsDouble(e), 1e-5) << Describe(o) << " output " << i;
      EXPECT_TRUE((*got)[i].is_contiguous()) << Describe(o) << " output " << i << " is not dense row-major";
    }
  }
}

}  // namespace
}  // namespace kiln
