// Tests of the basic passes (fold_constants, eliminate_dead_code,
// remove_identity, fold_shape) and of simplify_transpose_reshape: each a
// small model in, the ops out, and the same outputs on the reference
// provider before and after. Fusions: passes_fusion_test.cc; whole models:
// passes_model_test.cc.
#include "passes/pass_test_util.h"

namespace kiln::passes::testing {
namespace {

using ir::Attribute;

Tensor F32(const Shape& s, const std::vector<float>& v) { return Tensor::FromVector<float>(DType::kFloat32, s, v); }
Tensor I64(const Shape& s, const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>(DType::kInt64, s, v); }
std::string Constant(ir::GraphBuilder& b, Tensor t) { return b.AddNode("Constant", {}, {Attribute::TensorValue("value", t)}); }

// ------------------------------------------------------------ fold_constants

TEST(PassesFoldConstants, FoldsConstantSubgraphsAndConstantNodes) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3});
  auto c1 = Constant(b, F32({3}, {1, 2, 3}));
  auto c2 = Constant(b, F32({3}, {0.5f, -1, 4}));
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {3}, -1, 1);
  auto s = b.AddNode("Add", {c1, c2});
  auto t = b.AddNode("Mul", {s, w});
  auto e = b.AddNode("Exp", {t});
  b.AddOutput(b.AddNode("Add", {x, e}));
  const ir::Model m = BuildOrDie(b);
  ir::Model opt = ExpectRewrite(m, OptLevel::kBasic, {"Add"});
  EXPECT_EQ(opt.graph.initializers.size(), 1u);  // only the folded exp(...), the rest is dead
}

TEST(PassesFoldConstants, ConstantThatIsAGraphOutputStaysAnOutput) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{3});
  auto c = Constant(b, F32({3}, {1, 2, 3}));
  b.AddOutput(b.AddNode("Mul", {x, c}));
  b.AddOutput(c);
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Mul"});
  EXPECT_TRUE(opt.graph.IsInitializer(c));
}

TEST(PassesFoldConstants, FeedableInitializerIsNotConstant) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{3});
  auto scale = b.AddInitializer("scale", F32({3}, {2, 2, 2}));
  b.graph().inputs.push_back({scale, ir::TypeInfo::Tensor(DType::kFloat32, ir::DimsFromShape({3}))});  // a default the user may override
  auto s2 = b.AddNode("Add", {scale, scale});
  b.AddOutput(b.AddNode("Mul", {x, s2}));
  const ir::Model m = BuildOrDie(b);
  ir::Model opt = ExpectRewrite(m, OptLevel::kBasic, {"Add", "Mul"});
  // Fed another scale, both still agree.
  auto feeds = SeededInputs(m, 1);
  feeds["scale"] = F32({3}, {-1, 0.5f, 3});
  ExpectSameOutputs(m, opt, feeds);
}

TEST(PassesFoldConstants, RandomOpsAreNotFolded) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 2});
  auto r = b.AddNode("RandomUniform", {}, {Attribute::Ints("shape", {2, 2}), Attribute::Float("seed", 3)});
  b.AddOutput(b.AddNode("Add", {x, r}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"RandomUniform", "Add"});
}

TEST(PassesFoldConstants, ConstantFormsOtherThanValue) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kInt64, Shape{3});
  auto c = b.AddNode("Constant", {}, {Attribute::Ints("value_ints", {4, 5, 6})});
  b.AddOutput(b.AddNode("Add", {x, c}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Add"});
}

// -------------------------------------------------------- eliminate_dead_code

TEST(PassesEliminateDeadCode, RemovesUnreadNodesAndInitializers) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{4});
  auto unused_w = b.AddRandomInitializer("unused_w", DType::kFloat32, {4}, -1, 1);
  auto dead = b.AddNode("Relu", {x});
  b.AddNode("Mul", {dead, unused_w});
  b.AddOutput(b.AddNode("Sigmoid", {x}));
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Sigmoid"});
  EXPECT_FALSE(opt.graph.IsInitializer(unused_w));
}

