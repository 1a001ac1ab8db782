// CopyToRowMajor against a plain element-by-element walk: every rank-1..5
// permutation view of random shapes (the layout conversions), broadcast
// (stride 0) and reversed (negative stride) views, each element size.
#include "support/strided_copy.h"

#include "support/transpose32.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

namespace kiln {
namespace {

// The reference: dst[i] = src[offset of index i], offsets by an odometer.
void Naive(char* dst, const char* src, size_t es, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t k = 0; k < shape.size(); ++k) off += idx[k] * strides[k];
    std::memcpy(dst + i * static_cast<int64_t>(es), src + off * static_cast<int64_t>(es), es);
    for (size_t k = shape.size(); k-- > 0;)
      if (++idx[k] < shape[k]) break;
      else idx[k] = 0;
  }
}

void Check(size_t es, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides, const char* base,
           const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<char> want(static_cast<size_t>(n) * es + 1, 0), got(static_cast<size_t>(n) * es + 1, 0x5a);
  Naive(want.data(), base, es, shape, strides);
  CopyToRowMajor(got.data(), base, es, shape, strides);
  ASSERT_EQ(std::memcmp(want.data(), got.data(), static_cast<size_t>(n) * es), 0) << what;
  ASSERT_EQ(got.back(), 0x5a) << what << ": wrote past the last element";
}

TEST(StridedCopy, PermutedViewsMatchTheNaiveWalk) {
  std::mt19937 rng(3);
  for (size_t es : {size_t{1}, size_t{2}, size_t{4}, size_t{8}, size_t{3}}) {
    for (int trial = 0; trial < 120; ++trial) {
      const size_t rank = 1 + rng() % 5;
      std::vector<int64_t> phys(rank);
      // Every third trial has long dims (past the 32-element tiles), at most 3 of them.
      const bool big = trial % 3 == 0;
      for (size_t k = 0; k < rank; ++k) phys[k] = 1 + static_cast<int64_t>(rng() % (big && k < 3 ? 70 : 6));
      int64_t n = 1;
      for (int64_t d : phys) n *= d;
      std::vector<char> buf(static_cast<size_t>(n) * es);
      for (auto& c : buf) c = static_cast<char>(rng());
      std::vector<int64_t> pstr(rank);
      int64_t s = 1;
      for (size_t k = rank; k-- > 0;) pstr[k] = s, s *= phys[k];
      std::vector<size_t> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<int64_t> shape(rank), strides(rank);
      for (size_t k = 0; k < rank; ++k) shape[k] = phys[perm[k]], strides[k] = pstr[perm[k]];
      Check(es, shape, strides, buf.data(), "es " + std::to_string(es) + " trial " + std::to_string(trial));
    }
  }
}

// NCHW images of 2-4 channels viewed channels-last: the interleave path
// (an image input converted for the first convolution), batch 1 and 3,
// every element size, pixel counts that do and do not fill vectors, on 1
// and 2 threads (the 257x521 images are split between them).
TEST(StridedCopy, FewPlanesInterleavedIntoChannelsLast) {
  std::mt19937 rng(9);
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    for (size_t es : {size_t{1}, size_t{2}, size_t{4}, size_t{8}})
      for (int64_t c : {2, 3, 4})
        for (int64_t n : {1, 3})
          for (auto [h, w] : {std::pair<int64_t, int64_t>{5, 7}, {48, 192}, {257, 521}}) {
            if (h == 257 && es != 4) continue;  // float32 images only: the plain walk it is checked against is slow
            std::vector<char> buf(static_cast<size_t>(n * c * h * w) * es);
            for (auto& v : buf) v = static_cast<char>(rng());
            // logical [n, h, w, c] over NCHW storage
            Check(es, {n, h, w, c}, {c * h * w, w, 1, h * w}, buf.data(),
                  "es " + std::to_string(es) + " c " + std::to_string(c) + " n " + std::to_string(n) + " " + std::to_string(h) + "x" +
                      std::to_string(w) + " threads " + std::to_string(threads));
          }
  }
  omp_set_num_threads(saved);
}

