// Running commands from tests: the CLI binary (KILN_CLI_PATH) or any shell
// command, with stdout and stderr captured together.
#pragma once

#include <string>

namespace kiln::testing {

// Runs `cmd` through the shell; returns its exit status (-1 when it did not
// exit normally) and appends its stdout and stderr to *output.
int Shell(const std::string& cmd, std::string* output);
// Shell("<kiln binary> " + args).
int RunKiln(const std::string& args, std::string* output);

}  // namespace kiln::testing
