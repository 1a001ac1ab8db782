// The cpu provider's MaxPool / AveragePool / GlobalMaxPool /
// GlobalAveragePool against the reference provider: each case is one pool
// node run on both providers with the same seeded input, on each layout the
// kernel accepts: an NCHW graph input (row-major), and an NHWC graph input
// followed by Transpose(0,3,1,2), which hands the pool a channels-last view.
// Every case checks that the node ran on cpu, that its output is stored in
// the order its input arrived in, and max |cpu - ref| <= 1e-4 * max(1, |ref|).
// Declined cases must run on the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/builder.h"
#include "runtime/session_internal.h"
#include "support/layout.h"
#include "providers/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using cpu::testing::CpuOptions;
using cpu::testing::ExpectClose;

using ir::Attribute;

Attribute Ints(const char* n, std::vector<int64_t> v) { return Attribute::Ints(n, std::move(v)); }

struct PoolCase {
  std::string name;
  std::string op;
  Shape x;  // logical NCHW
  std::vector<Attribute> attrs;
};

struct Built {
  ir::Model model;
  std::map<std::string, Tensor> feeds;
  size_t pool_node;  // index of the pool node in the graph
};

// The pool node is named "pool"; nhwc: the graph input is NHWC and a
// Transpose(0,3,1,2) turns it into the logical NCHW the pool takes.
Built Make(const PoolCase& c, bool nhwc, int64_t opset = 19, DType dtype = DType::kFloat32) {
  ir::GraphBuilder b(opset, "main", 3);
  const Shape in = nhwc ? Shape{c.x[0], c.x[2], c.x[3], c.x[1]} : c.x;
  std::string x = b.AddInput("x", dtype, in);
  if (nhwc) x = b.AddNode("Transpose", {x}, {Ints("perm", {0, 3, 1, 2})}, "to_nchw");
  b.AddOutput(b.AddNode(c.op, {x}, c.attrs, "pool"));
  auto m = b.Build();
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  Built r{std::move(m).value(), {}, nhwc ? 1u : 0u};
  ir::SeededRng rng(11);
  r.feeds["x"] = *ir::RandomTensor(dtype, in, rng, -1, 1);
  return r;
}

// max |a - e| <= 1e-4 * max(1, |e|) elementwise (equal infinities pass).
// Runs on both providers; the pool must run on cpu and write its output in
// the order its input arrived in (channels-last behind the Transpose).
void ExpectCpuMatchesReference(const Built& b, bool nhwc, const std::string& what) {
  auto ref = CreateSessionFromModel(b.model);
  ASSERT_TRUE(ref.ok()) << what << ": " << ref.status().ToString();
  auto cpu = CreateSessionFromModel(b.model, CpuOptions());
  ASSERT_TRUE(cpu.ok()) << what << ": " << cpu.status().ToString();
  ASSERT_EQ((*cpu)->impl().executor->node_providers()[b.pool_node], "cpu") << what << " fell back";
  auto want = (*ref)->Run(b.feeds);
  ASSERT_TRUE(want.ok()) << what << ": " << want.status().ToString();
  std::map<std::string, Datum> feeds;
  for (const auto& [k, v] : b.feeds) feeds[k] = Datum(v);
  Tensor pool_in_view, pool_out;
  auto got = RunWithTap(**cpu, feeds, {b.model.graph.outputs[0].name}, [&](const ir::Node& n, const std::vector<Datum>& outs) {
    if (n.name == "to_nchw") pool_in_view = outs[0].tensor();
    if (n.name == "pool") pool_out = outs[0].tensor();
  });
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
  ASSERT_TRUE(pool_out.defined()) << what;
  const DimOrder want_order = nhwc ? kChannelsLast : kRowMajor;
  if (nhwc) {
    ASSERT_TRUE(pool_in_view.defined());
    EXPECT_EQ(pool_in_view.strides(), StridesInOrder(pool_in_view.shape(), kChannelsLast)) << what << ": the pool's input is not channels-last";
  }
  EXPECT_EQ(pool_out.strides(), StridesInOrder(pool_out.shape(), want_order))
      << what << ": output not stored " << OrderName(want_order, 4) << ": " << pool_out.Describe();
  // The plan predicts the same order.
  auto plan = (*cpu)->impl().executor->PlanLayouts();
  EXPECT_TRUE(SameOrder(plan.orders[b.model.graph.nodes[b.pool_node].outputs[0]], want_order, 4)) << what;
  ExpectClose((*got)[0].tensor(), (*want)[0], what);
}

