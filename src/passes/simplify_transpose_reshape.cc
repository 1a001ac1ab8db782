// simplify_transpose_reshape: shortens chains of pure data movement.
//   Transpose(Transpose(x, p), q)  -> Transpose(x, p∘q)   (out[i] = x[p[q[i]]])
//   Transpose(x, identity perm)    -> x
//   Reshape(Reshape(x, s1), s2)    -> Reshape(x, s2)
//   Reshape(x, s) with out shape == x's static shape -> x
//
// Preconditions: the inner node's output feeds only the outer node and is no
// graph output. A Transpose without perm reverses the axes, so its rank must
// be known. Reshape (opset 5+) needs a constant s2 with no 0 entries unless
// allowzero = 1 (a 0 copies a dim of the *intermediate* value); when s2 has
// such zeros and the outer output's shape is static, s2 is replaced by that
// shape. A -1 in s2 depends only on the element count, which both forms share.
// Invariants: the outer node keeps its name and output name; removed
// identities follow Bypass (graph_util.h), so graph output names stay.
#include <algorithm>
#include <numeric>

#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {
namespace {

// The permutation of a Transpose, or nullopt when the rank is unknown and
// there is no perm attribute.
std::optional<std::vector<int64_t>> Perm(const ir::Node& n, const TypeMap& types) {
  auto p = n.GetInts("perm");
  if (!p.ok()) return std::nullopt;
  if (!p->empty()) return *p;
  auto d = DimsOf(types, n.inputs[0]);
  if (!d) return std::nullopt;
  std::vector<int64_t> rev(d->size());
  std::iota(rev.rbegin(), rev.rend(), 0);
  return rev;
}

bool IsIdentityPerm(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool IsPermutation(const std::vector<int64_t>& p) {
  std::vector<bool> seen(p.size(), false);
  for (int64_t v : p) {
    if (v < 0 || v >= static_cast<int64_t>(p.size()) || seen[static_cast<size_t>(v)]) return false;
    seen[static_cast<size_t>(v)] = true;
  }
  return true;
}

bool Is(const ir::Node& n, const char* op) { return n.op_type == op && IsDefaultDomain(n) && n.HasInput(0) && n.outputs.size() == 1 && n.HasOutput(0); }

}  // namespace

Result<bool> SimplifyTransposeReshape(ir::Graph& g, PassContext& ctx) {
  const TypeMap types = InferTypes(ctx.model());
  const int64_t opset = ctx.OpsetFor("");
  NameSet names(g);
  int merged = 0, removed = 0;
  KILN_ASSIGN_OR_RETURN(int n, RewriteAll(g, [&](ir::Graph& gr, const GraphIndex& index, size_t i) -> Result<bool> {
    const ir::Node& node = gr.nodes[i];
    if (Is(node, "Transpose")) {
      auto q = Perm(node, types);
      if (!q || !IsPermutation(*q)) return false;
      if (IsIdentityPerm(*q)) {
        if (!Bypass(gr, index, i)) return false;
        ++removed;
        return true;
      }
      auto pi = index.Producer(node.inputs[0]);
      if (!pi || !Is(gr.nodes[*pi], "Transpose") || !index.OnlyFeeds(node.inputs[0], i)) return false;
      auto p = Perm(gr.nodes[*pi], types);
      if (!p || p->size() != q->size() || !IsPermutation(*p)) return false;
      std::vector<int64_t> composed(q->size());
      for (size_t k = 0; k < q->size(); ++k) composed[k] = (*p)[static_cast<size_t>((*q)[k])];
      ir::Node& outer = gr.nodes[i];
      gr.value_info.erase(outer.inputs[0]);
      outer.inputs[0] = gr.nodes[*pi].inputs[0];
      outer.attrs["perm"] = ir::Attribute::Ints("perm", composed);
      std::vector<bool> dead(gr.nodes.size(), false);
      dead[*pi] = true;
      EraseNodes(gr, dead);
      ++merged;
      return true;
    }
    if (!Is(node, "Reshape") || opset < 5 || node.inputs.size() != 2) return false;
    auto in_shape = StaticShape(types, node.inputs[0]);
    auto out_shape = StaticShape(types, node.outputs[0]);
    if (in_shape && out_shape && *in_shape == *out_shape) {
      if (!Bypass(gr, index, i)) return false;
      ++removed;
      return true;
    }
    auto pi = index.Producer(node.inputs[0]);
    if (!pi || !Is(gr.nodes[*pi], "Reshape") || gr.nodes[*pi].inputs.size() != 2 || !index.OnlyFeeds(node.inputs[0], i)) return false;
    auto s2 = IntValues(index.Constant(node.inputs[1]));
    if (!s2) return false;
    auto allowzero = node.GetInt("allowzero", 0);
    const bool copies_dims = std::find(s2->begin(), s2->end(), 0) != s2->end() && !(allowzero.ok() && *allowzero != 0);
    std::string shape_name = node.inputs[1];
    if (copies_dims) {
      if (!out_shape) return false;
      shape_name = names.Fresh(node.outputs[0] + "_shape");
      gr.initializers[shape_name] = Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(out_shape->size())}, *out_shape);
    }
    ir::Node& outer = gr.nodes[i];
    gr.value_info.erase(outer.inputs[0]);
    outer.inputs[0] = gr.nodes[*pi].inputs[0];
    outer.inputs[1] = shape_name;
    std::vector<bool> dead(gr.nodes.size(), false);
    dead[*pi] = true;
    EraseNodes(gr, dead);
    ++merged;
    return true;
  }));
  if (n == 0) return false;
  ctx.Note("simplify_transpose_reshape", std::to_string(merged) + " chains merged, " + std::to_string(removed) + " identities removed");
  return true;
}

}  // namespace kiln::passes
