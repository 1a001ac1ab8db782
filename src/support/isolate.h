// Runs work in a forked child so that a crash or a hang costs one result,
// not the whole run (kiln conformance, kiln fuzz). The child sends back the
// string `work` returns through a pipe.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace kiln {

struct IsolatedRun {
  // The child's message; empty when it died or exited without one.
  std::optional<std::string> message;
  // Why there is no message: "timed out after N s", "crashed with signal
  // 11 (Segmentation fault)", "child exited without a result (status 1)".
  std::string failure;
};

// nullopt when no child could be started (no pipe or fork): the caller runs
// the work in process instead. `timeout_s` bounds the child (SIGALRM).
std::optional<IsolatedRun> RunIsolated(int timeout_s, const std::function<std::string()>& work);

}  // namespace kiln
