// fold_shape: Shape of a value whose shape is known at load time becomes an
// initializer; the Gather/Slice/Concat/Cast chains exporters build on it
// then fold in fold_constants. When only some dims are known (a dynamic
// batch), a Gather or Slice of the Shape that picks only known dims folds
// here directly (Shape(x)[1] = channels).
//
// Preconditions: the types come from load-time inference (graph_util.h),
// whose known dims hold for every run: the session checks each feed against
// the declared input shape, and inference is exact.
// The partial case evaluates the Gather/Slice on the shape with each unknown
// dim replaced by a distinct negative marker; it folds only when no marker
// reaches the result (real dims are never negative).
// Invariants: value names are kept; the Shape node stays until
// eliminate_dead_code finds it unused.
#include <algorithm>

#include "passes/evaluate.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {
namespace {

// Shape's start/end attributes (opset 15): clamped to [0, rank] after adding
// rank to negatives.
std::pair<int64_t, int64_t> ShapeRange(const ir::Node& n, int64_t opset, int64_t rank) {
  int64_t start = 0, end = rank;
  if (opset >= 15) {
    auto s = n.GetInt("start", 0);
    auto e = n.GetInt("end", rank);
    if (s.ok()) start = *s;
    if (e.ok()) end = *e;
  }
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  return {clamp(start), clamp(end)};
}

}  // namespace

Result<bool> FoldShape(ir::Graph& g, PassContext& ctx) {
  const TypeMap types = InferTypes(ctx.model());
  const GraphIndex index(g);
  const int64_t opset = ctx.OpsetFor("");
  std::vector<bool> dead(g.nodes.size(), false);
  int full = 0, partial = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (n.op_type != "Shape" || !IsDefaultDomain(n) || !n.HasInput(0) || !n.HasOutput(0)) continue;
    if (g.IsInitializer(n.outputs[0])) continue;
    auto dims = DimsOf(types, n.inputs[0]);
    if (!dims) continue;
    auto [start, end] = ShapeRange(n, opset, static_cast<int64_t>(dims->size()));
    std::vector<int64_t> values;
    bool known = true;
    for (int64_t k = start; k < end; ++k) {
      const ir::Dim& d = (*dims)[static_cast<size_t>(k)];
      known = known && d.known();
      values.push_back(d.known() ? d.value : -1 - k);  // the marker of an unknown dim
    }
    const Shape len = {static_cast<int64_t>(values.size())};
    Tensor shape = Tensor::FromVector<int64_t>(DType::kInt64, len, values);
    if (known) {
      g.initializers[n.outputs[0]] = shape;
      g.value_info.erase(n.outputs[0]);
      dead[i] = true;
      ++full;
      continue;
    }
    for (const auto& use : index.Consumers(n.outputs[0])) {
      const ir::Node& c = g.nodes[use.node];
      if ((c.op_type != "Gather" && c.op_type != "Slice") || !IsDefaultDomain(c) || use.slot != 0 || dead[use.node]) continue;
      if (c.outputs.size() != 1 || !c.HasOutput(0)) continue;
      std::vector<Tensor> inputs(c.inputs.size());
      bool constant = true;
      for (size_t k = 0; k < c.inputs.size() && constant; ++k) {
        if (!c.HasInput(k)) continue;
        if (k == 0) { inputs[k] = shape; continue; }
        const Tensor* t = index.Constant(c.inputs[k]);
        constant = t != nullptr;
        if (t) inputs[k] = *t;
      }
      if (!constant) continue;
      auto out = EvaluateNode(ctx.model(), c, inputs);
      if (!out.ok()) continue;
      auto v = IntValues(&(*out)[0]);
      if (!v || std::any_of(v->begin(), v->end(), [](int64_t x) { return x < 0; })) continue;
      g.initializers[c.outputs[0]] = (*out)[0];
      g.value_info.erase(c.outputs[0]);
      dead[use.node] = true;
      ++partial;
    }
  }
  if (full + partial == 0) return false;
  EraseNodes(g, dead);
  ctx.Note("fold_shape", std::to_string(full) + " Shape nodes folded, " + std::to_string(partial) +
                             " Gather/Slice of partly known shapes folded");
  return true;
}

}  // namespace kiln::passes
