// TODO(owner): kiln example
#include "commands.h"

namespace kiln::cli {

void AddExampleCommand(CLI::App& app, Commands& cmds) {}

}  // namespace kiln::cli
