// fuse_separable_conv: MobileNet's inverted-residual block (1x1 expansion,
// depthwise kxk, 1x1 projection) or a depthwise-separable pair becomes one
// FusedSeparableConv (ops/fused.h), so a provider can run it tile by tile
// and keep the widest value, the expanded one, in cache:
//
//   [Conv/FusedConv 1x1 (expand)] -> Conv/FusedConv depthwise kxk -> Conv/FusedConv 1x1 (project)
//     -> FusedSeparableConv(X, We, Be, Wd, Bd, Wp, Bp, Z)
//
// Each Conv may be a FusedConv made by the passes before (its activation and
// post_affine become the fused node's expand_*, depthwise_* or plain
// activation attributes); only the projection may carry a residual Z.
// Preconditions: the expansion and projection are 1x1, group 1, stride 1,
// dilation 1, no pads; the depthwise conv has group == its input channels ==
// its output channels (W [M, 1, k, k]), a square odd kernel, auto_pad NOTSET;
// all weights and biases constant (initializers or Constant nodes); float32;
// X 4-D with its channels known (batch and size may be dynamic where there
// is an expansion; a pair needs a static shape, see Match); a residual of
// provably the projection's shape; each intermediate value feeds only the
// next conv and is no graph output. The expansion is taken when the depthwise
// input comes from a matching conv, else the pair alone is fused.
// Runs last among the fusions (after fuse_post_affine), so the three convs
// already carry their activations, residual Add and post_affine.
// Invariants: the fused node takes the depthwise node's name (so profiles
// stay readable), the projection's output name, and sits where the
// projection was; the intermediates' value_info is erased.
// KILN_FUSE_SEPARABLE=0 turns the pass off (for A/B timing of providers
// against the unfused convs).
#include <algorithm>
#include <optional>

