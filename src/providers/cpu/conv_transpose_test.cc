// The cpu provider's ConvTranspose against the reference provider on a grid
// of attributes (strides, pads, output_padding, output_shape, auto_pad,
// dilations, groups, bias), each fed both as an NCHW graph input (the
// executor converts it to the channels-last layout the kernel declares) and
// as an NHWC graph input behind Transpose(0,3,1,2) (a channels-last view the
// kernel reads as is). Every case checks that the node ran on cpu, that its
// output is stored channels-last, and max |cpu - ref| <= 1e-4 * max(1, |ref|).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

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

struct DeconvCase {
  std::string name;
  Shape x, w;  // x logical NCHW; w [C, M/group, kH, kW]
  std::vector<Attribute> attrs;
  bool bias = true;
};

struct Built {
  ir::Model model;
  std::map<std::string, Tensor> feeds;
  size_t node;
};

Built Make(const DeconvCase& c, bool nhwc, bool const_w = true) {
  ir::GraphBuilder b(17, "main", 7);
  const Shape in = nhwc ? Shape{c.x[0], c.x[2], c.x[3], c.x[1]} : c.x;
  std::string x = b.AddInput("x", DType::kFloat32, in);
  if (nhwc) x = b.AddNode("Transpose", {x}, {Ints("perm", {0, 3, 1, 2})}, "to_nchw");
  int64_t group = 1;
  for (const auto& a : c.attrs)
    if (a.name == "group") group = a.i;
  std::vector<std::string> ins = {x, const_w ? b.AddRandomInitializer("w", DType::kFloat32, c.w, -0.5, 0.5)
                                             : b.AddInput("w", DType::kFloat32, c.w)};
  if (c.bias) ins.push_back(b.AddRandomInitializer("b", DType::kFloat32, {c.w[1] * group}, -0.5, 0.5));
  b.AddOutput(b.AddNode("ConvTranspose", ins, c.attrs, "deconv"));
  auto m = b.Build();
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  Built r{std::move(m).value(), {}, nhwc ? 1u : 0u};
  ir::SeededRng rng(5);
  r.feeds["x"] = *ir::RandomTensor(DType::kFloat32, in, rng, -1, 1);
  if (!const_w) r.feeds["w"] = *ir::RandomTensor(DType::kFloat32, c.w, rng, -0.5, 0.5);
  return r;
}

void ExpectCpuMatchesReference(const Built& b, const std::string& what) {
  auto ref = CreateSessionFromModel(b.model);
  ASSERT_TRUE(ref.ok()) << what << ": " << ref.status().ToString();
  auto cpu = CreateSessionFromModel(b.model, CpuOptions());
  ASSERT_TRUE(cpu.ok()) << what << ": " << cpu.status().ToString();
  ASSERT_EQ((*cpu)->impl().executor->node_providers()[b.node], "cpu") << what << " fell back";
  auto want = (*ref)->Run(b.feeds);
  ASSERT_TRUE(want.ok()) << what << ": " << want.status().ToString();
  std::map<std::string, Datum> feeds;
  for (const auto& [k, v] : b.feeds) feeds[k] = Datum(v);
  Tensor out;
  auto got = RunWithTap(**cpu, feeds, {b.model.graph.outputs[0].name}, [&](const ir::Node& n, const std::vector<Datum>& outs) {
    if (n.name == "deconv") out = outs[0].tensor();
  });
  ASSERT_TRUE(got.ok()) << what << ": " << got.status().ToString();
  ASSERT_TRUE(out.defined());
  EXPECT_EQ(out.strides(), StridesInOrder(out.shape(), kChannelsLast)) << what << ": output not channels-last: " << out.Describe();
  auto plan = (*cpu)->impl().executor->PlanLayouts();
  EXPECT_TRUE(SameOrder(plan.orders[b.model.graph.nodes[b.node].outputs[0]], kChannelsLast, 4)) << what;
  ExpectClose((*got)[0].tensor(), (*want)[0], what);
}

