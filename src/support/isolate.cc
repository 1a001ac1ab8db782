#include "support/isolate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace kiln {

std::optional<IsolatedRun> RunIsolated(int timeout_s, const std::function<std::string()>& work) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(timeout_s));
    // A marker byte first, so an empty message is told from no message.
    const std::string msg = "+" + work();
    size_t off = 0;
    while (off < msg.size()) {
      ssize_t w = write(fds[1], msg.data() + off, msg.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  IsolatedRun r;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    r.failure = sig == SIGALRM ? "timed out after " + std::to_string(timeout_s) + " s"
                               : "crashed with signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  } else if (msg.empty() || msg[0] != '+' || WEXITSTATUS(status) != 0) {
    r.failure = "child exited without a result (status " + std::to_string(WEXITSTATUS(status)) + ")";
  } else {
    r.message = msg.substr(1);
  }
  return r;
}

}  // namespace kiln
