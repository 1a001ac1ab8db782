// Session internals shared with the CLI and tests (not public API).
#pragma once

#include <memory>

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
};

// Builds a session from an in-memory model (the CLI's built-in examples, tests).
Result<std::unique_ptr<Session>> CreateSessionFromModel(ir::Model model, const SessionOptions& options = {});

// Runs with a per-node tap (verify).
Result<std::vector<Datum>> RunWithTap(const Session& s, const std::map<std::string, Datum>& inputs,
                                      const std::vector<std::string>& output_names, const runtime::NodeTap& tap);

}  // namespace kiln
