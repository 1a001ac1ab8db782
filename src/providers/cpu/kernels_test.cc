// The cpu provider's elementwise, Transpose, Concat, Split, Slice and Resize kernels
// against the reference provider, on every layout each kernel accepts. An
// op's inputs arrive either row-major (NCHW graph inputs) or channels-last:
// an NHWC graph input behind a Transpose(0,3,1,2), which the cpu provider
// turns into a zero-copy channels-last view (the situation of kiln's
// motivating Resize bug). Each case checks that the layout really was the
// one intended (no conversion planned in front of the op) and that the op
// ran on cpu.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/builder.h"
#include "runtime/session_internal.h"

namespace kiln {
namespace {

using ir::Attribute;

enum class In { kNCHW, kNHWC };

struct Operand {
  Shape shape;       // logical (NCHW) shape
  In layout = In::kNCHW;  // kNHWC: fed as NHWC and transposed inside the graph (rank 4 only)
  bool constant = false;  // an initializer instead of an input
};

struct Case {
  std::string what;
  std::string op;
  std::vector<Operand> inputs;
  std::vector<Attribute> attrs;
  std::vector<std::pair<size_t, Tensor>> const_inputs;  // extra constant inputs by slot (scales, bounds)
  int64_t opset = 17;
  // The op's output goes through a Relu (which reads any dense layout)
  // before the graph output, instead of being the graph output itself: a
  // kernel may write a graph output straight in row-major order.
  bool followed = false;
  std::string domain;  // of the op (com.kiln for a fused op: imported at version 1)
  int outputs = 1;     // all of them graph outputs (each followed, with `followed`)
  DType dtype = DType::kFloat32;  // of the inputs (the constant inputs keep theirs)
};

struct Built {
  ir::Model model;
  std::map<std::string, Tensor> feeds;
  std::string op_node = "op";
};

Built Build(const Case& c) {
  ir::GraphBuilder b(c.opset, "main", 7);
  ir::SeededRng rng(11);
  Built r;
  size_t slots = c.inputs.size();
  for (const auto& [slot, t] : c.const_inputs) slots = std::max(slots, slot + 1);
  std::vector<std::string> ins(slots);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Operand& o = c.inputs[i];
    const std::string name = "in" + std::to_string(i);
    Tensor v = *ir::RandomTensor(c.dtype, o.shape, rng, c.dtype == DType::kUint8 ? 0 : -3, c.dtype == DType::kUint8 ? 255 : 3);
    if (o.constant) {
      ins[i] = b.AddInitializer(name, v);
    } else if (o.layout == In::kNHWC) {
      const Shape nhwc = {o.shape[0], o.shape[2], o.shape[3], o.shape[1]};
      auto x = b.AddInput(name, c.dtype, nhwc);
      r.feeds[name] = v.Permuted({0, 2, 3, 1}).Contiguous();
      ins[i] = b.AddNode("Transpose", {x}, {Attribute::Ints("perm", {0, 3, 1, 2})}, 1, "t" + std::to_string(i))[0];
    } else {
      ins[i] = b.AddInput(name, c.dtype, o.shape);
      r.feeds[name] = v;
    }
  }
  for (const auto& [slot, t] : c.const_inputs) ins[slot] = b.AddInitializer("c" + std::to_string(slot), t);
  if (!c.domain.empty()) b.SetOpset(c.domain, 1);
  const std::vector<std::string> ys = b.AddNode(c.op, ins, c.attrs, c.outputs, "op", c.domain);
  for (size_t i = 0; i < ys.size(); ++i) b.AddOutput(c.followed ? b.AddNode("Relu", {ys[i]}, {}, 1, "after" + std::to_string(i))[0] : ys[i]);
  auto m = b.Build();
  EXPECT_TRUE(m.ok()) << c.what << ": " << m.status().ToString();
  r.model = std::move(m).value();
  return r;
}

// The model on the cpu provider without passes: the op runs as built.
Result<std::unique_ptr<Session>> CpuSession(const ir::Model& m) {
  SessionOptions o;
  o.provider = "cpu";
  o.opt_level = "disable";
  return CreateSessionFromModel(m, o);
}

void Check(const Case& c, double atol = 1e-5, double rtol = 1e-5) {
  SCOPED_TRACE(c.what);
  Built b = Build(c);
  auto ref = CreateSessionFromModel(b.model);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  auto cpu = CpuSession(b.model);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  const runtime::Executor& ex = *(*cpu)->impl().executor;
  const auto& nodes = ex.model().graph.nodes;
  size_t op_index = nodes.size();
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == "op") op_index = i;
  ASSERT_LT(op_index, nodes.size());
  EXPECT_EQ(ex.node_providers()[op_index], "cpu") << "fell back to the reference";
  // The op must receive the layouts the case intends: no conversion in front of it.
  plan::LayoutPlan lp = ex.PlanLayouts();
  for (const auto& conv : lp.conversions)
    EXPECT_NE(conv.node, op_index) << "a conversion of '" << conv.value << "' to " << OrderName(conv.to, conv.rank) << " was planned";
  auto want = (*ref)->Run(b.feeds);
  auto got = (*cpu)->Run(b.feeds);
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), want->size());
  for (size_t o = 0; o < want->size(); ++o) {
    const Tensor& e = (*want)[o];
    const Tensor& a = (*got)[o];
    ASSERT_EQ(a.shape(), e.shape()) << "output " << o;
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < e.numel(); ++i) {
      const double x = a.GetAsDouble(i), y = e.GetAsDouble(i);
      const bool ok = (std::isnan(x) && std::isnan(y)) || x == y || std::fabs(x - y) <= atol + rtol * std::fabs(y);  // x == y: infinities
      if (!ok && bad++ == 0) first = i;
    }
    EXPECT_EQ(bad, 0) << "output " << o << ": " << bad << " of " << e.numel() << " differ; first at " << first << ": cpu "
                      << a.GetAsDouble(first) << " reference " << e.GetAsDouble(first);
  }
}

