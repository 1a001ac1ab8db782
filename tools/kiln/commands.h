// Subcommands of the kiln CLI. Each Add* registers a subcommand on the app and
// stores its action; Dispatch runs the one the user chose.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "kiln/session.h"

namespace kiln::cli {

struct Commands {
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions;
  void Add(CLI::App* sub, std::function<int()> action) { actions.emplace_back(sub, std::move(action)); }
  int Dispatch() const {
    for (const auto& [sub, act] : actions)
      if (sub->parsed()) return act();
    return 2;
  }
};

void RegisterCommands(CLI::App& app, Commands& cmds);  // commands.cc

// --cache-dir DIR / --no-cache on a subcommand that creates sessions from
// files; ApplyCacheOptions copies them into SessionOptions.
struct CacheOptions {
  std::string dir;
  bool off = false;
};
void AddCacheOptions(CLI::App* sub, CacheOptions& c);  // commands.cc
void ApplyCacheOptions(const CacheOptions& c, SessionOptions& o);

void AddRunCommand(CLI::App& app, Commands& cmds);      // run.cc
void AddInspectCommand(CLI::App& app, Commands& cmds);  // inspect.cc
void AddExampleCommand(CLI::App& app, Commands& cmds);  // example.cc
void AddDemoCommand(CLI::App& app, Commands& cmds);     // demo.cc
void AddGenInputsCommand(CLI::App& app, Commands& cmds);  // run.cc
void AddConformanceCommand(CLI::App& app, Commands& cmds);  // conformance.cc
void AddBenchCommand(CLI::App& app, Commands& cmds);        // bench.cc
void AddCompareCommand(CLI::App& app, Commands& cmds);      // compare.cc
void AddVerifyCommand(CLI::App& app, Commands& cmds);       // verify.cc
void AddReduceCommand(CLI::App& app, Commands& cmds);       // reduce.cc
void AddFuzzCommand(CLI::App& app, Commands& cmds);         // fuzz.cc

}  // namespace kiln::cli
