// AllocateBig / FreeBig: small buffers 64-byte aligned (cut from shared
// chunks), big ones on 2 MiB boundaries (where huge pages can back them),
// at sizes on both sides of kHugeFrom and not multiples of 64; buffers
// alive together never overlap and keep every byte, whatever the order
// they are freed in.
#include "support/big_alloc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

namespace kiln {
namespace {

struct Buffer {
  unsigned char* p;
  size_t bytes;
  unsigned char seed;
};

void Fill(const Buffer& b) {
  for (size_t i = 0; i < b.bytes; ++i) b.p[i] = static_cast<unsigned char>(i * 7 + b.seed);
}

size_t Wrong(const Buffer& b) {
  size_t bad = 0;
  for (size_t i = 0; i < b.bytes; ++i) bad += b.p[i] != static_cast<unsigned char>(i * 7 + b.seed);
  return bad;
}

TEST(AllocateBig, AlignsSeparatesAndKeepsEveryByte) {
  const bool huge_wanted = std::getenv("KILN_HUGEPAGES") == nullptr;
  std::mt19937 rng(3);
  for (int round = 0; round < 3; ++round) {
    std::vector<Buffer> live;
    const size_t sizes[] = {1, 100, 4096, 70000, 300000, kHugeFrom - 1, kHugeFrom, kHugeFrom + 3, size_t{5} << 20};
    for (int i = 0; i < 40; ++i) {
      const size_t bytes = sizes[static_cast<size_t>(i) % std::size(sizes)];
      auto* p = static_cast<unsigned char*>(AllocateBig(bytes));
      ASSERT_NE(p, nullptr) << bytes;
      const auto at = reinterpret_cast<uintptr_t>(p);
      EXPECT_EQ(at % 64, 0u) << bytes;
      if (bytes >= kHugeFrom && huge_wanted) EXPECT_EQ(at % (size_t{2} << 20), 0u) << bytes;
      live.push_back({p, bytes, static_cast<unsigned char>(i + 1)});
      Fill(live.back());
    }
    for (const Buffer& b : live) EXPECT_EQ(Wrong(b), 0u) << b.bytes << " bytes: overwritten by another buffer";
    std::shuffle(live.begin(), live.end(), rng);
    for (const Buffer& b : live) FreeBig(b.p);
  }
  FreeBig(nullptr);
}

// Sessions are made and dropped on several threads at once: the shared
// chunks must hand out disjoint buffers to all of them (TSan checks the
// locking in its build).
TEST(AllocateBig, ThreadsGetDisjointBuffers) {
  std::vector<std::thread> threads;
  std::vector<size_t> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &wrong] {
      std::vector<Buffer> live;
      for (int i = 0; i < 200; ++i) {
        const size_t bytes = 1000 + static_cast<size_t>((i * 7919 + t * 104729) % 60000);
        live.push_back({static_cast<unsigned char*>(AllocateBig(bytes)), bytes, static_cast<unsigned char>(t * 50 + i)});
        Fill(live.back());
        if (i % 3 == 2) {  // free some on the way, as dropped sessions do
          wrong[static_cast<size_t>(t)] += Wrong(live.front());
          FreeBig(live.front().p);
          live.erase(live.begin());
        }
      }
      for (const Buffer& b : live) {
        wrong[static_cast<size_t>(t)] += Wrong(b);
        FreeBig(b.p);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(wrong[static_cast<size_t>(t)], 0u) << "thread " << t;
}

}  // namespace
}  // namespace kiln
