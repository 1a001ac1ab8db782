// TODO(owner): kiln inspect
#include "commands.h"

namespace kiln::cli {

void AddInspectCommand(CLI::App& app, Commands& cmds) {}

}  // namespace kiln::cli