std::vector<DeconvCase> Cases() {
  return {
      {"3x3 s1", {1, 4, 5, 6}, {4, 3, 3, 3}, {}},
      {"3x3 s2 p1 output_padding 1", {1, 8, 7, 7}, {8, 5, 3, 3}, {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1}), Ints("output_padding", {1, 1})}},
      {"4x4 s2 p1", {2, 6, 5, 4}, {6, 4, 4, 4}, {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}},
      {"2x2 s2 (PP-OCR det upsampling)", {1, 16, 8, 8}, {16, 8, 2, 2}, {Ints("strides", {2, 2})}},
      {"no bias", {1, 3, 6, 6}, {3, 2, 3, 3}, {Ints("strides", {2, 2})}, false},
      {"group 2", {1, 6, 5, 5}, {6, 3, 3, 3}, {Attribute::Int("group", 2), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}},
      {"depthwise", {1, 8, 6, 6}, {8, 1, 4, 4}, {Attribute::Int("group", 8), Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}},
      {"dilations", {1, 4, 6, 5}, {4, 3, 3, 3}, {Ints("dilations", {2, 3}), Ints("pads", {1, 2, 0, 1})}},
      {"asymmetric pads, rect kernel, strides", {1, 3, 5, 7}, {3, 4, 3, 2}, {Ints("strides", {3, 2}), Ints("pads", {0, 1, 2, 0})}},
      {"output_padding > end pad (oneDNN end pad -2 > -stride)", {1, 3, 4, 4}, {3, 2, 3, 3}, {Ints("strides", {3, 3}), Ints("output_padding", {2, 1})}},
      {"output_padding under dilation", {1, 2, 5, 5}, {2, 3, 3, 3}, {Ints("strides", {2, 2}), Ints("dilations", {3, 2}), Ints("pads", {1, 1, 1, 1}), Ints("output_padding", {1, 1})}},
      {"output_shape", {1, 4, 5, 5}, {4, 3, 3, 3}, {Ints("strides", {2, 2}), Ints("output_shape", {10, 9})}},
      {"output_shape (full N,C,H,W)", {1, 4, 5, 5}, {4, 3, 3, 3}, {Ints("strides", {2, 2}), Ints("output_shape", {1, 3, 10, 10})}},
      {"output_shape one past the full result", {1, 3, 4, 4}, {3, 2, 3, 3}, {Ints("strides", {2, 2}), Ints("output_shape", {10, 9})}},
      {"SAME_UPPER s2", {1, 4, 5, 6}, {4, 3, 3, 3}, {Attribute::String("auto_pad", "SAME_UPPER"), Ints("strides", {2, 2})}},
      {"SAME_LOWER s2", {1, 4, 5, 6}, {4, 3, 4, 3}, {Attribute::String("auto_pad", "SAME_LOWER"), Ints("strides", {2, 2})}},
      {"VALID + kernel_shape", {1, 2, 4, 4}, {2, 3, 3, 3}, {Attribute::String("auto_pad", "VALID"), Ints("kernel_shape", {3, 3})}},
      {"batch 3", {3, 5, 4, 3}, {5, 4, 3, 3}, {Ints("strides", {2, 1}), Ints("pads", {1, 0, 1, 0})}},
      // Kernel = stride, no pads: the tiled matmul path (conv_transpose.cc).
      {"tiled 3x2 s(3,2) batch 2", {2, 5, 4, 3}, {5, 7, 3, 2}, {Ints("strides", {3, 2})}},
      {"tiled 2x2 s2 to one channel (PP-OCR det's last)", {1, 24, 9, 7}, {24, 1, 2, 2}, {Ints("strides", {2, 2})}},
      // The pixel-vectorized path (conv_transpose.cc, UpsampleTo1Tiles):
      // rows of 64 + 6 pixels, of 33 (three vectors, the last one pixel),
      // batch 2, 40 channels, 5 channels, no bias.
      {"tiled 2x2 s2 to one channel, rows of 70 pixels", {1, 24, 4, 70}, {24, 1, 2, 2}, {Ints("strides", {2, 2})}},
      {"tiled 2x2 s2 to one channel, batch 2, 40 channels, rows of 33", {2, 40, 3, 33}, {40, 1, 2, 2}, {Ints("strides", {2, 2})}},
      {"tiled 2x2 s2 to one channel, 5 channels, no bias", {1, 5, 5, 17}, {5, 1, 2, 2}, {Ints("strides", {2, 2})}, false},
      {"tiled 2x2 s2, copy large enough to split across threads", {1, 24, 40, 40}, {24, 24, 2, 2}, {Ints("strides", {2, 2})}},
      {"tiled 2x2 s2 no bias", {1, 6, 5, 5}, {6, 3, 2, 2}, {Ints("strides", {2, 2})}, false},
      {"tiled 2x2 s2, 80 values per tile row (two weight panels)", {1, 8, 5, 6}, {8, 40, 2, 2}, {Ints("strides", {2, 2})}},
      {"tiled 1x3 s(1,3): rows written in place", {2, 4, 3, 5}, {4, 6, 1, 3}, {Ints("strides", {1, 3})}},
      {"tiled 1x1 s1", {1, 7, 6, 5}, {7, 9, 1, 1}, {}},
      {"tiled by output_shape = the full result", {1, 4, 5, 5}, {4, 3, 2, 2}, {Ints("strides", {2, 2}), Ints("output_shape", {10, 10})}},
      {"kernel = stride with output_padding (not tiled)", {1, 4, 5, 5}, {4, 3, 2, 2}, {Ints("strides", {2, 2}), Ints("output_padding", {1, 1})}},
      {"kernel = stride with pads (not tiled)", {1, 4, 5, 5}, {4, 3, 2, 2}, {Ints("strides", {2, 2}), Ints("pads", {1, 0, 0, 1})}},
      {"kernel = stride, group 2 (not tiled)", {1, 4, 5, 5}, {4, 3, 2, 2}, {Attribute::Int("group", 2), Ints("strides", {2, 2})}},
  };
}

