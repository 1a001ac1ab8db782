// Session internals shared with the CLI and tests (not public API).
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"
#include "kiln/session.h"
#include "passes/pipeline.h"
#include "runtime/executor.h"

namespace kiln {

struct Session::Impl {
  SessionOptions options;
  std::shared_ptr<const ir::Model> model;
  std::unique_ptr<runtime::Executor> executor;
  passes::PassReport pass_report;  // what the optimization pipeline did
  std::vector<IoInfo> inputs, outputs;
  // Where session creation spent its time (kiln bench prints it).
  struct CreateTimes {
    double load_ms = 0;      // reading and converting the model file
    double optimize_ms = 0;  // the pass pipeline
    double plan_ms = 0;      // executor: inference, layouts, kernels (weights packed)
    double cache_store_ms = 0;  // writing the plan cache entry (a miss)
    std::string cache = "off";  // plan cache: "hit", "miss" or "off"
  } create_times;
};

// Builds a session from an in-memory model (the CLI's built-in examples, tests).
Result<std::unique_ptr<Session>> CreateSessionFromModel(ir::Model model, const SessionOptions& options = {});

// Runs with a per-node tap (verify).
Result<std::vector<Datum>> RunWithTap(const Session& s, const std::map<std::string, Datum>& inputs,
                                      const std::vector<std::string>& output_names, const runtime::NodeTap& tap);

}  // namespace kiln
