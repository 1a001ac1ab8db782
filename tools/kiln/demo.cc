// TODO(owner): kiln demo
#include "commands.h"

namespace kiln::cli {

void AddDemoCommand(CLI::App& app, Commands& cmds) {}

}  // namespace kiln::cli
