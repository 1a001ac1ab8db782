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

// Elements touched below which a loop stays on one thread. A 2-thread
// region costs about 3.6 us on this 2-core VM even with nothing to do, and
// the second core then fetches what the first one last wrote: PP-OCR cls's
// per-channel Mul of 38400 values took 5.1 us on one thread and 12.6 us on
// two. At 1 << 17 (from 1 << 15) that model's 2-thread median went from
// 0.547 to 0.522 ms; mobilenet_v2, PP-OCRv4 det and rec, rtmdet_like and
// deeplabv3 were unchanged within noise (medians of 4-5 alternated runs).
inline constexpr int64_t kParallelMin = 1 << 17;

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
