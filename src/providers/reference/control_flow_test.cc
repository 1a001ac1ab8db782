// Tests of If, Loop, Scan and SequenceMap. Bodies are built from Identity
// and the sequence ops so these tests depend on nothing outside this family
// pair; expected values follow the spec's pseudo-code by hand.
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
using testing::ToInts;

ir::Node N(const std::string& op, std::vector<std::string> in, std::vector<std::string> out, std::vector<ir::Attribute> attrs = {}) {
  ir::Node n;
  n.name = op + "_" + out[0];
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  for (auto& a : attrs) n.attrs[a.name] = a;
  return n;
}

std::shared_ptr<ir::Graph> G(std::vector<std::string> ins, std::vector<std::string> outs, std::vector<ir::Node> nodes,
                             std::map<std::string, Tensor> inits = {}) {
  auto g = std::make_shared<ir::Graph>();
  g->name = "body";
  for (auto& i : ins) g->inputs.push_back({i, {}});
  for (auto& o : outs) g->outputs.push_back({o, {}});
  g->nodes = std::move(nodes);
  g->initializers = std::move(inits);
  return g;
}

Tensor Bool(std::vector<bool> v, Shape s) {
  Tensor t = Tensor::Zeros(DType::kBool, s);
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}

TEST(If, PicksBranch) {
  auto then_g = G({}, {"t"}, {N("Identity", {"a"}, {"t"})}, {{"a", F32({2}, {1, 2})}});
  auto else_g = G({}, {"e"}, {N("Identity", {"b"}, {"e"})}, {{"b", F32({3}, {7, 8, 9})}});
  std::vector<ir::Attribute> attrs = {ir::Attribute::GraphValue("then_branch", then_g), ir::Attribute::GraphValue("else_branch", else_g)};
  auto t = RunNodeDatums("If", {Bool({true}, {})}, attrs, 1, 11);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_THAT(ToFloats((*t)[0].tensor()), ElementsAre(1, 2));
  auto e = RunNodeDatums("If", {Bool({false}, {1})}, attrs, 1, 11);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_THAT(ToFloats((*e)[0].tensor()), ElementsAre(7, 8, 9));
}

TEST(If, SequenceAndOptionalOutputs) {
  auto then_g = G({}, {"s"}, {N("SequenceConstruct", {"a", "a"}, {"s"})}, {{"a", F32({1}, {5})}});
  ir::Attribute tp;
  tp.name = "type";
  tp.type = ir::Attribute::Type::kTypeProto;
  tp.tp = ir::TypeInfo::Tensor(DType::kFloat32);
  auto else_g = G({}, {"o"}, {N("Optional", {}, {"o"}, {tp})});
  std::vector<ir::Attribute> attrs = {ir::Attribute::GraphValue("then_branch", then_g), ir::Attribute::GraphValue("else_branch", else_g)};
  auto t = RunNodeDatums("If", {Bool({true}, {})}, attrs, 1, 16);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE((*t)[0].is_sequence());
  EXPECT_EQ((*t)[0].sequence().size(), 2u);
  auto e = RunNodeDatums("If", {Bool({false}, {})}, attrs, 1, 16);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_TRUE((*e)[0].is_none());
}

TEST(If, BadCondAndBranchArity) {
  auto g1 = G({}, {"t"}, {N("Identity", {"a"}, {"t"})}, {{"a", F32({1}, {1})}});
  std::vector<ir::Attribute> attrs = {ir::Attribute::GraphValue("then_branch", g1), ir::Attribute::GraphValue("else_branch", g1)};
  auto r = RunNodeDatums("If", {F32({}, {1})}, attrs, 1, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("node 'n0'"));
  auto two = RunNodeDatums("If", {Bool({true}, {})}, attrs, 2, 11);
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.status().message(), HasSubstr("then_branch"));
  auto missing = RunNodeDatums("If", {Bool({true}, {})}, {attrs[0]}, 1, 11);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("else_branch"));
}

