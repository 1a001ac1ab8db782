// kiln command-line tool: one file per subcommand, registered here.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "commands.h"
#ifdef KILN_FAULTY_PROVIDERS
#include "support/faulty_provider.h"
#endif

int main(int argc, char** argv) {
#ifdef KILN_FAULTY_PROVIDERS
  // The test-only build (kiln_faulty): the faulty Resize providers of
  // tests/support join the provider list, to show verify and reduce at work.
  kiln::testing::RegisterFaultyProviders();
#endif
  CLI::App app{"kiln: run, inspect and verify ONNX models"};
  app.require_subcommand(1);
  kiln::cli::Commands cmds;
  kiln::cli::RegisterCommands(app, cmds);
  kiln::cli::AddBenchCommand(app, cmds);
  kiln::cli::AddCompareCommand(app, cmds);
  kiln::cli::AddVerifyCommand(app, cmds);
  kiln::cli::AddReduceCommand(app, cmds);
  kiln::cli::AddFuzzCommand(app, cmds);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return cmds.Dispatch();
}
