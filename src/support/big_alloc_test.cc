// AllocateBig: small buffers 64-byte aligned, big ones on 2 MiB boundaries
// (where huge pages can back them), every byte writable and kept, at sizes
// on both sides of kHugeFrom and not multiples of 64.
#include "support/big_alloc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace kiln {
namespace {

TEST(AllocateBig, AlignsAndKeepsEveryByte) {
  for (const size_t bytes : {size_t{1}, size_t{100}, kHugeFrom - 1, kHugeFrom, kHugeFrom + 3, size_t{5} << 20}) {
    std::unique_ptr<unsigned char, decltype(&std::free)> p(static_cast<unsigned char*>(AllocateBig(bytes)), &std::free);
    ASSERT_NE(p, nullptr) << bytes;
    const auto at = reinterpret_cast<uintptr_t>(p.get());
    EXPECT_EQ(at % 64, 0u) << bytes;
    if (bytes >= kHugeFrom && std::getenv("KILN_HUGEPAGES") == nullptr) EXPECT_EQ(at % (size_t{2} << 20), 0u) << bytes;
    for (size_t i = 0; i < bytes; ++i) p.get()[i] = static_cast<unsigned char>(i * 7 + 1);
    size_t bad = 0;
    for (size_t i = 0; i < bytes; ++i) bad += p.get()[i] != static_cast<unsigned char>(i * 7 + 1);
    EXPECT_EQ(bad, 0u) << bytes;
  }
}

}  // namespace
}  // namespace kiln
