#pragma once

#include "kiln/session.h"

namespace kiln::cli {

// Prints a session's plan: passes, per-node provider and layouts, conversions.
void PrintPlan(const Session& session);

}  // namespace kiln::cli