const Shape kX = {2, 5, 6, 7};

TEST(CpuElementwise, BinaryOpsBroadcastOnBothLayouts) {
  const std::vector<Shape> others = {{2, 5, 6, 7}, {1, 5, 1, 1}, {5, 1, 1}, {}, {7}, {1, 1, 6, 7}, {2, 1, 6, 1}};
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    for (In layout : {In::kNCHW, In::kNHWC})
      for (const Shape& s : others)
        for (bool swap : {false, true}) {
          Operand big{kX, layout}, small{s, In::kNCHW, true};
          if (s == kX) small = {s, layout};  // both channels-last, or both row-major
          Case c{std::string(op) + (layout == In::kNHWC ? " NHWC " : " NCHW ") + ShapeToString(s) + (swap ? " swapped" : ""),
                 op,
                 swap ? std::vector<Operand>{small, big} : std::vector<Operand>{big, small}};
          Check(c);
        }
}

// Over kParallelMin values the walk is cut into parts spread over the
// threads: a flat same-layout Add (16384-value parts), a per-channel Mul
// on channels-last data (grouped short runs) and a per-pixel one.
TEST(CpuElementwise, LargeMapsSplitAcrossThreads) {
  const Shape big = {2, 8, 96, 96};
  for (In layout : {In::kNCHW, In::kNHWC}) {
    const std::string l = layout == In::kNHWC ? " NHWC" : " NCHW";
    Check({"Add of large maps" + l, "Add", {{big, layout}, {big, layout}}});
    Check({"Mul by a per-channel scale" + l, "Mul", {{big, layout}, {{1, 8, 1, 1}, In::kNCHW, true}}});
    Check({"Sub of a per-pixel map" + l, "Sub", {{big, layout}, {{1, 1, 96, 96}, In::kNCHW, true}}});
  }
}

TEST(CpuElementwise, MixedLayoutsOfFullShapeOperands) {
  Check({"Add NHWC + NCHW", "Add", {{kX, In::kNHWC}, {kX, In::kNCHW}}});
  Check({"Mul NCHW * NHWC", "Mul", {{kX, In::kNCHW}, {kX, In::kNHWC}}});
}

TEST(CpuElementwise, PReluPerChannelSlope) {
  for (In layout : {In::kNCHW, In::kNHWC}) Check({"PRelu", "PRelu", {{kX, layout}, {{5, 1, 1}, In::kNCHW, true}}});
}