TEST(PassesEliminateDeadCode, KeepsValuesReadBySubgraphs) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2});
  auto cond = b.AddInput("cond", DType::kBool, Shape{});
  auto r = b.AddNode("Relu", {x});  // read only inside the branches
  auto branch = [&](const char* op) {
    auto g = std::make_shared<ir::Graph>();
    g->name = op;
    ir::Node n;
    n.name = std::string(op) + "_n";
    n.op_type = op;
    n.inputs = {r};
    n.outputs = {std::string(op) + "_out"};
    g->nodes.push_back(n);
    g->outputs.push_back({n.outputs[0], {}});
    return g;
  };
  auto y = b.AddNode("If", {cond}, {Attribute::GraphValue("then_branch", branch("Neg")), Attribute::GraphValue("else_branch", branch("Abs"))});
  b.AddOutput(y);
  const ir::Model m = BuildOrDie(b);
  ir::Model opt = ExpectRewrite(m, OptLevel::kBasic, {"Relu", "If"});
  auto feeds = SeededInputs(m, 3);
  feeds["cond"] = Tensor::FromVector<bool>(DType::kBool, {}, std::vector<bool>{true});
  ExpectSameOutputs(m, opt, feeds);
}

// ------------------------------------------------------------ remove_identity

TEST(PassesRemoveIdentity, BypassesIdentityAndInferenceDropout) {
  ir::GraphBuilder b(13);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3});
  auto r = b.AddNode("Relu", {x});
  auto i = b.AddNode("Identity", {r});
  auto d = b.AddNode("Dropout", {i, Constant(b, F32({}, {0.3f}))});
  auto no_train = Constant(b, Tensor::FromVector<bool>(DType::kBool, {}, std::vector<bool>{false}));
  auto d2 = b.AddNode("Dropout", {d, "", no_train});
  b.AddOutput(b.AddNode("Sigmoid", {d2}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Relu", "Sigmoid"});
}

TEST(PassesRemoveIdentity, GraphOutputKeepsItsName) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{3});
  auto r = b.AddNode("Relu", {x});
  auto n = b.AddNode("Neg", {r});
  b.AddNodeWithOutputs("Identity", {r}, {"y"});
  b.AddOutput("y");
  b.AddOutput(n);
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Relu", "Neg"});
  EXPECT_EQ(opt.graph.nodes[0].outputs[0], "y");  // the producer took the output's name
  EXPECT_EQ(opt.graph.nodes[1].inputs[0], "y");
}

TEST(PassesRemoveIdentity, IdentityBetweenGraphInputAndOutputStays) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{3});
  b.AddNodeWithOutputs("Identity", {x}, {"y"});
  b.AddOutput("y");
  auto r = b.AddNode("Relu", {x});
  b.AddNodeWithOutputs("Identity", {r}, {"z"});  // both r and z are outputs: z cannot be renamed
  b.AddOutput(r);
  b.AddOutput("z");
  ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Identity", "Relu", "Identity"});
}