// for (i = 0; i < M; ++i) { seq.insert(i); scan0 = i; scan1 = M (outer scope) }
TEST(Loop, ForLoopWithCarriedSequenceAndOuterScope) {
  auto body = G({"iter", "cond_in", "seq_in"}, {"cond_out", "seq_out", "it_out", "m_out"},
                {N("Identity", {"cond_in"}, {"cond_out"}), N("SequenceInsert", {"seq_in", "iter"}, {"seq_out"}),
                 N("Identity", {"iter"}, {"it_out"}), N("Identity", {"in0"}, {"m_out"})});
  auto r = RunNodeDatums("Loop", {I64({}, {3}), Datum(), Datum::Sequence({}, DType::kInt64)},
                         {ir::Attribute::GraphValue("body", body)}, 3, 13);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& seq = (*r)[0].sequence();
  ASSERT_EQ(seq.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(seq[static_cast<size_t>(i)].GetAsDouble(0), i);
  EXPECT_EQ((*r)[1].tensor().shape(), (Shape{3}));
  EXPECT_THAT(ToInts((*r)[1].tensor()), ElementsAre(0, 1, 2));
  EXPECT_EQ((*r)[2].tensor().shape(), (Shape{3}));
  EXPECT_THAT(ToInts((*r)[2].tensor()), ElementsAre(3, 3, 3));
}

TEST(Loop, ZeroTrips) {
  auto body = G({"iter", "cond_in", "v"}, {"cond_out", "v_out", "s"},
                {N("Identity", {"cond_in"}, {"cond_out"}), N("Identity", {"iter"}, {"v_out"}), N("Identity", {"iter"}, {"s"})});
  auto r = RunNodeDatums("Loop", {I64({}, {0}), Bool({true}, {}), I64({}, {42})}, {ir::Attribute::GraphValue("body", body)}, 2, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToInts((*r)[0].tensor()), ElementsAre(42));  // the initial value
  EXPECT_EQ((*r)[1].tensor().numel(), 0);
  // cond false up front: no iteration either.
  auto f = RunNodeDatums("Loop", {I64({}, {5}), Bool({false}, {}), I64({}, {42})}, {ir::Attribute::GraphValue("body", body)}, 2, 11);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_THAT(ToInts((*f)[0].tensor()), ElementsAre(42));
}

// while (cond) { cond = flags[i]; v = i; } with flags = [T, T, F]: 3 trips.
TEST(Loop, WhileLoopStopsOnBodyCondition) {
  auto body = G({"iter", "cond_in", "v"}, {"cond_out", "v_out", "s"},
                {N("SplitToSequence", {"flags"}, {"fs"}, {ir::Attribute::Int("keepdims", 0)}),
                 N("SequenceAt", {"fs", "iter"}, {"cond_out"}), N("Identity", {"iter"}, {"v_out"}), N("Identity", {"iter"}, {"s"})},
                {{"flags", Bool({true, true, false}, {3})}});
  auto r = RunNodeDatums("Loop", {Datum(), Bool({true}, {}), I64({}, {-1})}, {ir::Attribute::GraphValue("body", body)}, 2, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToInts((*r)[0].tensor()), ElementsAre(2));
  EXPECT_THAT(ToInts((*r)[1].tensor()), ElementsAre(0, 1, 2));
  // With M = 2 the trip count wins.
  auto m = RunNodeDatums("Loop", {I64({}, {2}), Bool({true}, {}), I64({}, {-1})}, {ir::Attribute::GraphValue("body", body)}, 2, 11);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_THAT(ToInts((*m)[1].tensor()), ElementsAre(0, 1));
}

TEST(Loop, Errors) {
  auto body = G({"iter", "cond_in"}, {"cond_out"}, {N("Identity", {"cond_in"}, {"cond_out"})});
  auto r = RunNodeDatums("Loop", {I64({}, {2}), Bool({true}, {}), I64({}, {1})}, {ir::Attribute::GraphValue("body", body)}, 1, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("node 'n0'"));
  EXPECT_THAT(r.status().message(), HasSubstr("body takes"));
  auto m = RunNodeDatums("Loop", {F32({}, {2}), Bool({true}, {})}, {ir::Attribute::GraphValue("body", body)}, 0, 11);
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("M must be"));
}

// Scan 9+: state = last slice seen, scan output = slice.
std::shared_ptr<ir::Graph> LastSliceBody() {
  return G({"st", "x"}, {"st_out", "y"}, {N("Identity", {"x"}, {"st_out"}), N("Identity", {"x"}, {"y"})});
}

TEST(Scan, ForwardAndReverseInput) {
  Tensor x = F32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor st = F32({2}, {0, 0});
  auto f = RunNodeDatums("Scan", {st, x}, {ir::Attribute::GraphValue("body", LastSliceBody()), ir::Attribute::Int("num_scan_inputs", 1)}, 2, 11);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_THAT(ToFloats((*f)[0].tensor()), ElementsAre(5, 6));
  EXPECT_EQ((*f)[1].tensor().shape(), (Shape{3, 2}));
  EXPECT_THAT(ToFloats((*f)[1].tensor()), ElementsAre(1, 2, 3, 4, 5, 6));
  auto r = RunNodeDatums("Scan", {st, x},
                         {ir::Attribute::GraphValue("body", LastSliceBody()), ir::Attribute::Int("num_scan_inputs", 1),
                          ir::Attribute::Ints("scan_input_directions", {1})}, 2, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToFloats((*r)[0].tensor()), ElementsAre(1, 2));
  EXPECT_THAT(ToFloats((*r)[1].tensor()), ElementsAre(5, 6, 3, 4, 1, 2));
}

