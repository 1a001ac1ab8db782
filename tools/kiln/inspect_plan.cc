// kiln inspect --plan: what a session of a provider will run. The passes'
// report (folds, fusions), then each node in execution order with the
// provider that runs it and the layout of each value it reads and writes,
// then the layout conversions the executor makes. This is the plan Run
// executes (the same executor, the same layout rule), not a re-derivation.
#include <cstdio>
#include <map>

#include "inspect_plan.h"
#include "runtime/session_internal.h"

namespace kiln::cli {
namespace {

int RankOf(const runtime::Executor& ex, const std::string& v) {
  auto it = ex.static_types().find(v);
  if (it == ex.static_types().end() || it->second.kind != ir::TypeInfo::Kind::kTensor || !it->second.shape) return -1;
  return static_cast<int>(it->second.shape->size());
}

std::string ValueText(const runtime::Executor& ex, const plan::LayoutPlan& lp, const std::string& v, const DimOrder* arrived) {
  if (v.empty()) return "-";
  const int rank = RankOf(ex, v);
  std::string s = v;
  if (rank < 2) return s;  // scalars and vectors have one layout
  auto it = lp.orders.find(v);
  const DimOrder& o = arrived ? *arrived : (it == lp.orders.end() ? kRowMajor : it->second);
  return s + ":" + OrderName(o, rank);
}

}  // namespace

void PrintPlan(const Session& session) {
  const auto& impl = session.impl();
  const runtime::Executor& ex = *impl.executor;
  const ir::Graph& g = ex.model().graph;
  std::printf("plan: provider %s, opt-level %s\n", impl.options.provider.c_str(), impl.options.opt_level.c_str());
  if (!impl.pass_report.notes.empty()) {
    std::printf("passes:\n");
    for (const std::string& n : impl.pass_report.notes) std::printf("  %s\n", n.c_str());
  }
  const plan::LayoutPlan lp = ex.PlanLayouts();
  std::map<std::pair<size_t, size_t>, const plan::Conversion*> conv_at;
  for (const auto& c : lp.conversions) conv_at[{c.node, c.input}] = &c;
  std::map<std::string, int> per_provider;
  std::printf("nodes (execution order; value:layout, '<-' marks an input converted first):\n");
  for (size_t idx : ex.execution_order()) {
    const ir::Node& n = g.nodes[idx];
    const std::string& prov = ex.node_providers()[idx];
    ++per_provider[prov];
    std::string ins, outs;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (g.IsInitializer(n.inputs[i])) continue;  // weights: packed by the kernel
      auto c = conv_at.find({idx, i});
      ins += (ins.empty() ? "" : ", ") + ValueText(ex, lp, n.inputs[i], c == conv_at.end() ? nullptr : &c->second->to);
      if (c != conv_at.end()) ins += "<-" + OrderName(c->second->from, c->second->rank);
    }
    for (const auto& o : n.outputs) outs += (outs.empty() ? "" : ", ") + ValueText(ex, lp, o, nullptr);
    const std::string op = (n.domain.empty() ? "" : n.domain + ".") + n.op_type;
    std::printf("  %-10s %-22s %-36s %s -> %s\n", prov.c_str(), op.c_str(), n.name.empty() ? "(unnamed)" : n.name.c_str(),
                ins.c_str(), outs.c_str());
  }
  std::printf("conversions: %zu\n", lp.conversions.size());
  for (const auto& c : lp.conversions) {
    const ir::Node& n = g.nodes[c.node];
    std::printf("  '%s' %s -> %s for node '%s' (%s)\n", c.value.c_str(), OrderName(c.from, c.rank).c_str(),
                OrderName(c.to, c.rank).c_str(), n.name.c_str(), n.op_type.c_str());
  }
  // Graph outputs leave row-major (Run returns dense tensors).
  size_t out_copies = 0;
  for (const auto& v : g.outputs) {
    auto it = lp.orders.find(v.name);
    const int rank = RankOf(ex, v.name);
    if (it == lp.orders.end() || rank < 2 || SameOrder(it->second, kRowMajor, rank)) continue;
    std::printf("  graph output '%s' %s -> %s on return\n", v.name.c_str(), OrderName(it->second, rank).c_str(), OrderName(kRowMajor, rank).c_str());
    ++out_copies;
  }
  std::printf("summary: %zu nodes;", g.nodes.size());
  for (const auto& [p, k] : per_provider) std::printf(" %d on %s;", k, p.c_str());
  std::printf(" %zu layout conversions (+%zu of graph outputs)\n", lp.conversions.size(), out_copies);
}

}  // namespace kiln::cli
