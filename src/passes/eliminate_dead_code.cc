// eliminate_dead_code: removes the nodes none of whose outputs reaches a
// graph output, then the initializers nothing reads (unless they are graph
// inputs: a user may feed those), then value_info of names that no longer
// exist.
//
// Preconditions: none (a graph with a cycle is left alone: the executor
// reports it). ONNX ops have no side effects, so a node whose results are
// never read can go.
// Invariants: graph inputs and outputs are untouched; a value read inside a
// subgraph of a live node is live.
#include <unordered_set>

#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {

Result<bool> EliminateDeadCode(ir::Graph& g, PassContext& ctx) {
  auto order = g.TopologicalOrder();
  if (!order.ok()) return false;
  std::unordered_set<std::string> live;
  for (const auto& v : g.outputs) live.insert(v.name);
  std::vector<bool> dead(g.nodes.size(), true);
  for (auto it = order->rbegin(); it != order->rend(); ++it) {
    const ir::Node& n = g.nodes[*it];
    bool used = false;
    for (const auto& o : n.outputs) used = used || (!o.empty() && live.count(o));
    if (!used) continue;
    dead[*it] = false;
    for (const auto& in : n.inputs)
      if (!in.empty()) live.insert(in);
    for (const auto& r : ir::NodeOuterReferences(n)) live.insert(r);
  }
  size_t nodes = 0;
  for (bool d : dead) nodes += d ? 1 : 0;
  EraseNodes(g, dead);

  std::unordered_set<std::string> inputs;
  for (const auto& v : g.inputs) inputs.insert(v.name);
  size_t inits = 0;
  for (auto it = g.initializers.begin(); it != g.initializers.end();) {
    if (!live.count(it->first) && !inputs.count(it->first)) {
      it = g.initializers.erase(it);
      ++inits;
    } else {
      ++it;
    }
  }

  std::unordered_set<std::string> exists(inputs.begin(), inputs.end());
  for (const auto& [name, t] : g.initializers) exists.insert(name);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) exists.insert(o);
  for (auto it = g.value_info.begin(); it != g.value_info.end();)
    it = exists.count(it->first) ? std::next(it) : g.value_info.erase(it);

  if (nodes + inits == 0) return false;
  ctx.Note("eliminate_dead_code", std::to_string(nodes) + " nodes and " + std::to_string(inits) + " initializers removed");
  return true;
}

}  // namespace kiln::passes