TEST(Scan, AxesAndOutputDirection) {
  Tensor x = F32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor st = F32({3}, {0, 0, 0});
  // Scan over axis 1 (columns [1,3,5] then [2,4,6]); stack outputs on axis 1.
  auto r = RunNodeDatums("Scan", {st, x},
                         {ir::Attribute::GraphValue("body", LastSliceBody()), ir::Attribute::Int("num_scan_inputs", 1),
                          ir::Attribute::Ints("scan_input_axes", {-1}), ir::Attribute::Ints("scan_output_axes", {1}),
                          ir::Attribute::Ints("scan_output_directions", {1})}, 2, 11);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToFloats((*r)[0].tensor()), ElementsAre(2, 4, 6));
  // Outputs reversed: iteration 1 ([2,4,6]) goes first along axis 1.
  EXPECT_EQ((*r)[1].tensor().shape(), (Shape{3, 2}));
  EXPECT_THAT(ToFloats((*r)[1].tensor()), ElementsAre(2, 1, 4, 3, 6, 5));
}

TEST(Scan, Opset8BatchAndSequenceLens) {
  Tensor x = F32({2, 3, 1}, {1, 2, 3, 4, 5, 6});
  Tensor st = F32({2, 1}, {0, 0});
  auto r = RunNodeDatums("Scan", {I64({2}, {3, 2}), st, x},
                         {ir::Attribute::GraphValue("body", LastSliceBody()), ir::Attribute::Int("num_scan_inputs", 1)}, 2, 8);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToFloats((*r)[0].tensor()), ElementsAre(3, 5));
  EXPECT_EQ((*r)[1].tensor().shape(), (Shape{2, 3, 1}));
  EXPECT_THAT(ToFloats((*r)[1].tensor()), ElementsAre(1, 2, 3, 4, 5, 0));  // batch 1 stops after 2 steps
  auto rev = RunNodeDatums("Scan", {Tensor(), st, x},
                           {ir::Attribute::GraphValue("body", LastSliceBody()), ir::Attribute::Int("num_scan_inputs", 1),
                            ir::Attribute::Ints("directions", {1})}, 2, 8);
  ASSERT_TRUE(rev.ok()) << rev.status().ToString();
  EXPECT_THAT(ToFloats((*rev)[0].tensor()), ElementsAre(1, 4));
  EXPECT_THAT(ToFloats((*rev)[1].tensor()), ElementsAre(3, 2, 1, 6, 5, 4));
}

TEST(Scan, Errors) {
  Tensor st = F32({2}, {0, 0});
  auto r = RunNodeDatums("Scan", {st, F32({3, 2}, {}), F32({4, 2}, {})},
                         {ir::Attribute::GraphValue("body", LastSliceBody()), ir::Attribute::Int("num_scan_inputs", 2)}, 2, 11);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("node 'n0'"));
  auto noattr = RunNodeDatums("Scan", {st, F32({3, 2}, {})}, {ir::Attribute::GraphValue("body", LastSliceBody())}, 2, 11);
  ASSERT_FALSE(noattr.ok());
  EXPECT_THAT(noattr.status().message(), HasSubstr("num_scan_inputs"));
}

TEST(SequenceMap, SequenceAndTensorInputs) {
  // body(x, t) = (Concat([x, t]), x)
  auto body = G({"x", "t"}, {"c", "xo"},
                {N("SequenceConstruct", {"x", "t"}, {"s"}), N("ConcatFromSequence", {"s"}, {"c"}, {ir::Attribute::Int("axis", 0)}),
                 N("Identity", {"x"}, {"xo"})});
  Datum seq = Datum::Sequence({F32({1}, {1}), F32({2}, {2, 3})});
  auto r = RunNodeDatums("SequenceMap", {seq, F32({1}, {9})}, {ir::Attribute::GraphValue("body", body)}, 2, 17);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ((*r)[0].sequence().size(), 2u);
  EXPECT_THAT(ToFloats((*r)[0].sequence()[0]), ElementsAre(1, 9));
  EXPECT_THAT(ToFloats((*r)[0].sequence()[1]), ElementsAre(2, 3, 9));
  EXPECT_THAT(ToFloats((*r)[1].sequence()[1]), ElementsAre(2, 3));
  // Two sequences go element by element.
  Datum seq2 = Datum::Sequence({F32({1}, {5}), F32({1}, {6})});
  auto two = RunNodeDatums("SequenceMap", {seq, seq2}, {ir::Attribute::GraphValue("body", body)}, 2, 17);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_THAT(ToFloats((*two)[0].sequence()[1]), ElementsAre(2, 3, 6));
  Datum seq3 = Datum::Sequence({F32({1}, {5})});
  auto bad = RunNodeDatums("SequenceMap", {seq, seq3}, {ir::Attribute::GraphValue("body", body)}, 2, 17);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("node 'n0'"));
}

}  // namespace
}  // namespace kiln