#include "ops/conv.h"
#include "ops/fused.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {
namespace {

// A Conv or FusedConv with constant float32 2-D weights and bias.
struct ConvMatch {
  size_t node = 0;
  Shape w;  // [O, I/group, kh, kw]
  ops::ConvAttrs attrs;
  ops::ActivationAttrs act;
  bool residual = false;
};

bool AllEqual(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
}

std::optional<ConvMatch> MatchConv(const ir::Graph& g, const GraphIndex& index, size_t i, int64_t opset) {
  const ir::Node& n = g.nodes[i];
  const bool plain = n.op_type == "Conv" && IsDefaultDomain(n);
  const bool fused = n.op_type == "FusedConv" && n.domain == ops::kKilnDomain;
  if (!(plain || fused) || n.outputs.size() != 1 || !n.HasOutput(0) || !n.HasInput(0) || !n.HasInput(1)) return std::nullopt;
  if (n.inputs.size() > (fused ? 4u : 3u)) return std::nullopt;
  ConvMatch m;
  m.node = i;
  const Tensor* w = index.Constant(n.inputs[1]);
  if (!w || w->dtype() != DType::kFloat32 || w->rank() != 4) return std::nullopt;
  m.w = w->shape();
  if (n.HasInput(2)) {
    const Tensor* b = index.Constant(n.inputs[2]);
    if (!b || b->dtype() != DType::kFloat32 || b->numel() != m.w[0]) return std::nullopt;
  }
  m.residual = n.HasInput(3);
  if (fused) {
    auto act = ops::ParseActivation(n);
    if (!act.ok()) return std::nullopt;
    m.act = *act;
  }
  auto attrs = ops::ParseConv(n, fused ? 11 : opset);
  if (!attrs.ok() || attrs->sp.auto_pad != ops::AutoPad::kNotSet) return std::nullopt;
  m.attrs = *attrs;
  if (m.attrs.sp.kernel_shape.empty()) m.attrs.sp.kernel_shape = {m.w[2], m.w[3]};
  if (!ops::ResolveSpatial(n, m.attrs.sp, 2).ok()) return std::nullopt;
  if (m.attrs.sp.kernel_shape != std::vector<int64_t>{m.w[2], m.w[3]}) return std::nullopt;
  return m;
}

// 1x1, group 1, stride 1, dilation 1, no pads: a per-pixel matrix product.
bool IsPointwise(const ConvMatch& c) {
  return c.w[2] == 1 && c.w[3] == 1 && c.attrs.group == 1 && AllEqual(c.attrs.sp.strides, 1) && AllEqual(c.attrs.sp.dilations, 1) &&
         AllEqual(c.attrs.sp.pads, 0);
}

bool IsStaticFloat4D(const TypeMap& types, const std::string& v) {
  auto s = StaticShape(types, v);
  return s && s->size() == 4 && DTypeOf(types, v) == DType::kFloat32;
}

// Float32, 4-D, with `channels` channels (batch and size may be dynamic).
bool IsFloat4DWithChannels(const TypeMap& types, const std::string& v, int64_t channels) {
  auto d = DimsOf(types, v);
  return d && d->size() == 4 && (*d)[1].known() && (*d)[1].value == channels && DTypeOf(types, v) == DType::kFloat32;
}

// v's only reader is slot 0 of `node`, and nothing else sees it.
bool FeedsOnly(const GraphIndex& index, const std::string& v, size_t node) {
  const auto& uses = index.Consumers(v);
  return uses.size() == 1 && uses[0].node == node && uses[0].slot == 0 && index.OnlyFeeds(v, node);
}

struct SeparableMatch {
  std::optional<ConvMatch> expand;
  ConvMatch depthwise;
  ConvMatch project;
};

// The pattern around depthwise candidate `i`.
std::optional<SeparableMatch> Match(const ir::Graph& g, const GraphIndex& index, const TypeMap& types, size_t i, int64_t opset) {
  auto dw = MatchConv(g, index, i, opset);
  if (!dw || dw->residual) return std::nullopt;
  const ir::Node& dn = g.nodes[i];
  const int64_t m = dw->w[0], k = dw->w[2];
  if (dw->w[1] != 1 || dw->attrs.group != m || dw->w[3] != k || k % 2 != 1) return std::nullopt;
  const std::string& x = dn.inputs[0];
  const std::string& d = dn.outputs[0];
  if (!IsFloat4DWithChannels(types, x, m) || !IsFloat4DWithChannels(types, d, m)) return std::nullopt;
  const auto& uses = index.Consumers(d);
  if (uses.size() != 1 || !FeedsOnly(index, d, uses[0].node)) return std::nullopt;
  auto pw = MatchConv(g, index, uses[0].node, opset);
  if (!pw || !IsPointwise(*pw) || pw->w[1] != m) return std::nullopt;
  const ir::Node& pn = g.nodes[pw->node];
  if (!IsFloat4DWithChannels(types, pn.outputs[0], pw->w[0])) return std::nullopt;
  if (pw->residual && !ProvablySameShape(types, pn.inputs[3], pn.outputs[0])) return std::nullopt;
  SeparableMatch s{std::nullopt, *dw, *pw};
  if (auto p = index.Producer(x); p && FeedsOnly(index, x, i)) {
    auto ex = MatchConv(g, index, *p, opset);
    if (ex && !ex->residual && IsPointwise(*ex) && ex->w[0] == m && IsFloat4DWithChannels(types, g.nodes[*p].inputs[0], ex->w[1]))
      s.expand = *ex;
  }
  // A pair without expansion only where the input's shape is static: on
  // PP-OCRv4's (LCNet's) pairs the fused kernel lost to the separate
  // convolutions (det at 640x640 made static: 29.3 ms unfused against 30.5
  // fused, 5 alternated runs), so its dynamic models keep them separate.
  if (!s.expand && !IsStaticFloat4D(types, x)) return std::nullopt;
  return s;
}

// The fused node of a match (inputs by ops::SeparableInput slot).
ir::Node MakeFused(const ir::Graph& g, const SeparableMatch& s) {
  const ir::Node& dn = g.nodes[s.depthwise.node];
  const ir::Node& pn = g.nodes[s.project.node];
  auto input = [](const ir::Node& n, size_t i) { return n.HasInput(i) ? n.inputs[i] : std::string(); };
  ir::Node f;
  f.name = dn.name;
  f.op_type = "FusedSeparableConv";
  f.domain = ops::kKilnDomain;
  f.inputs.assign(ops::kSepNumInputs, "");
  f.inputs[ops::kSepX] = dn.inputs[0];
  if (s.expand) {
    const ir::Node& en = g.nodes[s.expand->node];
    f.inputs[ops::kSepX] = en.inputs[0];
    f.inputs[ops::kSepWe] = en.inputs[1];
    f.inputs[ops::kSepBe] = input(en, 2);
    for (auto& a : ops::ActivationToAttributes(s.expand->act, "expand_")) f.attrs[a.name] = a;
  }
  f.inputs[ops::kSepWd] = dn.inputs[1];
  f.inputs[ops::kSepBd] = input(dn, 2);
  f.inputs[ops::kSepWp] = pn.inputs[1];
  f.inputs[ops::kSepBp] = input(pn, 2);
  f.inputs[ops::kSepZ] = input(pn, 3);
  while (f.inputs.back().empty()) f.inputs.pop_back();
  f.outputs = {pn.outputs[0]};
  for (auto& a : ops::ActivationToAttributes(s.depthwise.act, "depthwise_")) f.attrs[a.name] = a;
  for (auto& a : ops::ActivationToAttributes(s.project.act, "")) f.attrs[a.name] = a;
  const ops::SpatialAttrs& sp = s.depthwise.attrs.sp;
  f.attrs["kernel_shape"] = ir::Attribute::Ints("kernel_shape", sp.kernel_shape);
  f.attrs["strides"] = ir::Attribute::Ints("strides", sp.strides);
  f.attrs["pads"] = ir::Attribute::Ints("pads", sp.pads);
  f.attrs["dilations"] = ir::Attribute::Ints("dilations", sp.dilations);
  return f;
}

}  // namespace