TEST(PassesRemoveIdentity, TrainingDropoutStays) {
  ir::GraphBuilder b(13);
  auto x = b.AddInput("x", DType::kFloat32, Shape{4, 4});
  auto train = Constant(b, Tensor::FromVector<bool>(DType::kBool, {}, std::vector<bool>{true}));
  auto d = b.AddNode("Dropout", {x, Constant(b, F32({}, {0.5f})), train}, {Attribute::Int("seed", 5)});
  b.AddOutput(b.AddNode("Relu", {d}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Dropout", "Relu"});
}

TEST(PassesRemoveIdentity, DropoutWithUsedMaskStays) {
  ir::GraphBuilder b(13);
  auto x = b.AddInput("x", DType::kFloat32, Shape{4});
  auto outs = b.AddNode("Dropout", {x}, {}, 2);
  b.AddOutput(b.AddNode("Relu", {outs[0]}));
  b.AddOutput(outs[1]);
  ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Dropout", "Relu"});
}

TEST(PassesRemoveIdentity, OldOpsetDropoutIsTestAttribute) {
  ir::GraphBuilder b(6);
  auto x = b.AddInput("x", DType::kFloat32, Shape{4});
  auto test = b.AddNode("Dropout", {x}, {Attribute::Int("is_test", 1)});
  auto train = b.AddNode("Dropout", {test}, {Attribute::Int("is_test", 0)});
  b.AddOutput(b.AddNode("Relu", {train}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Dropout", "Relu"});
}

// ----------------------------------------------------------------- fold_shape

TEST(PassesFoldShape, StaticShapeChainFolds) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3, 4, 5});
  auto shape = b.AddNode("Shape", {x});
  auto head = b.AddNode("Slice", {shape, b.AddInitializer("st", I64({1}, {0})), b.AddInitializer("en", I64({1}, {2}))});
  auto target = b.AddNode("Concat", {head, b.AddInitializer("m1", I64({1}, {-1}))}, {Attribute::Int("axis", 0)});
  b.AddOutput(b.AddNode("Reshape", {x, target}));
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Reshape"});
  EXPECT_TRUE(opt.graph.IsInitializer(opt.graph.nodes[0].inputs[1]));
}

TEST(PassesFoldShape, KnownDimOfDynamicShapeFolds) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3), ir::Dim::Known(4)});
  auto shape = b.AddNode("Shape", {x});
  auto c = b.AddNode("Gather", {shape, b.AddInitializer("one", I64({}, {1}))}, {Attribute::Int("axis", 0)});
  auto n = b.AddNode("Gather", {shape, b.AddInitializer("zero", I64({}, {0}))}, {Attribute::Int("axis", 0)});
  auto cf = b.AddNode("Cast", {c}, {Attribute::Int("to", 1)});
  auto nf = b.AddNode("Cast", {n}, {Attribute::Int("to", 1)});
  b.AddOutput(b.AddNode("Add", {b.AddNode("Mul", {x, cf}), nf}));
  // Shape[1] = 3 folds (and its Cast); Shape[0] is the batch and stays.
  ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Shape", "Gather", "Cast", "Mul", "Add"}, {{"x", {2, 3, 4}}});
}

TEST(PassesFoldShape, ShapeStartEndAttributes) {
  ir::GraphBuilder b(15);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(6), ir::Dim::Known(2)});
  auto tail = b.AddNode("Shape", {x}, {Attribute::Int("start", -2)});
  b.AddOutput(b.AddNode("Reshape", {x, b.AddNode("Concat", {b.AddInitializer("m1", I64({1}, {-1})), tail}, {Attribute::Int("axis", 0)})}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kBasic, {"Reshape"}, {{"x", {3, 6, 2}}});
}

// ------------------------------------------------- simplify_transpose_reshape

TEST(PassesSimplifyTransposeReshape, InverseTransposesVanish) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 2, 3, 4});
  auto t1 = b.AddNode("Transpose", {x}, {Attribute::Ints("perm", {0, 2, 3, 1})});
  auto t2 = b.AddNode("Transpose", {t1}, {Attribute::Ints("perm", {0, 3, 1, 2})});
  b.AddOutput(b.AddNode("Relu", {t2}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Relu"});
}

TEST(PassesSimplifyTransposeReshape, TransposesCompose) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3, 4});
  auto t1 = b.AddNode("Transpose", {x}, {Attribute::Ints("perm", {1, 2, 0})});
  auto t2 = b.AddNode("Transpose", {t1});  // no perm: reversed axes
  b.AddOutput(b.AddNode("Transpose", {t2}, {Attribute::Ints("perm", {1, 0, 2})}));
  ir::Model opt = ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Transpose"});
  EXPECT_EQ(*opt.graph.nodes[0].GetInts("perm"), (std::vector<int64_t>{2, 0, 1}));
}