std::string RunsOn(const Built& b) {
  auto s = CreateSessionFromModel(b.model, CpuOptions());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return "";
  // A declined node must still give the reference's answer.
  auto ref = CreateSessionFromModel(b.model);
  auto got = (*s)->Run(b.feeds);
  auto want = (*ref)->Run(b.feeds);
  EXPECT_TRUE(got.ok() && want.ok());
  if (got.ok() && want.ok()) ExpectClose((*got)[0], (*want)[0], "declined case");
  return (*s)->impl().executor->node_providers()[b.pool_node];
}

std::vector<PoolCase> MaxCases() {
  return {
      {"3x3 s2 p1 (resnet stem)", "MaxPool", {1, 8, 16, 16}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}},
      {"2x2 s2", "MaxPool", {2, 5, 8, 10}, {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2})}},
      {"3x3 s1 p1", "MaxPool", {1, 3, 7, 9}, {Ints("kernel_shape", {3, 3}), Ints("pads", {1, 1, 1, 1})}},
      {"rect kernel, strides, asymmetric pads", "MaxPool", {1, 4, 9, 11},
       {Ints("kernel_shape", {2, 3}), Ints("strides", {1, 2}), Ints("pads", {0, 1, 1, 2})}},
      {"ceil_mode", "MaxPool", {1, 4, 8, 9}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Attribute::Int("ceil_mode", 1)}},
      {"ceil_mode, last window dropped", "MaxPool", {1, 3, 4, 4},
       {Ints("kernel_shape", {2, 2}), Ints("strides", {3, 3}), Ints("pads", {1, 1, 1, 1}), Attribute::Int("ceil_mode", 1)}},
      {"ceil_mode + pads", "MaxPool", {1, 3, 10, 7},
       {Ints("kernel_shape", {3, 2}), Ints("strides", {2, 2}), Ints("pads", {1, 0, 1, 1}), Attribute::Int("ceil_mode", 1)}},
      {"dilations", "MaxPool", {1, 4, 11, 12}, {Ints("kernel_shape", {3, 3}), Ints("dilations", {2, 3}), Ints("pads", {2, 1, 2, 1})}},
      {"dilations + ceil_mode + strides", "MaxPool", {1, 2, 12, 13},
       {Ints("kernel_shape", {3, 2}), Ints("dilations", {2, 2}), Ints("strides", {2, 3}), Attribute::Int("ceil_mode", 1)}},
      // Along H the middle window's two taps (-1, 2) both miss the 2 input rows: -inf.
      {"dilated window of padding only", "MaxPool", {1, 3, 2, 7},
       {Ints("kernel_shape", {2, 2}), Ints("dilations", {3, 1}), Ints("pads", {2, 0, 2, 0})}},
      {"SAME_UPPER s2", "MaxPool", {1, 3, 9, 8}, {Attribute::String("auto_pad", "SAME_UPPER"), Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2})}},
      {"SAME_LOWER", "MaxPool", {1, 3, 8, 8}, {Attribute::String("auto_pad", "SAME_LOWER"), Ints("kernel_shape", {4, 4})}},
      {"VALID", "MaxPool", {1, 3, 9, 9}, {Attribute::String("auto_pad", "VALID"), Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2})}},
      {"storage_order 1 without Indices", "MaxPool", {1, 2, 6, 6}, {Ints("kernel_shape", {2, 2}), Attribute::Int("storage_order", 1)}},
      {"single channel", "MaxPool", {2, 1, 7, 7}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2})}},
      // Channel counts of real models and ones no vector width divides.
      {"3x3 s2 p1, 70 channels", "MaxPool", {2, 70, 9, 9}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}},
      {"5x5 s1 p2 (SPPF), 130 channels", "MaxPool", {1, 130, 6, 7}, {Ints("kernel_shape", {5, 5}), Ints("pads", {2, 2, 2, 2})}},
      {"dilations + ceil_mode, 45 channels", "MaxPool", {1, 45, 10, 11},
       {Ints("kernel_shape", {3, 2}), Ints("dilations", {2, 3}), Ints("strides", {2, 1}), Ints("pads", {1, 2, 0, 1}), Attribute::Int("ceil_mode", 1)}},
  };
}

