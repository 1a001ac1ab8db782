#include "support/warn.h"

#include <cstdio>
#include <mutex>
#include <set>

namespace kiln {
namespace {

struct WarnState {
  std::mutex mu;
  std::set<std::string> seen;
  std::function<void(const std::string&)> sink;
};

WarnState& State() {
  static WarnState* s = new WarnState;  // never destroyed: usable at exit
  return *s;
}

}  // namespace

void WarnOnce(const std::string& key, const std::string& message) {
  WarnState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.seen.insert(key).second) return;
  if (s.sink) s.sink(message);
  else std::fprintf(stderr, "kiln: warning: %s\n", message.c_str());
}

void SetWarningSink(std::function<void(const std::string&)> sink) {
  WarnState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  s.sink = std::move(sink);
  s.seen.clear();
}

}  // namespace kiln