TEST(CpuElementwise, UnaryOpsOnBothLayouts) {
  const std::vector<std::pair<std::string, std::vector<Attribute>>> ops = {
      {"Relu", {}}, {"Sigmoid", {}}, {"Tanh", {}}, {"Exp", {}}, {"HardSwish", {}}, {"Neg", {}}, {"Abs", {}},
      {"LeakyRelu", {Attribute::Float("alpha", 0.3f)}}, {"HardSigmoid", {Attribute::Float("alpha", 0.25f), Attribute::Float("beta", 0.4f)}},
  };
  for (const auto& [op, attrs] : ops)
    for (In layout : {In::kNCHW, In::kNHWC}) Check({op + (layout == In::kNHWC ? " NHWC" : " NCHW"), op, {{kX, layout}}, attrs});
  // Sqrt on the positive half only is covered by Abs first; here the NaN path of negatives must match too.
  for (In layout : {In::kNCHW, In::kNHWC}) Check({"Sqrt", "Sqrt", {{kX, layout}}});
  for (In layout : {In::kNCHW, In::kNHWC})
    Check({"Clip 0..6", "Clip", {{kX, layout}}, {}, {{1, Tensor::Scalar(-0.5f)}, {2, Tensor::Scalar(1.5f)}}});
}

TEST(CpuElementwise, ExpAndSigmoidOverTheFloatRange) {
  // Large magnitudes saturate as the reference's do (inf / 0, 1 / 0).
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{8});
  b.AddOutput(b.AddNode("Exp", {x}, {}, 1, "op")[0]);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  SessionOptions o;
  o.provider = "cpu";
  auto cpu = CreateSessionFromModel(*m, o);
  ASSERT_TRUE(cpu.ok());
  // NaN stays NaN (and never reaches ExpF's float-to-int step, which UBSan flagged).
  std::vector<float> in = {-200.f, -87.f, -10.f, -1e-3f, 0.f, 1.f, 88.f, std::nanf("")};
  auto got = (*cpu)->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {8}, in)}});
  ASSERT_TRUE(got.ok());
  for (size_t i = 0; i < in.size(); ++i) {
    const double want = std::exp(static_cast<double>(in[i]));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan((*got)[0].GetAsDouble(static_cast<int64_t>(i))));
      continue;
    }
    const double v = (*got)[0].GetAsDouble(static_cast<int64_t>(i));
    if (std::isinf(static_cast<float>(want))) EXPECT_TRUE(std::isinf(v)) << in[i];
    else EXPECT_NEAR(v, want, 2e-7 * want + 1e-38) << in[i];
  }
}

TEST(CpuElementwise, PowSquareAndGeneralExponent) {
  for (In layout : {In::kNCHW, In::kNHWC}) {
    Check({"Pow 2", "Pow", {{kX, layout}}, {}, {{1, Tensor::Scalar(2.f)}}});
    Check({"Pow 3", "Pow", {{kX, layout}}, {}, {{1, Tensor::Scalar(3.f)}}}, 1e-5, 1e-6);
    Check({"Pow 0.5 (NaN for negatives)", "Pow", {{kX, layout}}, {}, {{1, Tensor::Scalar(0.5f)}}});
  }
}

// A FusedElementwise case: `steps` with their operands (ops/fused.h) over `inputs`.
Case Fused(const std::string& what, std::vector<Operand> inputs, const std::vector<std::string>& steps,
           const std::vector<int64_t>& operands, std::vector<float> params = {}) {
  params.resize(2 * steps.size(), 0.f);
  Case c{what, "FusedElementwise", std::move(inputs)};
  c.domain = "com.kiln";
  c.attrs = {Attribute::Strings("steps", steps), Attribute::Ints("step_inputs", operands), Attribute::Floats("step_params", params)};
  return c;
}

TEST(CpuFusedElementwise, ScaledResidualChainOnEveryLayoutMix) {
  // PP-OCR det's x + x * s + r, s per channel: 24 channels on channels-last
  // data make runs of 24 values, grouped 21 pixels to a chunk (35 pixels:
  // a full group and a partial one); 64 channels make groups of 8.
  for (int64_t c : {24, 64})
    for (In x : {In::kNCHW, In::kNHWC})
      for (In r : {In::kNCHW, In::kNHWC}) {
        const Shape full = {1, c, 5, 7};
        Check(Fused("x + x*s + r, C=" + std::to_string(c) + (x == In::kNHWC ? " x NHWC" : " x NCHW") + (r == In::kNHWC ? " r NHWC" : " r NCHW"),
                    {{full, x}, {{1, c, 1, 1}, In::kNCHW, true}, {full, r}}, {"Mul", "Add", "Add"}, {0, 1, 0, -1, -2, 2}));
      }
}

