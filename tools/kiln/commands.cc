#include "commands.h"

namespace kiln::cli {

void RegisterCommands(CLI::App& app, Commands& cmds) {
  AddRunCommand(app, cmds);
  AddInspectCommand(app, cmds);
  AddExampleCommand(app, cmds);
  AddDemoCommand(app, cmds);
  AddGenInputsCommand(app, cmds);
  AddConformanceCommand(app, cmds);
}

}  // namespace kiln::cli
