// TODO(owner): kiln run
#include "commands.h"

namespace kiln::cli {

void AddRunCommand(CLI::App& app, Commands& cmds) {}

}  // namespace kiln::cli
