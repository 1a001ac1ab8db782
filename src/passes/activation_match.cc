#include "passes/activation_match.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::passes {
namespace {

// One-element constant operand of an elementwise op on `v`, that cannot
// change the result's shape: rank at most v's (rank 0 when v's is unknown).
std::optional<double> ScalarOperand(const GraphIndex& index, const TypeMap& types, const std::string& name,
                                    const std::string& v) {
  const Tensor* t = index.Constant(name);
  if (!t || !DTypeIsFloat(t->dtype())) return std::nullopt;
  auto dims = DimsOf(types, v);
  if (t->rank() > 0 && (!dims || static_cast<size_t>(t->rank()) > dims->size())) return std::nullopt;
  return ScalarValue(t);
}

bool Near(double x, double want) { return std::fabs(x - want) <= 1e-6 * std::fabs(want); }

// An op of the default domain with one output and [min, max] inputs (the
// readers matched here always have input 0).
bool Is(const ir::Node& n, const char* op, size_t min_inputs = 1, size_t max_inputs = 1) {
  return n.op_type == op && IsDefaultDomain(n) && n.outputs.size() == 1 && n.HasOutput(0) && n.inputs.size() >= min_inputs &&
         n.inputs.size() <= max_inputs && n.HasInput(0);
}

// The other operand of a binary node that reads `v`; "" when v is not an
// operand or is both.
std::string OtherOperand(const ir::Node& n, const std::string& v) {
  if (n.inputs.size() != 2) return "";
  if (n.inputs[0] == v && n.inputs[1] != v) return n.inputs[1];
  if (n.inputs[1] == v && n.inputs[0] != v) return n.inputs[0];
  return "";
}

// The single node that reads `value` and nothing else does.
std::optional<size_t> SoleReader(const GraphIndex& index, const std::string& value) {
  const auto& c = index.Consumers(value);
  if (c.size() != 1 || !index.OnlyFeeds(value, c[0].node)) return std::nullopt;
  return c[0].node;
}

// Clip's bounds when constant: inputs from opset 11, attributes before.
std::optional<std::pair<double, double>> ClipBounds(const ir::Node& n, const GraphIndex& index, int64_t opset) {
  if (opset < 11) {
    auto lo = n.GetFloat("min", std::numeric_limits<float>::lowest());
    auto hi = n.GetFloat("max", std::numeric_limits<float>::max());
    if (!lo.ok() || !hi.ok()) return std::nullopt;
    return std::make_pair(static_cast<double>(*lo), static_cast<double>(*hi));
  }
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  for (size_t i : {1, 2}) {
    if (!n.HasInput(i)) continue;
    auto c = ScalarValue(index.Constant(n.inputs[i]));
    if (!c) return std::nullopt;
    (i == 1 ? lo : hi) = *c;
  }
  return std::make_pair(lo, hi);
}

// An activation that is one node reading v (input 0).
std::optional<ActivationMatch> MatchSingle(const ir::Graph& g, const GraphIndex& index, const PassContext& ctx, size_t ni) {
  const ir::Node& n = g.nodes[ni];
  ActivationMatch m;
  m.nodes = {ni};
  m.output = n.outputs.empty() ? "" : n.outputs[0];
  m.ops = n.op_type;
  ops::ActivationAttrs& a = m.act;
  if (Is(n, "Relu")) a.kind = ops::Activation::kRelu;
  else if (Is(n, "Sigmoid")) a.kind = ops::Activation::kSigmoid;
  else if (Is(n, "Tanh")) a.kind = ops::Activation::kTanh;
  else if (Is(n, "HardSwish")) a.kind = ops::Activation::kHardSwish;
  else if (Is(n, "LeakyRelu")) {
    auto alpha = n.GetFloat("alpha", 0.01f);
    if (!alpha.ok()) return std::nullopt;
    a.kind = ops::Activation::kLeakyRelu;
    a.alpha = *alpha;
  } else if (Is(n, "HardSigmoid")) {
    auto alpha = n.GetFloat("alpha", 0.2f);
    auto beta = n.GetFloat("beta", 0.5f);
    if (!alpha.ok() || !beta.ok()) return std::nullopt;
    a.kind = ops::Activation::kHardSigmoid;
    a.alpha = *alpha;
    a.beta = *beta;
  } else if (Is(n, "Clip", 1, 3)) {
    auto b = ClipBounds(n, index, ctx.OpsetFor(""));
    if (!b) return std::nullopt;
    a.kind = ops::Activation::kClip;
    a.alpha = static_cast<float>(b->first);
    a.beta = static_cast<float>(b->second);
    // Bounds beyond float range are infinite in float; one that float
    // rounds would clip at another value.
    if (std::isfinite(b->first) && static_cast<double>(a.alpha) != b->first) return std::nullopt;
    if (std::isfinite(b->second) && static_cast<double>(a.beta) != b->second) return std::nullopt;
  } else {
    return std::nullopt;
  }
  return m;
}

// A division by 6 of `value`: Div(value, 6) or Mul(value, 1/6).
bool IsSixth(const ir::Node& n, const GraphIndex& index, const TypeMap& types, const std::string& value) {
  if (Is(n, "Div", 2, 2) && n.inputs[0] == value && n.inputs[1] != value) {
    auto c = ScalarOperand(index, types, n.inputs[1], value);
    return c && *c == 6.0;
  }
  if (Is(n, "Mul", 2, 2)) {
    const std::string o = OtherOperand(n, value);
    auto c = o.empty() ? std::nullopt : ScalarOperand(index, types, o, value);
    return c && Near(*c, 1.0 / 6.0);
  }
  return false;
}

// Patterns where v has two readers `a` and `b` (tried both ways round).
std::optional<ActivationMatch> MatchPair(const ir::Graph& g, const GraphIndex& index, const TypeMap& types,
                                         const PassContext& ctx, const std::string& v, size_t ai, size_t bi) {
  const ir::Node& a = g.nodes[ai];
  const ir::Node& b = g.nodes[bi];
  ActivationMatch m;
  auto mul_by = [&](const ir::Node& n, const std::string& value) { return Is(n, "Mul", 2, 2) && OtherOperand(n, v) == value; };
  // SiLU: v * Sigmoid(v); HardSwish: v * HardSigmoid(v) with alpha 1/6, beta 1/2.
  if ((Is(a, "Sigmoid") || Is(a, "HardSigmoid")) && a.inputs[0] == v && SoleReader(index, a.outputs[0]) == bi &&
      mul_by(b, a.outputs[0])) {
    if (a.op_type == "Sigmoid") {
      m.act.kind = ops::Activation::kSiLU;
    } else {
      auto alpha = a.GetFloat("alpha", 0.2f);
      auto beta = a.GetFloat("beta", 0.5f);
      if (!alpha.ok() || !beta.ok() || !Near(*alpha, 1.0 / 6.0) || *beta != 0.5f) return std::nullopt;
      m.act.kind = ops::Activation::kHardSwish;
    }
    m.nodes = {ai, bi};
    m.output = b.outputs[0];
    m.ops = a.op_type + "+Mul";
    return m;
  }
  // HardSwish decomposed: Add(v, 3) -> Clip(0, 6) -> then either
  //   Mul(v, clip) -> Div 6 / Mul 1/6      (Paddle's x * Clip(x+3, 0, 6) / 6)
  //   Div 6 / Mul 1/6 -> Mul(v, clip/6)
  if (!Is(a, "Add", 2, 2)) return std::nullopt;
  const std::string three = OtherOperand(a, v);
  auto c3 = three.empty() ? std::nullopt : ScalarOperand(index, types, three, v);
  if (!c3 || *c3 != 3.0) return std::nullopt;
  auto ci = SoleReader(index, a.outputs[0]);
  if (!ci) return std::nullopt;
  const ir::Node& clip = g.nodes[*ci];
  if (!Is(clip, "Clip", 1, 3) || clip.inputs[0] != a.outputs[0]) return std::nullopt;
  auto bounds = ClipBounds(clip, index, ctx.OpsetFor(""));
  if (!bounds || bounds->first != 0.0 || bounds->second != 6.0) return std::nullopt;
  const std::string clip_out = clip.outputs[0];
  auto mi = SoleReader(index, clip_out);
  if (!mi) return std::nullopt;
  const ir::Node& mid = g.nodes[*mi];
  std::optional<size_t> last;
  if (*mi == bi && mul_by(b, clip_out)) {
    auto di = SoleReader(index, b.outputs[0]);
    if (di && IsSixth(g.nodes[*di], index, types, b.outputs[0])) last = di;
  } else if (IsSixth(mid, index, types, clip_out) && SoleReader(index, mid.outputs[0]) == bi && mul_by(b, mid.outputs[0])) {
    last = bi;
  }
  if (!last) return std::nullopt;
  m.act.kind = ops::Activation::kHardSwish;
  m.nodes = {ai, *ci, *mi};
  if (*last != *mi) m.nodes.push_back(*last);
  if (std::find(m.nodes.begin(), m.nodes.end(), bi) == m.nodes.end()) m.nodes.push_back(bi);
  m.output = g.nodes[*last].outputs[0];
  m.ops = "Add+Clip+" + mid.op_type + "+" + g.nodes[*last].op_type;
  return m;
}

}  // namespace

std::optional<ActivationMatch> MatchActivation(const ir::Graph& g, const GraphIndex& index, const TypeMap& types,
                                               const PassContext& ctx, const std::string& v) {
  if (v.empty() || index.IsGraphOutput(v) || index.ReadBySubgraph(v)) return std::nullopt;
  const auto& uses = index.Consumers(v);
  if (uses.size() == 1 && uses[0].slot == 0) return MatchSingle(g, index, ctx, uses[0].node);
  if (uses.size() == 2 && uses[0].node != uses[1].node) {
    if (auto m = MatchPair(g, index, types, ctx, v, uses[0].node, uses[1].node)) return m;
    return MatchPair(g, index, types, ctx, v, uses[1].node, uses[0].node);
  }
  return std::nullopt;
}

}  // namespace kiln::passes
