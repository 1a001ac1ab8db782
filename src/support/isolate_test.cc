#include "support/isolate.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

namespace kiln {
namespace {

TEST(Isolate, MessageCrashTimeoutAndEmptyResult) {
  auto ok = RunIsolated(10, [] { return std::string("hello\nworld"); });
  ASSERT_TRUE(ok.has_value());
  ASSERT_TRUE(ok->message.has_value());
  EXPECT_EQ(*ok->message, "hello\nworld");
  auto empty = RunIsolated(10, [] { return std::string(); });
  ASSERT_TRUE(empty && empty->message);
  EXPECT_EQ(*empty->message, "");
  auto crash = RunIsolated(10, []() -> std::string {
    std::raise(SIGSEGV);
    return "unreachable";
  });
  ASSERT_TRUE(crash.has_value());
  EXPECT_FALSE(crash->message.has_value());
#if defined(__SANITIZE_ADDRESS__)
  // ASan catches the signal, reports, and exits with status 1 instead.
  EXPECT_NE(crash->failure.find("exited without a result"), std::string::npos) << crash->failure;
#else
  EXPECT_NE(crash->failure.find("crashed with signal"), std::string::npos) << crash->failure;
#endif
  auto hang = RunIsolated(1, []() -> std::string {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    return "late";
  });
  ASSERT_TRUE(hang.has_value());
  EXPECT_FALSE(hang->message.has_value());
  EXPECT_EQ(hang->failure, "timed out after 1 s");
  auto quit = RunIsolated(10, []() -> std::string { _exit(3); });
  ASSERT_TRUE(quit.has_value());
  EXPECT_EQ(quit->failure, "child exited without a result (status 3)");
}

}  // namespace
}  // namespace kiln