TEST(CpuFusedElementwise, EveryStepOpAndLongRuns) {
  // 2x8x40x40 on one layout is one flat run of 25600 values, cut into chunks.
  const Shape big = {2, 8, 40, 40};
  for (In layout : {In::kNCHW, In::kNHWC}) {
    const std::string l = layout == In::kNHWC ? " NHWC" : " NCHW";
    Check(Fused("binary ops" + l, {{big, layout}, {big, layout}, {{}, In::kNCHW, true}},
                {"Sub", "Mul", "Div", "Max", "Min", "Add"}, {0, 1, -1, 2, -2, 1, -3, 0, -4, 2, -5, 1}));
    Check(Fused("activations" + l, {{big, layout}, {{1, 8, 1, 1}, In::kNCHW, true}},
                {"LeakyRelu", "HardSigmoid", "Mul", "Sigmoid", "Tanh", "HardSwish", "Relu", "Neg"},
                {0, -1, -2, 1, -3, -4, -5, -6, -7}, {0.3f, 0, 0.25f, 0.4f}));
    Check(Fused("exp abs sqrt" + l, {{big, layout}}, {"Abs", "Sqrt", "Exp"}, {0, -1, -2}));
    Check(Fused("sqrt of negatives gives NaN" + l, {{big, layout}}, {"Neg", "Sqrt"}, {0, -1}));
  }
}

TEST(CpuFusedElementwise, BroadcastOperandsAndStridedUnaryInput) {
  // A step whose operands both broadcast (a per channel, b per pixel) is
  // computed at the output's shape; a unary step reads an input in another
  // layout than the output's (its run is gathered first).
  const Shape full = {2, 5, 6, 7};
  Check(Fused("a*b + x", {{full, In::kNCHW}, {{1, 5, 1, 1}, In::kNCHW, true}, {{1, 1, 6, 7}, In::kNCHW, true}},
              {"Mul", "Add"}, {1, 2, 0, -1}));
  Check(Fused("x NCHW + sigmoid(y NHWC)", {{full, In::kNCHW}, {full, In::kNHWC}}, {"Sigmoid", "Add"}, {1, 0, -1}));
  Check(Fused("x NHWC + sigmoid(y NCHW)", {{full, In::kNHWC}, {full, In::kNCHW}}, {"Sigmoid", "Add"}, {1, 0, -1}));
}

TEST(CpuFusedElementwise, TooManyInputsRunsAsTheComposition) {
  // Seven inputs (more than the fused loop takes): the cpu kernels of the
  // steps run one after another, still on the cpu provider.
  const Shape full = {1, 4, 3, 5};
  std::vector<Operand> in(7, Operand{full, In::kNHWC});
  Check(Fused("seven inputs", in, {"Add", "Add", "Add", "Add", "Add", "Add"}, {0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6}));
}

TEST(CpuShape, ShapeAndSizeTakeAnyLayoutWithoutAConversion) {
  for (In layout : {In::kNCHW, In::kNHWC}) {
    const std::string l = layout == In::kNHWC ? " NHWC" : " NCHW";
    Check({"Shape" + l, "Shape", {{kX, layout}}});
    Case part{"Shape start=1 end=-1" + l, "Shape", {{kX, layout}}, {Attribute::Int("start", 1), Attribute::Int("end", -1)}};
    part.opset = 15;
    Check(part);
    Check({"Size" + l, "Size", {{kX, layout}}});
  }
}

TEST(CpuSoftmax, EveryAxisAndOldOpsets) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {-1, 0, 1, 2, 3}) Check({std::string(op) + " axis " + std::to_string(axis), op, {{kX}}, {Attribute::Int("axis", axis)}});
    // Opset 11: the input is coerced to 2-D at axis.
    for (int64_t axis : {1, 2}) Check({std::string(op) + " opset 11 axis " + std::to_string(axis), op, {{kX}}, {Attribute::Int("axis", axis)}, {}, 11});
    Check({std::string(op) + " rank 2", op, {{{3, 1000}}}});
  }
}

TEST(CpuConcat, AnyAxisOnBothLayoutsAndMixed) {
  for (int64_t axis : {1, 3, -1, 0, 2})
    for (In layout : {In::kNCHW, In::kNHWC}) {
      Shape a = kX, b = kX;
      const size_t ax = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
      b[ax] = 3;
      Check({"Concat axis " + std::to_string(axis), "Concat", {{a, layout}, {b, layout}, {a, layout}}, {Attribute::Int("axis", axis)}});
    }
  Shape b = kX;
  b[1] = 2;
  Check({"Concat mixed layouts", "Concat", {{kX, In::kNHWC}, {b, In::kNCHW}}, {Attribute::Int("axis", 1)}});
  // Large enough to be split across threads; channel runs of 24 and 72
  // values per pixel (a loop and a memcpy) on NHWC, whole planes on NCHW.
  for (In layout : {In::kNCHW, In::kNHWC})
    Check({"Concat of large maps", "Concat", {{{1, 24, 40, 40}, layout}, {{1, 72, 40, 40}, layout}}, {Attribute::Int("axis", 1)}});
}

