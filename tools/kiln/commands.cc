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

void AddCacheOptions(CLI::App* sub, CacheOptions& c) {
  sub->add_option("--cache-dir", c.dir,
                  "plan cache folder (default $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln)");
  sub->add_flag("--no-cache", c.off, "neither read nor write the plan cache");
}

void ApplyCacheOptions(const CacheOptions& c, SessionOptions& o) {
  o.use_cache = !c.off;
  if (!c.dir.empty()) o.cache_dir = c.dir;
}

}  // namespace kiln::cli
