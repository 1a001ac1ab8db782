// kiln inspect MODEL: what the file declares (ir_version, producer, opsets,
// inputs and outputs with shapes), an op histogram and the graph as text.
// Works on models kiln cannot run: only the file is loaded; output shapes
// are completed by load-time inference when a session can be built.
#include <cstdio>
#include <map>

#include "cli_util.h"
#include "commands.h"
#include "inspect_plan.h"
#include "onnx/onnx_io.h"
#include "runtime/session_internal.h"

namespace kiln::cli {
namespace {

struct InspectArgs {
  std::string model;
  bool no_graph = false;
  bool plan = false;
  std::string provider = "cpu";
  std::string opt_level = "all";
  CacheOptions cache;
};

// --plan: only the plan of a session of the provider.
int DoInspectPlan(const InspectArgs& a) {
  SessionOptions o;
  o.provider = a.provider;
  o.opt_level = a.opt_level;
  ApplyCacheOptions(a.cache, o);
  auto s = Session::Create(a.model, o);
  if (!s.ok()) return ReportError("inspect", s.status(), kExitUsage);
  std::printf("model: %s\n", a.model.c_str());
  PrintPlan(**s);
  return 0;
}

void CountOps(const ir::Graph& g, std::map<std::string, int>& hist, int& nodes) {
  for (const ir::Node& n : g.nodes) {
    ++nodes;
    ++hist[(n.domain.empty() ? "" : n.domain + ".") + n.op_type];
    for (const auto& [an, a] : n.attrs) {
      if (a.g) CountOps(*a.g, hist, nodes);
      for (const auto& sg : a.graphs) CountOps(*sg, hist, nodes);
    }
  }
}

int DoInspect(const InspectArgs& a) {
  if (a.plan) return DoInspectPlan(a);
  auto loaded = onnx_io::LoadModelFile(a.model);
  if (!loaded.ok()) return ReportError("inspect", loaded.status(), kExitUsage);
  const ir::Model& m = *loaded;
  const ir::Graph& g = m.graph;
  std::printf("model: %s\n", a.model.c_str());
  std::printf("ir_version: %lld\n", static_cast<long long>(m.ir_version));
  std::printf("producer: %s%s%s\n", m.producer_name.empty() ? "(none)" : m.producer_name.c_str(),
              m.producer_version.empty() ? "" : " ", m.producer_version.c_str());
  std::printf("opsets:");
  for (const auto& [d, v] : m.opsets) std::printf(" %s=%lld", d.empty() ? "ai.onnx" : d.c_str(), static_cast<long long>(v));
  std::printf("\n");
  if (!m.metadata.empty()) {
    std::printf("metadata:\n");
    for (const auto& [k, v] : m.metadata) std::printf("  %s: %s\n", k.c_str(), v.c_str());
  }

  std::printf("inputs:\n");
  for (const IoInfo& io : InputInfos(g))
    std::printf("  %s  %s%s%s\n", io.name.c_str(), io.kind == "tensor" ? DTypeName(io.dtype) : io.kind.c_str(),
                io.kind == "tensor" ? io.ShapeString().c_str() : "", io.optional ? "  (has an initializer default)" : "");

  // Output types: the file's, completed by inference where a session loads.
  auto session = CreateSessionFromModel(m, {});
  std::printf("outputs:\n");
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    std::string type = g.outputs[i].type.ToString();
    if (session.ok() && i < (*session)->outputs().size()) {
      const IoInfo& io = (*session)->outputs()[i];
      if (io.kind == "tensor") type = std::string(DTypeName(io.dtype)) + io.ShapeString();
    }
    std::printf("  %s  %s\n", g.outputs[i].name.c_str(), type.c_str());
  }
  if (!session.ok()) std::printf("  (kiln cannot load it for running: %s)\n", session.status().ToString().c_str());

  int64_t params = 0;
  uint64_t bytes = 0;
  for (const auto& [n, t] : g.initializers) {
    params += t.numel();
    bytes += t.dtype() == DType::kString ? 0 : t.nbytes();
  }
  std::printf("initializers: %zu (%lld values, %.1f KiB)\n", g.initializers.size(), static_cast<long long>(params),
              static_cast<double>(bytes) / 1024.0);

  std::map<std::string, int> hist;
  int nodes = 0;
  CountOps(g, hist, nodes);
  std::vector<std::pair<std::string, int>> sorted(hist.begin(), hist.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  std::printf("ops: %d nodes, %zu op types\n", nodes, sorted.size());
  for (const auto& [op, c] : sorted) std::printf("  %-24s %d\n", op.c_str(), c);
  if (!a.no_graph) std::printf("graph:\n%s", ir::ToText(m).c_str());
  return 0;
}

}  // namespace

void AddInspectCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<InspectArgs>();
  CLI::App* sub = app.add_subcommand("inspect", "show a model's metadata, inputs, outputs, ops and graph");
  sub->add_option("MODEL", a->model, "ONNX model file")->required();
  sub->add_flag("--no-graph", a->no_graph, "omit the graph text");
  sub->add_flag("--plan", a->plan, "print the plan a session runs instead: passes, provider and layouts per node, conversions");
  sub->add_option("--provider", a->provider, "with --plan: execution provider (default cpu)");
  sub->add_option("--opt-level", a->opt_level, "with --plan: disable, basic, extended or all (default all)");
  AddCacheOptions(sub, a->cache);
  cmds.Add(sub, [a] { return DoInspect(*a); });
}

}  // namespace kiln::cli
