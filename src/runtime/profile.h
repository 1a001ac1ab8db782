// Per-node timing of a session's plan: each node's time is the wall time
// from the end of the previous node to the end of this one, so the executor's
// own work for the node (input lookup, run-time inference, checks) counts
// against it, as it does in a real run. Used by `kiln run --profile` and
// `kiln bench --profile`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/datum.h"
#include "kiln/session.h"

namespace kiln {

struct NodeProfile {
  std::string name, op_type, provider;
  double total_ms = 0;  // summed over the profiled runs
};

struct RunProfile {
  int runs = 0;
  double total_ms = 0;              // summed over runs
  std::vector<NodeProfile> nodes;   // execution order
};

// Runs `runs` times (after one warm-up run) and returns the timings.
Result<RunProfile> ProfileRuns(const Session& session, const std::map<std::string, Datum>& feeds, int runs);

// A readable summary: time per op type and provider, then the `top` slowest nodes.
std::string FormatProfile(const RunProfile& p, size_t top = 15);

}  // namespace kiln