Result<bool> FuseSeparableConv(ir::Graph& g, PassContext& ctx) {
  if (PassSwitchedOff(PassSwitch::kFuseSeparable)) return false;
  const TypeMap types = InferTypes(ctx.model());
  const int64_t opset = ctx.OpsetFor("");
  std::vector<std::string> notes;
  KILN_ASSIGN_OR_RETURN(int n, RewriteAll(g, [&](ir::Graph& gr, const GraphIndex& index, size_t i) -> Result<bool> {
    auto s = Match(gr, index, types, i, opset);
    if (!s || !ctx.ImportKilnDomain()) return false;
    ir::Node f = MakeFused(gr, *s);
    std::string what = (s->expand ? gr.nodes[s->expand->node].name + " + " : std::string()) + gr.nodes[s->depthwise.node].name +
                       " (depthwise " + std::to_string(s->depthwise.w[2]) + "x" + std::to_string(s->depthwise.w[3]) + ") + " +
                       gr.nodes[s->project.node].name;
    if (f.HasInput(ops::kSepZ)) what += " + residual";
    notes.push_back(what + " -> FusedSeparableConv");
    std::vector<size_t> pattern = {s->depthwise.node, s->project.node};
    if (s->expand) pattern.push_back(s->expand->node);
    const size_t last = *std::max_element(pattern.begin(), pattern.end());
    std::vector<bool> dead(gr.nodes.size(), false);
    for (size_t k : pattern) {
      dead[k] = k != last;
      if (k != s->project.node) gr.value_info.erase(gr.nodes[k].outputs[0]);
    }
    gr.nodes[last] = std::move(f);
    EraseNodes(gr, dead);
    return true;
  }));
  for (const auto& note : notes) ctx.Note("fuse_separable_conv", note);
  return n > 0;
}

}  // namespace kiln::passes