TEST(StridedCopy, ChannelsLastToNchwBroadcastAndReversed) {
  // [1,32,112,112] stored channels-last: the graph-output conversion the tiles are for.
  std::vector<float> nhwc(32 * 112 * 112);
  for (size_t i = 0; i < nhwc.size(); ++i) nhwc[i] = static_cast<float>(i);
  Check(4, {1, 32, 112, 112}, {32 * 112 * 112, 1, 112 * 32, 32}, reinterpret_cast<const char*>(nhwc.data()), "nhwc");
  // Broadcast: a [5] vector viewed as [3,5] and [5,3] (stride 0).
  Check(4, {3, 5}, {0, 1}, reinterpret_cast<const char*>(nhwc.data()), "broadcast rows");
  Check(4, {5, 3}, {1, 0}, reinterpret_cast<const char*>(nhwc.data()), "broadcast columns");
  // Reversed: the last row of a [4,6] read backwards, from its end.
  const char* end = reinterpret_cast<const char*>(nhwc.data() + 23);
  Check(4, {4, 6}, {-6, -1}, end, "reversed");
  Check(4, {6, 4}, {-1, -6}, end, "reversed and transposed");
  // Empty shapes copy nothing; rank 0 copies one element.
  Check(4, {3, 0, 2}, {0, 2, 1}, reinterpret_cast<const char*>(nhwc.data()), "empty");
  Check(4, {}, {}, reinterpret_cast<const char*>(nhwc.data() + 7), "scalar");
}

// The 4-byte layout changes run in 16x16 register blocks (transpose32.h):
// channel and pixel counts below, at and past one block, both directions,
// batch 2, so every block edge (partial rows, partial columns, both) is
// met; and a transposed view read backwards across several blocks.
TEST(StridedCopy, FourByteLayoutChangesInBlocksMatchTheNaiveWalk) {
  std::mt19937 rng(17);
  for (int64_t c : {5, 16, 17, 21, 32, 33, 40})
    for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {4, 4}, {7, 9}, {20, 23}}) {
      const int64_t n = 2, hw = h * w;
      std::vector<uint32_t> buf(static_cast<size_t>(n * c * hw));
      for (auto& v : buf) v = static_cast<uint32_t>(rng());
      const char* base = reinterpret_cast<const char*>(buf.data());
      const std::string what = "c " + std::to_string(c) + " " + std::to_string(h) + "x" + std::to_string(w);
      // logical NCHW over channels-last storage (a graph output converted)
      Check(4, {n, c, h, w}, {c * hw, 1, w * c, c}, base, what + " nhwc->nchw");
      // logical NHWC over NCHW storage (an input converted for a channels-last kernel)
      Check(4, {n, h, w, c}, {c * hw, w, 1, hw}, base, what + " nchw->nhwc");
    }
  std::vector<uint32_t> m(37 * 45);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<uint32_t>(i * 2654435761u);
  Check(4, {45, 37}, {-1, -45}, reinterpret_cast<const char*>(m.data() + m.size() - 1), "reversed 37x45 transposed");
}

// Transpose32's two paths (AVX-512 blocks here, scalar blocks on CPUs
// without it) against a plain loop, with streamed stores on aligned rows
// and partial blocks on both sides.
TEST(StridedCopy, Transpose32BothPathsMatchAPlainLoop) {
  std::mt19937 rng(23);
  for (auto [na, ni] : {std::pair<int64_t, int64_t>{21, 512}, {16, 16}, {37, 45}, {3, 70}, {64, 33}}) {
    const int64_t ls = na + 3, ld = (ni + 15) / 16 * 16;  // ld a multiple of 16: aligned rows stream
    std::vector<uint32_t> src(static_cast<size_t>(ni * ls));
    for (auto& v : src) v = static_cast<uint32_t>(rng());
    std::vector<uint32_t> want(static_cast<size_t>(na * ld) + 1, 7u);
    for (int64_t a = 0; a < na; ++a)
      for (int64_t i = 0; i < ni; ++i) want[static_cast<size_t>(a * ld + i)] = src[static_cast<size_t>(a + i * ls)];
    for (int path = 0; path < 3; ++path) {
      // 64-byte aligned storage, so whole columns of 16 can stream
      std::vector<uint32_t> store(want.size() + 16, 7u);
      const auto shift = (64 - reinterpret_cast<uintptr_t>(store.data()) % 64) % 64 / sizeof(uint32_t);
      uint32_t* got = store.data() + shift;
      if (path == 0) Transpose32(got, src.data(), na, ni, ls, ld);
      if (path == 1) Transpose32(got, src.data(), na, ni, ls, ld, true);
      if (path == 2) Transpose32Portable(got, src.data(), na, ni, ls, ld);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), got)) << na << "x" << ni << " path " << path;
    }
  }
}

}  // namespace
}  // namespace kiln
