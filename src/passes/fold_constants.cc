// fold_constants: every node whose inputs are all constant is evaluated once,
// with the reference kernels (evaluate.h), and its outputs become
// initializers. Constant nodes become initializers too (PaddleOCR exports
// keep all of their weights in Constant nodes), so later passes find weights
// in one place.
//
// Preconditions: none. Constant means an initializer that is not a graph
// input (a graph input with an initializer is a default the user may
// override) or the output of a node folded before, in topological order.
// Not folded: random ops and Dropout (their value is not a constant of the
// model; remove_identity handles inference Dropout), nodes with subgraphs,
// ops outside the default domain, outputs that are not tensors, and a node
// whose result would be large (over 16 MiB) and larger than its inputs (an
// Expand or ConstantOfShape is cheaper to run than to store).
// Invariants: value names are kept; a graph output that folds stays a graph
// output, now backed by an initializer.
#include <unordered_map>

#include "passes/evaluate.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {
namespace {

constexpr size_t kMaxGrownBytes = size_t{16} << 20;

bool Foldable(const ir::Node& n) {
  static const char* const kNotFoldable[] = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike",
                                             "Bernoulli",     "Multinomial",  "Dropout"};
  if (!IsDefaultDomain(n) || n.outputs.empty()) return false;
  for (const char* op : kNotFoldable)
    if (n.op_type == op) return false;
  for (const auto& [name, a] : n.attrs)
    if (a.g || !a.graphs.empty()) return false;
  return true;
}

}  // namespace

Result<bool> FoldConstants(ir::Graph& g, PassContext& ctx) {
  auto order = g.TopologicalOrder();
  if (!order.ok()) return false;  // the executor reports the broken graph
  std::unordered_map<std::string, Tensor> known;
  for (const auto& [name, t] : g.initializers) known[name] = t;
  for (const auto& v : g.inputs) known.erase(v.name);
  std::vector<bool> dead(g.nodes.size(), false);
  int folded = 0, constants = 0;
  for (size_t idx : *order) {
    const ir::Node& n = g.nodes[idx];
    if (!Foldable(n)) continue;
    std::vector<Tensor> inputs(n.inputs.size());
    size_t in_bytes = 0;
    bool all_known = true;
    for (size_t i = 0; i < n.inputs.size() && all_known; ++i) {
      if (n.inputs[i].empty()) continue;
      auto it = known.find(n.inputs[i]);
      all_known = it != known.end();
      if (all_known) {
        inputs[i] = it->second;
        in_bytes += it->second.dtype() == DType::kString ? 0 : it->second.nbytes();
      }
    }
    if (!all_known) continue;
    auto outs = EvaluateNode(ctx.model(), n, inputs);
    if (!outs.ok()) continue;  // left for the executor, which reports its own error if it must
    size_t out_bytes = 0;
    for (const auto& t : *outs)
      if (t.defined() && t.dtype() != DType::kString) out_bytes += t.nbytes();
    if (out_bytes > kMaxGrownBytes && out_bytes > in_bytes) continue;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      known[n.outputs[i]] = (*outs)[i];
      g.initializers[n.outputs[i]] = (*outs)[i];
      g.value_info.erase(n.outputs[i]);  // the initializer's type is exact
    }
    dead[idx] = true;
    (n.op_type == "Constant" ? constants : folded) += 1;
  }
  if (folded + constants == 0) return false;
  EraseNodes(g, dead);
  ctx.Note("fold_constants", std::to_string(folded) + " nodes folded, " + std::to_string(constants) +
                                 " Constant nodes made initializers");
  return true;
}

}  // namespace kiln::passes