Tensor Axes(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v); }

// Split on each axis and both layouts: equal parts, explicit sizes (the
// input of opset 13, the attribute of opset 11, a part of size 0), uneven
// num_outputs (opset 18), and the parts followed by another kernel (so
// each must be stored as the plan says for the Relu to read it as is).
TEST(CpuSplit, EveryAxisAndFormOnBothLayouts) {
  for (In layout : {In::kNCHW, In::kNHWC}) {
    const std::string l = layout == In::kNHWC ? " NHWC" : " NCHW";
    for (int64_t axis : {1, 3, -1, 0, 2})
      Check({"Split equal axis " + std::to_string(axis) + l, "Split", {{{2, 6, 4, 6}, layout}}, {Attribute::Int("axis", axis)}, {}, 17, false, "", 2});
    Check({"Split sizes input" + l, "Split", {{kX, layout}}, {Attribute::Int("axis", 1)}, {{1, Axes({2, 0, 3})}}, 13, false, "", 3});
    Check({"Split sizes attribute" + l, "Split", {{kX, layout}}, {Attribute::Int("axis", 3), Attribute::Ints("split", {4, 3})}, {}, 11, false, "", 2});
    Check({"Split num_outputs" + l, "Split", {{kX, layout}}, {Attribute::Int("axis", 1), Attribute::Int("num_outputs", 2)}, {}, 18, true, "", 2});
    // Large enough to be split across threads (C2f's halves: 64 channels of 128).
    Check({"Split large" + l, "Split", {{{1, 128, 40, 40}, layout}}, {Attribute::Int("axis", 1)}, {}, 17, true, "", 2});
  }
}

// Every part of a Split of channels-last data is planned channels-last, as
// the kernel writes it (a kernel's output order holds for all its outputs):
// a part planned row-major would be a drift `kiln verify --per-node` lists,
// and a conversion in front of any kernel that reads channels-last only.
TEST(CpuSplit, EveryPartIsPlannedInItsInputsLayout) {
  Built b = Build({"Split NHWC", "Split", {{{1, 6, 4, 5}, In::kNHWC}}, {Attribute::Int("axis", 1)}, {}, 17, true, "", 3});
  auto cpu = CpuSession(b.model);
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  const runtime::Executor& ex = *(*cpu)->impl().executor;
  const plan::LayoutPlan lp = ex.PlanLayouts();
  const auto& nodes = ex.model().graph.nodes;
  auto op = std::find_if(nodes.begin(), nodes.end(), [](const ir::Node& n) { return n.name == "op"; });
  ASSERT_NE(op, nodes.end());
  ASSERT_EQ(op->outputs.size(), 3u);
  for (const std::string& out : op->outputs) {
    auto it = lp.orders.find(out);
    ASSERT_NE(it, lp.orders.end()) << out;
    EXPECT_EQ(OrderName(it->second, 4), OrderName(kChannelsLast, 4)) << out;
  }
}

// Concat, Split and Slice move bytes: other element sizes, on runs of 3
// channels per pixel (3, 6 and 24 bytes: a byte loop and fixed-size moves)
// and of whole rows.
TEST(CpuDataMovement, OtherElementSizesOnBothLayouts) {
  const Shape x3 = {1, 3, 9, 10};
  for (DType dt : {DType::kUint8, DType::kFloat16, DType::kInt64})
    for (In layout : {In::kNCHW, In::kNHWC}) {
      const std::string what = std::string(DTypeName(dt)) + (layout == In::kNHWC ? " NHWC" : " NCHW");
      Case concat{"Concat " + what, "Concat", {{x3, layout}, {x3, layout}}, {Attribute::Int("axis", 1)}};
      concat.dtype = dt;
      Check(concat);
      Case split{"Split " + what, "Split", {{{1, 6, 9, 10}, layout}}, {Attribute::Int("axis", 1)}, {}, 17, false, "", 2};
      split.dtype = dt;
      Check(split);
      Case slice{"Slice " + what, "Slice", {{x3, layout}}, {}, {{1, Axes({0, 1})}, {2, Axes({9, 10})}, {3, Axes({2, 3})}, {4, Axes({2, 2})}}};
      slice.dtype = dt;
      Check(slice);
    }
}