std::vector<PoolCase> AverageCases() {
  std::vector<PoolCase> out;
  struct Geo {
    std::string name;
    Shape x;
    std::vector<Attribute> attrs;
  };
  const std::vector<Geo> geos = {
      {"3x3 s1 p1", {1, 4, 7, 9}, {Ints("kernel_shape", {3, 3}), Ints("pads", {1, 1, 1, 1})}},
      {"2x2 s2", {2, 3, 8, 8}, {Ints("kernel_shape", {2, 2}), Ints("strides", {2, 2})}},
      {"rect, asymmetric pads, strides", {1, 5, 10, 9}, {Ints("kernel_shape", {3, 2}), Ints("strides", {2, 1}), Ints("pads", {2, 0, 1, 1})}},
      {"ceil_mode without end-pad overhang", {1, 3, 4, 4},
       {Ints("kernel_shape", {2, 2}), Ints("strides", {3, 3}), Ints("pads", {1, 1, 1, 1}), Attribute::Int("ceil_mode", 1)}},
      {"dilations + pads", {1, 3, 11, 10}, {Ints("kernel_shape", {3, 3}), Ints("dilations", {2, 2}), Ints("pads", {2, 2, 2, 2})}},
      {"dilated window of padding only", {1, 3, 2, 7}, {Ints("kernel_shape", {2, 2}), Ints("dilations", {3, 1}), Ints("pads", {2, 0, 2, 0})}},
      {"SAME_UPPER s2", {1, 3, 9, 8}, {Attribute::String("auto_pad", "SAME_UPPER"), Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2})}},
      {"SAME_LOWER", {1, 2, 6, 7}, {Attribute::String("auto_pad", "SAME_LOWER"), Ints("kernel_shape", {2, 4})}},
      {"3x2 s(3,2) (PP-OCR rec), 45 channels", {1, 45, 9, 8}, {Ints("kernel_shape", {3, 2}), Ints("strides", {3, 2})}},
      {"3x3 s1 p1, 70 channels", {2, 70, 5, 6}, {Ints("kernel_shape", {3, 3}), Ints("pads", {1, 1, 1, 1})}},
  };
  for (const Geo& g : geos)
    for (int cip : {0, 1}) {
      if (g.name == "dilated window of padding only" && cip == 0) continue;  // declined (below)
      PoolCase c{g.name + (cip ? " count_include_pad" : " exclude pad"), "AveragePool", g.x, g.attrs};
      c.attrs.push_back(Attribute::Int("count_include_pad", cip));
      out.push_back(c);
    }
  // ceil_mode whose extra window reaches past the end padding: exact only
  // when padding is excluded (the include case is declined, tested below).
  out.push_back({"ceil_mode overhang, exclude pad", "AveragePool", {1, 4, 8, 9},
                 {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1}), Attribute::Int("ceil_mode", 1)}});
  return out;
}

std::vector<PoolCase> GlobalCases() {
  std::vector<PoolCase> out;
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
    // kiln's own loops: 16-lane folds with and without a tail (49, 52, 15
    // per plane); channels-last blocks of 128, 64, 32, 16, 8, 4 and single
    // channels (70, 96, 130, 300); several 256-row chunks, the last one
    // partial (320, 600 and 289 rows); work large enough to be split across
    // threads (2x300x17x17, over kParallelMin values).
    for (Shape s : {Shape{1, 16, 7, 7}, Shape{2, 5, 13, 4}, Shape{1, 8, 1, 1}, Shape{1, 3, 56, 56}, Shape{1, 70, 3, 5},
                    Shape{2, 130, 16, 20}, Shape{1, 96, 20, 30}, Shape{2, 300, 17, 17}})
      out.push_back({std::string(op) + " " + ShapeToString(s), op, s, {}});
  return out;
}

