// Replays what the libFuzzer targets (fuzz/, `make fuzz`) found: every file
// under tests/regressions/fuzz/<target>/ goes through the same entry point as
// the fuzzer (fuzz/fuzz_entry.h), each in a forked child, and must not crash
// or hang (a Status error inside is fine). A new reproducer is just a new
// file there: the tests list the folder when they run.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "../fuzz/fuzz_entry.h"
#include "support/isolate.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<fs::path> Reproducers(const std::string& target) {
  std::vector<fs::path> out;
  const fs::path dir = fs::path(KILN_SOURCE_DIR) / "tests/regressions/fuzz" / target;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Runs `entry` on `bytes` in a child; "" when it returned, else why not.
std::string Replay(int (*entry)(const uint8_t*, size_t), const std::string& bytes) {
  auto run = RunIsolated(120, [&] {
    entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    return std::string("ok");
  });
  if (!run) {  // no fork: in process
    entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    return "";
  }
  return run->message ? "" : run->failure;
}

// Reproducers of bugs found and not fixed yet (tests/regressions/fuzz/open.txt,
// one name a line). They only fail under the sanitizers (make test-sanitize,
// make fuzz), so here they are replayed and a failure is printed, not counted.
std::set<std::string> OpenBugs() {
  std::set<std::string> out;
  std::ifstream in(fs::path(KILN_SOURCE_DIR) / "tests/regressions/fuzz/open.txt");
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const auto b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t");
    if (b != std::string::npos) out.insert(line.substr(b, e - b + 1));
  }
  return out;
}

void ReplayAll(const std::string& target, int (*entry)(const uint8_t*, size_t)) {
  const auto files = Reproducers(target);
  const auto open = OpenBugs();
  for (const fs::path& f : files) {
    const std::string failure = Replay(entry, ReadBytes(f));
    if (open.count(f.filename().string())) {
      std::printf("open bug %s: %s\n", f.filename().c_str(), failure.empty() ? "no crash (fixed? remove it from open.txt)" : failure.c_str());
      continue;
    }
    EXPECT_EQ(failure, "") << f.string();
  }
  std::printf("%zu reproducer(s) under tests/regressions/fuzz/%s\n", files.size(), target.c_str());
}

TEST(FuzzRegressions, LoaderFuzz) { ReplayAll("loader_fuzz", fuzz::LoadAndRun); }

TEST(FuzzRegressions, TensorFileFuzz) { ReplayAll("tensor_file_fuzz", fuzz::ParseTensorFiles); }

// The entry points themselves: junk is an error, not a crash, and a good
// model really reaches Run on both providers (so the fuzzer does too).
TEST(FuzzRegressions, EntryPointsTakeJunk) {
  for (const std::string& bytes : {std::string(), std::string("\x93NUMPY\x01\x00\xff\xff", 10),
                                   std::string("\x08\x07\x3a\x02\x12\x00", 6), std::string(64, '\xff')}) {
    EXPECT_EQ(Replay(fuzz::LoadAndRun, bytes), "");
    EXPECT_EQ(Replay(fuzz::ParseTensorFiles, bytes), "");
  }
}

TEST(FuzzRegressions, HarnessRunsAGoodModel) {
  const std::string model =
      ReadBytes(fs::path(KILN_SOURCE_DIR) / "tests/regressions/fused_hardsigmoid_post_affine/model.onnx");
  ASSERT_FALSE(model.empty());
  const auto* p = reinterpret_cast<const uint8_t*>(model.data());
  EXPECT_EQ(fuzz::LoadAndRunOn(p, model.size(), "reference"), fuzz::Outcome::kRan);
  EXPECT_EQ(fuzz::LoadAndRunOn(p, model.size(), "cpu"), fuzz::Outcome::kRan);
}

}  // namespace
}  // namespace kiln