// Slice on both layouts: channel ranges, spatial crops with steps,
// negative steps and ends past the dims, an empty result, and the
// attributes of opset 1.
TEST(CpuSlice, RangesStepsAndNegativeStepsOnBothLayouts) {
  const int64_t kBig = std::numeric_limits<int64_t>::max(), kSmall = std::numeric_limits<int64_t>::min();
  struct S {
    std::string what;
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const std::vector<S> slices = {
      {"channels 1..4", {1}, {4}, {1}, {1}},
      {"every other channel", {0}, {kBig}, {1}, {2}},
      {"crop with steps", {1, 0}, {-1, kBig}, {2, 3}, {2, 3}},
      {"reversed width", {-1}, {kSmall}, {3}, {-1}},
      {"reversed channels by 2, rows", {4, 1}, {0, 5}, {-3, 2}, {-2, 1}},
      {"all axes", {1, 1, 2, 1}, {2, 4, 5, 7}, {0, 1, 2, 3}, {1, 1, 1, 2}},
      {"empty", {3}, {3}, {1}, {1}},
  };
  for (In layout : {In::kNCHW, In::kNHWC})
    for (const S& sl : slices) {
      for (bool followed : {false, true})
        Check({"Slice " + sl.what + (layout == In::kNHWC ? " NHWC" : " NCHW") + (followed ? " followed" : ""),
               "Slice",
               {{kX, layout}},
               {},
               {{1, Axes(sl.starts)}, {2, Axes(sl.ends)}, {3, Axes(sl.axes)}, {4, Axes(sl.steps)}},
               17,
               followed});
    }
  for (In layout : {In::kNCHW, In::kNHWC})
    Check({"Slice opset 1 attributes", "Slice", {{kX, layout}},
           {Attribute::Ints("starts", {1, 2}), Attribute::Ints("ends", {4, 100}), Attribute::Ints("axes", {1, 3})}, {}, 1});
  // Large enough to be split across threads: YOLO's focus-style crops.
  for (In layout : {In::kNCHW, In::kNHWC})
    Check({"Slice large", "Slice", {{{1, 48, 64, 64}, layout}}, {}, {{1, Axes({1, 0})}, {2, Axes({kBig, 40})}, {3, Axes({2, 1})}, {4, Axes({2, 1})}}});
}

// Every Reduce* kind over several axis sets: with keepdims on both layouts
// (a channels-last input is reduced in place of its order, no conversion),
// without keepdims on row-major input. Float sums against the reference's
// double ones, hence the looser tolerance (the issue's is 1e-3 / 1e-4).
TEST(CpuReduce, EveryKindAxesAndKeepdimsOnBothLayouts) {
  const std::vector<std::string> ops = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                        "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"};
  const std::vector<std::vector<int64_t>> axes_sets = {{1}, {2, 3}, {-1}, {0, 2}, {1, 3}, {}};
  for (const std::string& op : ops)
    for (const auto& axes : axes_sets)
      for (int keep : {1, 0})
        for (In layout : {In::kNCHW, In::kNHWC}) {
          if (!keep && layout == In::kNHWC) continue;  // declared row-major: converted in front
          Case c{op + " axes " + ::testing::PrintToString(axes) + " keepdims " + std::to_string(keep) + (layout == In::kNHWC ? " NHWC" : " NCHW"),
                 op, {{kX, layout}}, {Attribute::Int("keepdims", keep)}};
          if (op == "ReduceSum") {  // opset 13+: axes is an input
            if (!axes.empty()) c.const_inputs = {{1, Axes(axes)}};
          } else if (!axes.empty()) {
            c.attrs.push_back(Attribute::Ints("axes", axes));
          }
          Check(c, 1e-4, 1e-4);
        }
  // Runs of 16 lanes and more, split across threads (over kParallelMin
  // values read): a pooled map on both layouts, LayerNorm's mean over the
  // last axis of a sequence.
  for (In layout : {In::kNCHW, In::kNHWC})
    Check({"ReduceMean of a 64x48x48 map", "ReduceMean", {{{1, 64, 48, 48}, layout}}, {Attribute::Ints("axes", {2, 3})}}, 1e-4, 1e-4);
  Check({"ReduceMean over the last axis", "ReduceMean", {{{1, 1200, 120}}}, {Attribute::Ints("axes", {-1})}}, 1e-4, 1e-4);
  Check({"ReduceSumSquare of a reduced dim of size 0", "ReduceSumSquare", {{{2, 0, 3}}}, {Attribute::Ints("axes", {1})}});
  Check({"ReduceMax of a reduced dim of size 0", "ReduceMax", {{{2, 0, 3}}}, {Attribute::Ints("axes", {1})}});
}

