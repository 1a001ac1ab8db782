// Warnings from the library: things that degrade a session without failing
// it (an unusable plan cache). Each distinct message is printed once per
// process, on stderr as "kiln: warning: ...", unless a sink is installed.
#pragma once

#include <functional>
#include <string>

namespace kiln {

// Reports `message` once per process per distinct `key`.
void WarnOnce(const std::string& key, const std::string& message);

// Test hook: receives warnings instead of stderr (nullptr restores stderr).
// Also forgets which keys were reported, so each test sees its warnings.
void SetWarningSink(std::function<void(const std::string&)> sink);

}  // namespace kiln