TEST(CpuConvTranspose, MatchesReferenceOnAttributeGridBothLayouts) {
  for (const DeconvCase& c : Cases())
    for (bool nhwc : {false, true}) ExpectCpuMatchesReference(Make(c, nhwc), c.name + (nhwc ? " [NHWC]" : " [NCHW]"));
}

// The tiled cases once more on the path of CPUs without AVX-512 (one
// oneDNN matmul and a copy): KILN_CPU_DIRECT=0 turns kiln's register tiles
// off, so this machine runs that path too.
TEST(CpuConvTranspose, TiledCasesOnTheOneDnnMatmul) {
  setenv("KILN_CPU_DIRECT", "0", 1);
  for (const DeconvCase& c : Cases())
    if (std::string(c.name).rfind("tiled", 0) == 0) ExpectCpuMatchesReference(Make(c, true), c.name + std::string(" [oneDNN matmul]"));
  unsetenv("KILN_CPU_DIRECT");
}

TEST(CpuConvTranspose, DynamicShapesRebuildPerShape) {
  ir::GraphBuilder b(17, "main", 3);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(3), ir::Dim::Symbol("H"), ir::Dim::Symbol("W")});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {3, 4, 3, 3}, -1, 1);
  auto bias = b.AddRandomInitializer("b", DType::kFloat32, {4}, -1, 1);
  b.AddOutput(b.AddNode("ConvTranspose", {x, w, bias}, {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1}), Ints("output_padding", {1, 0})}, "deconv"));
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  for (Shape s : {Shape{1, 3, 5, 5}, Shape{2, 3, 7, 4}, Shape{1, 3, 5, 5}}) {
    ir::SeededRng rng(9);
    Built built{*m, {{"x", *ir::RandomTensor(DType::kFloat32, s, rng, -1, 1)}}, 0};
    ExpectCpuMatchesReference(built, ShapeToString(s));
  }
}

std::string RunsOn(const Built& b) {
  auto s = CreateSessionFromModel(b.model, CpuOptions());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return "";
  auto ref = CreateSessionFromModel(b.model);
  auto got = (*s)->Run(b.feeds);
  auto want = (*ref)->Run(b.feeds);
  EXPECT_TRUE(got.ok() && want.ok());
  if (got.ok() && want.ok()) ExpectClose((*got)[0], (*want)[0], "declined case");
  return (*s)->impl().executor->node_providers()[b.node];
}

TEST(CpuConvTranspose, DeclinedCasesFallBack) {
  // Weights fed at run time.
  EXPECT_EQ(RunsOn(Make(Cases()[1], false, /*const_w=*/false)), "reference");
  // output_padding >= stride (allowed under a dilation): oneDNN's end pad would be <= -stride.
  DeconvCase op{"", {1, 2, 5, 5}, {2, 3, 3, 3}, {Ints("dilations", {2, 2}), Ints("output_padding", {1, 1})}};
  EXPECT_EQ(RunsOn(Make(op, false)), "reference");
  // output_shape two past the full result: one extra cell lands before the first.
  DeconvCase big{"", {1, 3, 4, 4}, {3, 2, 3, 3}, {Ints("strides", {2, 2}), Ints("output_shape", {11, 9})}};
  EXPECT_EQ(RunsOn(Make(big, true)), "reference");
  // 1-D ConvTranspose.
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 2, 6});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {2, 3, 3}, -1, 1);
  b.AddOutput(b.AddNode("ConvTranspose", {x, w}, {}, "deconv"));
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  ir::SeededRng rng(1);
  EXPECT_EQ(RunsOn(Built{*m, {{"x", *ir::RandomTensor(DType::kFloat32, {1, 2, 6}, rng, -1, 1)}}, 0}), "reference");
}