// NaN and infinities as the reference treats them: Max and Min propagate a
// NaN; LogSumExp gives NaN with one, +inf with +inf, -inf when all are -inf.
TEST(CpuReduce, NanAndInfinities) {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> in = {1.f, nan, 3.f, 2.f, -1.f, 4.f, inf, 0.f, 1.f, -inf, -inf, -inf};
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceSum"}) {
    SCOPED_TRACE(op);
    ir::GraphBuilder b(17);
    auto x = b.AddInput("x", DType::kFloat32, Shape{4, 3});
    b.AddOutput(b.AddNode(op, {x}, {Attribute::Ints("axes", {1}), Attribute::Int("keepdims", 0)}, 1, "op")[0]);
    if (std::string(op) == "ReduceSum") {
      ir::GraphBuilder s(17);
      auto xs = s.AddInput("x", DType::kFloat32, Shape{4, 3});
      s.AddOutput(s.AddNode(op, {xs, s.AddInitializer("axes", Axes({1}))}, {Attribute::Int("keepdims", 0)}, 1, "op")[0]);
      b = std::move(s);
    }
    auto m = b.Build();
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    SessionOptions o;
    o.provider = "cpu";
    auto cpu = CreateSessionFromModel(*m, o);
    auto ref = CreateSessionFromModel(*m);
    ASSERT_TRUE(cpu.ok() && ref.ok());
    EXPECT_EQ((*cpu)->impl().executor->node_providers()[0], "cpu");
    const std::map<std::string, Tensor> feeds = {{"x", Tensor::FromVector<float>(DType::kFloat32, {4, 3}, in)}};
    auto got = (*cpu)->Run(feeds);
    auto want = (*ref)->Run(feeds);
    ASSERT_TRUE(got.ok() && want.ok());
    for (int64_t i = 0; i < 4; ++i) {
      const double g = (*got)[0].GetAsDouble(i), w = (*want)[0].GetAsDouble(i);
      if (std::isnan(w)) EXPECT_TRUE(std::isnan(g)) << "row " << i << ": " << g;
      else if (std::isinf(w)) EXPECT_EQ(g, w) << "row " << i;
      else EXPECT_NEAR(g, w, 1e-5 * std::fabs(w) + 1e-6) << "row " << i;
    }
  }
}

TEST(CpuTranspose, IsAViewInTheLayoutItPredicts) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 4, 5, 3});
  auto t = b.AddNode("Transpose", {x}, {Attribute::Ints("perm", {0, 3, 1, 2})}, 1, "t")[0];
  auto r = b.AddNode("Relu", {t}, {}, 1, "op")[0];
  b.AddOutput(r);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  auto s = CpuSession(*m);
  ASSERT_TRUE(s.ok());
  plan::LayoutPlan lp = (*s)->impl().executor->PlanLayouts();
  EXPECT_EQ(OrderName(lp.orders[t], 4), "NHWC");
  EXPECT_EQ(OrderName(lp.orders[r], 4), "NHWC");
  EXPECT_TRUE(lp.conversions.empty());
  // Other permutations: compared with the reference by the harness.
  for (std::vector<int64_t> perm : {std::vector<int64_t>{0, 2, 3, 1}, {3, 2, 1, 0}, {1, 0, 3, 2}})
    for (In layout : {In::kNCHW, In::kNHWC}) Check({"Transpose", "Transpose", {{kX, layout}}, {Attribute::Ints("perm", perm)}});
}

Tensor F(std::vector<float> v) { return Tensor::FromVector<float>(DType::kFloat32, {static_cast<int64_t>(v.size())}, v); }
Tensor I64(std::vector<int64_t> v) { return Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v); }

TEST(CpuResize, NearestAndLinearEveryCoordinateModeOnBothLayouts) {
  const std::vector<std::string> coords = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"};
  const std::vector<std::string> nearest = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  const std::vector<Tensor> scales = {F({1, 1, 2, 2}), F({1, 1, 0.5f, 0.75f}), F({1, 1, 1.7f, 3.f})};
  // Each as a graph output and read by a later node (see the next test).
  for (bool followed : {false, true})
    for (In layout : {In::kNCHW, In::kNHWC})
      for (const std::string& coord : coords)
        for (size_t si = 0; si < scales.size(); ++si) {
          const std::string tail = " " + coord + " scales#" + std::to_string(si) + (followed ? " followed" : "");
          for (const std::string& nm : nearest)
            Check({"nearest " + nm + tail, "Resize", {{kX, layout}},
                   {Attribute::String("mode", "nearest"), Attribute::String("coordinate_transformation_mode", coord),
                    Attribute::String("nearest_mode", nm)},
                   {{1, Tensor()}, {2, scales[si]}}, 19, followed});
          Check({"linear" + tail, "Resize", {{kX, layout}},
                 {Attribute::String("mode", "linear"), Attribute::String("coordinate_transformation_mode", coord)},
                 {{1, Tensor()}, {2, scales[si]}}, 19, followed});
        }
}