TEST(CpuPool, MaxPoolMatchesReferenceOnAttributeGridBothLayouts) {
  for (const PoolCase& c : MaxCases())
    for (bool nhwc : {false, true}) ExpectCpuMatchesReference(Make(c, nhwc), nhwc, c.name + (nhwc ? " [NHWC]" : " [NCHW]"));
}

TEST(CpuPool, AveragePoolMatchesReferenceOnAttributeGridBothLayouts) {
  for (const PoolCase& c : AverageCases())
    for (bool nhwc : {false, true}) ExpectCpuMatchesReference(Make(c, nhwc), nhwc, c.name + (nhwc ? " [NHWC]" : " [NCHW]"));
}

TEST(CpuPool, GlobalPoolsMatchReferenceBothLayouts) {
  for (const PoolCase& c : GlobalCases())
    for (bool nhwc : {false, true}) ExpectCpuMatchesReference(Make(c, nhwc), nhwc, c.name + (nhwc ? " [NHWC]" : " [NCHW]"));
}

// kiln's channels-last MaxPool keeps what the reference keeps, bit for bit:
// a NaN at a window's first tap stays, a later one loses to the value
// before it (both compare v > best), -0 against +0 keeps the first.
TEST(CpuPool, ChannelsLastMaxPoolKeepsReferenceBits) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const PoolCase cases[] = {
      {"3x3 s2 p1, 80 channels", "MaxPool", {1, 80, 7, 6}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}},
      {"3x2 s2 p1 ceil_mode, 5 channels", "MaxPool", {1, 5, 8, 9},
       {Ints("kernel_shape", {3, 2}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1}), Attribute::Int("ceil_mode", 1)}},
  };
  for (const PoolCase& c : cases) {
    Built b = Make(c, true);
    float* x = b.feeds["x"].data<float>();
    const float specials[] = {nan, -nan, inf, -inf, 0.f, -0.f};
    for (int64_t i = 0; i < b.feeds["x"].numel(); i += 3) x[i] = specials[(i / 3) % 6];
    auto ref = CreateSessionFromModel(b.model);
    auto cpu = CreateSessionFromModel(b.model, CpuOptions());
    ASSERT_TRUE(ref.ok() && cpu.ok()) << c.name << ": " << (ref.ok() ? cpu.status().ToString() : ref.status().ToString());
    ASSERT_EQ((*cpu)->impl().executor->node_providers()[b.pool_node], "cpu") << c.name;
    auto want = (*ref)->Run(b.feeds);
    auto got = (*cpu)->Run(b.feeds);
    ASSERT_TRUE(want.ok() && got.ok()) << c.name;
    const Tensor w = ToOrder((*want)[0], kRowMajor), g = ToOrder((*got)[0], kRowMajor);
    ASSERT_EQ(w.numel(), g.numel());
    int64_t differ = 0;
    for (int64_t i = 0; i < w.numel(); ++i) differ += std::memcmp(w.data<float>() + i, g.data<float>() + i, sizeof(float)) != 0;
    EXPECT_EQ(differ, 0) << c.name << ": values whose bits differ from the reference's";
  }
}

// Old opsets: MaxPool-1 and AveragePool-7 (no ceil_mode, no dilations).
TEST(CpuPool, OldOpsets) {
  PoolCase mp{"MaxPool-1", "MaxPool", {1, 3, 8, 8}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}};
  PoolCase ap{"AveragePool-7", "AveragePool", {1, 3, 8, 8},
              {Ints("kernel_shape", {3, 3}), Ints("pads", {1, 1, 1, 1}), Attribute::Int("count_include_pad", 1)}};
  for (bool nhwc : {false, true}) {
    ExpectCpuMatchesReference(Make(mp, nhwc, 7), nhwc, mp.name);
    ExpectCpuMatchesReference(Make(ap, nhwc, 7), nhwc, ap.name);
  }
}

