#include "runtime/profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unordered_map>

#include "runtime/session_internal.h"

namespace kiln {

Result<RunProfile> ProfileRuns(const Session& session, const std::map<std::string, Datum>& feeds, int runs) {
  using Clock = std::chrono::steady_clock;
  const ir::Graph& g = session.impl().model->graph;
  const std::vector<std::string>& providers = session.impl().executor->node_providers();
  std::unordered_map<const ir::Node*, size_t> index;
  RunProfile p;
  p.runs = runs;
  KILN_RETURN_IF_ERROR(session.RunDatums(feeds).status());  // warm-up: caches, first-touch pages
  for (int r = 0; r < runs; ++r) {
    Clock::time_point last = Clock::now();
    const Clock::time_point start = last;
    auto out = RunWithTap(session, feeds, {}, [&](const ir::Node& n, const std::vector<Datum>&) {
      const Clock::time_point now = Clock::now();
      auto [it, fresh] = index.emplace(&n, p.nodes.size());
      if (fresh) {
        const size_t i = static_cast<size_t>(&n - g.nodes.data());
        p.nodes.push_back({n.name, n.op_type, i < providers.size() ? providers[i] : "?", 0});
      }
      p.nodes[it->second].total_ms += std::chrono::duration<double, std::milli>(now - last).count();
      last = now;
    });
    KILN_RETURN_IF_ERROR(out.status());
    p.total_ms += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }
  return p;
}

std::string FormatProfile(const RunProfile& p, size_t top) {
  std::string s;
  char line[256];
  const double runs = std::max(1, p.runs);
  std::snprintf(line, sizeof line, "profile: %d runs, %.3f ms per run\n", p.runs, p.total_ms / runs);
  s += line;
  std::map<std::pair<std::string, std::string>, std::pair<double, int>> by_op;
  for (const NodeProfile& n : p.nodes) {
    auto& e = by_op[{n.op_type, n.provider}];
    e.first += n.total_ms;
    e.second += 1;
  }
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [k, v] : by_op) {
    std::snprintf(line, sizeof line, "  %-24s %-10s %5d nodes %10.3f ms %6.1f%%\n", k.first.c_str(), k.second.c_str(), v.second,
                  v.first / runs, p.total_ms > 0 ? 100 * v.first / p.total_ms : 0.0);
    rows.push_back({v.first, line});
  }
  std::sort(rows.rbegin(), rows.rend());
  s += "  by op type (op, provider, nodes, ms per run, share):\n";
  for (const auto& r : rows) s += r.second;
  std::vector<const NodeProfile*> slow;
  for (const NodeProfile& n : p.nodes) slow.push_back(&n);
  std::sort(slow.begin(), slow.end(), [](const NodeProfile* a, const NodeProfile* b) { return a->total_ms > b->total_ms; });
  s += "  slowest nodes:\n";
  for (size_t i = 0; i < std::min(top, slow.size()); ++i) {
    std::snprintf(line, sizeof line, "  %-40s %-20s %-10s %10.3f ms\n", slow[i]->name.c_str(), slow[i]->op_type.c_str(),
                  slow[i]->provider.c_str(), slow[i]->total_ms / runs);
    s += line;
  }
  return s;
}

}  // namespace kiln