// A Resize that is a graph output is written row-major whatever layout it
// reads (no conversion on return); one read by another node keeps its
// input's layout. Both are compared with the reference by the cases above
// (as graph outputs) and here (followed by a Relu).
TEST(CpuResize, GraphOutputWrittenRowMajorOthersKeepTheLayout) {
  for (bool followed : {false, true})
    for (In layout : {In::kNCHW, In::kNHWC}) {
      Case c{"linear", "Resize", {{kX, layout}}, {Attribute::String("mode", "linear")}, {{1, Tensor()}, {2, F({1, 1, 1.7f, 3.f})}}, 19};
      c.followed = followed;
      c.what += std::string(layout == In::kNHWC ? " NHWC" : " NCHW") + (followed ? " followed" : " graph output");
      Check(c);
      Case n = c;
      n.attrs = {Attribute::String("mode", "nearest")};
      n.what = "nearest" + c.what.substr(6);
      Check(n);
      auto s = CpuSession(Build(c).model);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      const runtime::Executor& ex = *(*s)->impl().executor;
      plan::LayoutPlan lp = ex.PlanLayouts();
      std::string out;
      for (const auto& node : ex.model().graph.nodes)
        if (node.name == "op") out = node.outputs[0];
      EXPECT_EQ(OrderName(lp.orders[out], 4), layout == In::kNHWC && followed ? "NHWC" : "NCHW") << c.what;
    }
}

// An input of one pixel per channel (a pooled branch) is dense in both
// layouts; whichever it arrives in, the output is channels-last, as planned.
TEST(CpuResize, OnePixelPerChannelComesOutChannelsLast) {
  for (In layout : {In::kNCHW, In::kNHWC})
    for (const char* mode : {"nearest", "linear"}) {
      Case c{std::string(mode) + (layout == In::kNHWC ? " NHWC" : " NCHW"), "Resize", {{{2, 5, 1, 1}, layout}},
             {Attribute::String("mode", mode)}, {{1, Tensor()}, {2, F({1, 1, 4, 3})}}, 19};
      c.followed = true;
      Check(c);
      auto s = CpuSession(Build(c).model);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      const runtime::Executor& ex = *(*s)->impl().executor;
      std::string out;
      for (const auto& node : ex.model().graph.nodes)
        if (node.name == "op") out = node.outputs[0];
      EXPECT_EQ(OrderName(ex.PlanLayouts().orders[out], 4), "NHWC") << c.what;
    }
}

TEST(CpuResize, SizesInputAndOldOpsets) {
  for (In layout : {In::kNCHW, In::kNHWC}) {
    // Opset 11 tf_half_pixel_for_nn maps the unresized N and C axes too (x -> x + 0.5):
    // ceil reads channel c + 1 (kiln fuzz, tests/regressions/resize11_tf_half_pixel_for_nn_shift).
    for (const char* nm : {"ceil", "round_prefer_ceil", "floor", "round_prefer_floor"})
      Check({std::string("tf_half_pixel_for_nn ") + nm, "Resize", {{kX, layout}},
             {Attribute::String("mode", "nearest"), Attribute::String("coordinate_transformation_mode", "tf_half_pixel_for_nn"),
              Attribute::String("nearest_mode", nm)},
             {{1, F({})}, {2, F({1, 1, 2, 1.5f})}}, 11});
    Check({"linear sizes", "Resize", {{kX, layout}}, {Attribute::String("mode", "linear")},
           {{1, Tensor()}, {2, Tensor()}, {3, I64({2, 5, 13, 4})}}, 13});
    Check({"nearest opset 10", "Resize", {{kX, layout}}, {Attribute::String("mode", "nearest")}, {{1, F({1, 1, 2, 3})}}, 10});
    Check({"Upsample 9", "Upsample", {{kX, layout}}, {Attribute::String("mode", "nearest")}, {{1, F({1, 1, 2, 2})}}, 9});
  }
}

}  // namespace
}  // namespace kiln
