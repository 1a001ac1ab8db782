// How the cpu provider's own loops use the session's threads (the OpenMP
// pool oneDNN shares): contiguous chunks, one per thread, only when the work
// is large enough to pay for waking them. Below that the loop runs on the
// calling thread with no OpenMP region at all: libgomp allocates a team even
// for a region of one thread (a malloc per node, seen in profiles of small
// models). Each element is computed alone, so the split changes no result.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace kiln::cpu {

// Elements touched below which a loop stays on one thread.
inline constexpr int64_t kParallelMin = 1 << 15;

// Calls f(begin, end) over [0, n): once on this thread when `work` is below
// kParallelMin (or one thread is all there is), else once per thread.
template <typename F>
void ParallelFor(int64_t n, int64_t work, F&& f) {
  const int threads = work >= kParallelMin ? static_cast<int>(std::min<int64_t>(omp_get_max_threads(), n)) : 1;
  if (threads <= 1) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t begin = n * t / nt, end = n * (t + 1) / nt;
    if (begin < end) f(begin, end);
  }
}

}  // namespace kiln::cpu