TEST(PassesSimplifyTransposeReshape, TransposeWithTwoReadersStays) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3});
  auto t1 = b.AddNode("Transpose", {x}, {Attribute::Ints("perm", {1, 0})});
  b.AddOutput(b.AddNode("Transpose", {t1}, {Attribute::Ints("perm", {1, 0})}));
  b.AddOutput(b.AddNode("Relu", {t1}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Transpose", "Transpose", "Relu"});
}

TEST(PassesSimplifyTransposeReshape, ReshapeChainsMergeAndIdentityReshapeGoes) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{2, 3, 4});
  auto r1 = b.AddNode("Reshape", {x, b.AddInitializer("s1", I64({2}, {6, 4}))});
  auto r2 = b.AddNode("Reshape", {r1, b.AddInitializer("s2", I64({3}, {4, -1, 2}))});
  auto r3 = b.AddNode("Reshape", {r2, b.AddInitializer("s3", I64({3}, {0, 3, 2}))});  // 0 copies a dim: [4,3,2] again
  b.AddOutput(b.AddNode("Relu", {r3}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Reshape", "Relu"});
}

TEST(PassesSimplifyTransposeReshape, ReshapeOfDynamicValueWithZeroStays) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(6)});
  auto r1 = b.AddNode("Reshape", {x, b.AddInitializer("s1", I64({3}, {0, 2, 3}))});
  auto r2 = b.AddNode("Reshape", {r1, b.AddInitializer("s2", I64({3}, {0, 3, 2}))});  // 0 = r1's N
  b.AddOutput(b.AddNode("Relu", {r2}));
  ExpectRewrite(BuildOrDie(b), OptLevel::kExtended, {"Reshape", "Reshape", "Relu"}, {{"x", {2, 6}}});
}

// ------------------------------------------------------------------- pipeline

TEST(PassesPipeline, DisableChangesNothingAndReportsNothing) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{3});
  b.AddOutput(b.AddNode("Identity", {b.AddNode("Relu", {x})}));
  const ir::Model m = BuildOrDie(b);
  PassReport report;
  ir::Model opt = Optimized(m, OptLevel::kDisable, &report);
  EXPECT_EQ(Ops(opt), Ops(m));
  EXPECT_TRUE(report.notes.empty());
}

TEST(PassesPipeline, EveryPassNotesWhatItDid) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 2, 4, 4});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {2, 2, 1, 1}, -1, 1);
  auto y = b.AddNode("Relu", {b.AddNode("Conv", {b.AddNode("Identity", {x}), w})});
  b.AddOutput(b.AddNode("Add", {y, b.AddNode("Neg", {Constant(b, F32({1}, {1}))})}));
  PassReport report;
  Optimized(BuildOrDie(b), OptLevel::kAll, &report);
  const std::string text = ReportText(report);
  for (const char* pass : {"fold_constants", "remove_identity", "eliminate_dead_code", "fuse_conv_activation"})
    EXPECT_NE(text.find(pass), std::string::npos) << pass << " missing from:\n" << text;
}

TEST(PassesPipeline, BrokenGraphIsLeftToTheExecutor) {
  ir::Model m;
  m.opsets[""] = 17;
  ir::Node n;
  n.name = "a";
  n.op_type = "Relu";
  n.inputs = {"b_out"};
  n.outputs = {"a_out"};
  ir::Node n2 = n;
  n2.name = "b";
  n2.inputs = {"a_out"};
  n2.outputs = {"b_out"};
  m.graph.nodes = {n, n2};
  m.graph.outputs.push_back({"a_out", {}});
  EXPECT_TRUE(Optimize(m, OptLevel::kAll).ok());
  EXPECT_EQ(m.graph.nodes.size(), 2u);
  EXPECT_FALSE(CreateSessionFromModel(m).ok());
}

}  // namespace
}  // namespace kiln::passes::testing