// ConvTranspose + activation at opt level all becomes FusedConvTranspose
// on cpu (the activation a oneDNN post-op) on the tiled path and on the
// deconvolution; compared with the reference running the unoptimized graph.
TEST(CpuConvTranspose, FusedActivationOnBothPaths) {
  struct ActCase {
    const char* name;
    std::function<std::string(ir::GraphBuilder&, const std::string&)> build;
  };
  const std::vector<ActCase> acts = {
      {"Relu", [](ir::GraphBuilder& b, const std::string& v) { return b.AddNode("Relu", {v}); }},
      {"Sigmoid", [](ir::GraphBuilder& b, const std::string& v) { return b.AddNode("Sigmoid", {v}); }},
      {"HardSwish * 0.5 + 0.25 (post_affine)",
       [](ir::GraphBuilder& b, const std::string& v) {
         auto h = b.AddNode("HardSwish", {v});
         auto m = b.AddNode("Mul", {h, b.AddInitializer("half", Tensor::FromVector<float>(DType::kFloat32, {}, {0.5f}))});
         return b.AddNode("Add", {m, b.AddInitializer("quarter", Tensor::FromVector<float>(DType::kFloat32, {}, {0.25f}))});
       }},
  };
  const std::vector<DeconvCase> shapes = {
      {"tiled 2x2 s2", {1, 6, 7, 5}, {6, 4, 2, 2}, {Ints("strides", {2, 2})}},
      {"tiled 2x2 s2, 12 channels (a product per tile row)", {1, 6, 7, 5}, {6, 12, 2, 2}, {Ints("strides", {2, 2})}},
      {"tiled 2x2 s2 to one channel (pixel-vectorized)", {1, 6, 7, 37}, {6, 1, 2, 2}, {Ints("strides", {2, 2})}},
      {"deconvolution 3x3 s2 p1", {1, 6, 5, 5}, {6, 4, 3, 3}, {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1})}},
  };
  for (const DeconvCase& c : shapes)
    for (const ActCase& a : acts) {
      const std::string what = c.name + std::string(" + ") + a.name;
      ir::GraphBuilder b(17, "main", 11);
      auto x = b.AddInput("x", DType::kFloat32, c.x);
      auto w = b.AddRandomInitializer("w", DType::kFloat32, c.w, -0.5, 0.5);
      auto bias = b.AddRandomInitializer("b", DType::kFloat32, {c.w[1]}, -0.5, 0.5);
      b.AddOutput(a.build(b, b.AddNode("ConvTranspose", {x, w, bias}, c.attrs, "deconv")));
      auto m = b.Build();
      ASSERT_TRUE(m.ok()) << m.status().ToString();
      ir::SeededRng rng(3);
      std::map<std::string, Tensor> feeds = {{"x", *ir::RandomTensor(DType::kFloat32, c.x, rng, -2, 2)}};
      SessionOptions o = CpuOptions();
      o.opt_level = "all";
      auto cpu = CreateSessionFromModel(*m, o);
      ASSERT_TRUE(cpu.ok()) << what << ": " << cpu.status().ToString();
      const runtime::Executor& ex = *(*cpu)->impl().executor;
      ASSERT_EQ(ex.model().graph.nodes.size(), 1u) << what << ": not fused into one node";
      EXPECT_EQ(ex.model().graph.nodes[0].op_type, "FusedConvTranspose") << what;
      EXPECT_EQ(ex.node_providers()[0], "cpu") << what << " fell back";
      auto ref = CreateSessionFromModel(*m);
      ASSERT_TRUE(ref.ok());
      auto want = (*ref)->Run(feeds);
      auto got = (*cpu)->Run(feeds);
      ASSERT_TRUE(want.ok() && got.ok()) << what;
      ExpectClose((*got)[0], (*want)[0], what);
    }
}

}  // namespace
}  // namespace kiln
