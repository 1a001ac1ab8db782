#include "support/cli.h"

#include <sys/wait.h>

#include <cstdio>

namespace kiln::testing {

int Shell(const std::string& cmd, std::string* output) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  const int rc = pclose(p);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int RunKiln(const std::string& args, std::string* output) { return Shell(std::string(KILN_CLI_PATH) + " " + args, output); }

}  // namespace kiln::testing