// A dynamic input shape: primitives are built per shape and per layout.
TEST(CpuPool, DynamicShapesRebuildPerShape) {
  for (bool nhwc : {false, true}) {
    ir::GraphBuilder b(19, "main", 3);
    const ir::Dims dyn = nhwc ? ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Symbol("H"), ir::Dim::Symbol("W"), ir::Dim::Known(3)}
                              : ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")};
    std::string x = b.AddInput("x", DType::kFloat32, dyn);
    if (nhwc) x = b.AddNode("Transpose", {x}, {Ints("perm", {0, 3, 1, 2})}, "to_nchw");
    b.AddOutput(b.AddNode("MaxPool", {x}, {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Attribute::Int("ceil_mode", 1)}, "pool"));
    auto m = b.Build();
    ASSERT_TRUE(m.ok());
    for (Shape s : {Shape{1, 3, 9, 9}, Shape{2, 3, 12, 7}, Shape{1, 3, 9, 9}}) {
      ir::SeededRng rng(4);
      const Shape in = nhwc ? Shape{s[0], s[2], s[3], s[1]} : s;
      Built built{*m, {{"x", *ir::RandomTensor(DType::kFloat32, in, rng, -1, 1)}}, nhwc ? 1u : 0u};
      ExpectCpuMatchesReference(built, nhwc, ShapeToString(s) + (nhwc ? " [NHWC]" : " [NCHW]"));
    }
  }
}

// What the cpu kernels cannot compute exactly falls back to the reference.
TEST(CpuPool, DeclinedCasesFallBack) {
  // MaxPool's Indices output.
  {
    ir::GraphBuilder b(19);
    auto x = b.AddInput("x", DType::kFloat32, Shape{1, 2, 6, 6});
    auto y = b.AddNode("MaxPool", {x}, {Ints("kernel_shape", {2, 2})}, 2, "pool");
    b.AddOutput(y[0]);
    b.AddOutput(y[1]);
    auto m = b.Build();
    ASSERT_TRUE(m.ok());
    ir::SeededRng rng(1);
    Built built{*m, {{"x", *ir::RandomTensor(DType::kFloat32, {1, 2, 6, 6}, rng, -1, 1)}}, 0};
    EXPECT_EQ(RunsOn(built), "reference");
  }
  // ceil_mode window past the end padding with count_include_pad.
  PoolCase overhang{"", "AveragePool", {1, 4, 8, 9},
                    {Ints("kernel_shape", {3, 3}), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1}), Attribute::Int("ceil_mode", 1),
                     Attribute::Int("count_include_pad", 1)}};
  for (bool nhwc : {false, true}) EXPECT_EQ(RunsOn(Make(overhang, nhwc)), "reference");
  // Exclude-padding average over a dilated window of padding only (oneDNN refuses it).
  PoolCase empty{"", "AveragePool", {1, 3, 2, 7}, {Ints("kernel_shape", {2, 2}), Ints("dilations", {3, 1}), Ints("pads", {2, 0, 2, 0})}};
  for (bool nhwc : {false, true}) EXPECT_EQ(RunsOn(Make(empty, nhwc)), "reference");
  // 1-D pooling (rank 3) and int8 MaxPool (opset 12).
  {
    ir::GraphBuilder b(19);
    auto x = b.AddInput("x", DType::kFloat32, Shape{1, 2, 9});
    b.AddOutput(b.AddNode("MaxPool", {x}, {Ints("kernel_shape", {3})}, "pool"));
    auto m = b.Build();
    ASSERT_TRUE(m.ok());
    ir::SeededRng rng(1);
    Built built{*m, {{"x", *ir::RandomTensor(DType::kFloat32, {1, 2, 9}, rng, -1, 1)}}, 0};
    EXPECT_EQ(RunsOn(built), "reference");
  }
  PoolCase i8{"", "MaxPool", {1, 2, 6, 6}, {Ints("kernel_shape", {2, 2})}};
  EXPECT_EQ(RunsOn(Make(i8, false, 19, DType::kInt8)), "reference");
  // A dynamic shape with ceil_mode + count_include_pad: exactness depends on the shape.
  {
    ir::GraphBuilder b(19);
    auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Known(1), ir::Dim::Known(2), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")});
    b.AddOutput(b.AddNode("AveragePool", {x}, overhang.attrs, "pool"));
    auto m = b.Build();
    ASSERT_TRUE(m.ok());
    ir::SeededRng rng(1);
    Built built{*m, {{"x", *ir::RandomTensor(DType::kFloat32, {1, 2, 8, 9}, rng, -1, 1)}}, 0};
    EXPECT_EQ(RunsOn(built), "reference");
  }
}

}  // namespace
}  // namespace kiln
