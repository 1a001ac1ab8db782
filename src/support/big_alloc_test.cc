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

}  // namespace
}  // namespace kiln
