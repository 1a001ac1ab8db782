#include "support/strided_copy.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "support/transpose32.h"

namespace kiln {
namespace {

struct Dim {
  int64_t size, src, dst;  // extent, source stride, destination stride (elements)
};

// Row-major dims without size-1 dims, with adjacent dims merged where the
// source steps over the inner one contiguously (the destination always does).
std::vector<Dim> Simplify(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  std::vector<Dim> dims;
  for (size_t k = 0; k < shape.size(); ++k)
    if (shape[k] != 1) dims.push_back({shape[k], strides[k], 0});
  std::vector<Dim> merged;
  for (const Dim& d : dims) {
    if (!merged.empty() && merged.back().src == d.src * d.size) {
      merged.back().size *= d.size;
      merged.back().src = d.src;
    } else {
      merged.push_back(d);
    }
  }
  int64_t s = 1;
  for (size_t k = merged.size(); k-- > 0;) {
    merged[k].dst = s;
    s *= merged[k].size;
  }
  return merged;
}

// Calls f(dst_offset, src_offset) for every index of `dims` (odometer order).
template <typename F>
void ForEachIndex(const std::vector<Dim>& dims, F&& f) {
  for (const Dim& d : dims)
    if (d.size == 0) return;
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t so = 0, dof = 0;
  while (true) {
    f(dof, so);
    size_t k = dims.size();
    while (k-- > 0) {
      if (++idx[k] < dims[k].size) {
        so += dims[k].src;
        dof += dims[k].dst;
        break;
      }
      so -= dims[k].src * (dims[k].size - 1);
      dof -= dims[k].dst * (dims[k].size - 1);
      idx[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

// dst[a * K + i] = src[a + i * plane] for a < n, i < K: a few planes
// interleaved (an image's channels into channels-last), K known to the
// compiler so it vectorizes the interleave instead of looping K times per
// pixel (the tiled loop below ran 3-channel inputs at ~0.6 ns per value).
template <typename T, int K>
void Interleave(T* __restrict dst, const T* __restrict src, int64_t n, int64_t plane) {
  for (int64_t a = 0; a < n; ++a)
    for (int i = 0; i < K; ++i) dst[a * K + i] = src[a + i * plane];
}

// Values from which an interleave is split across the session's threads:
// an NCHW image's conversion for the first convolution ran on one thread
// while the other waited. At 2 threads (per-node minima of 4-5 alternated
// runs, the conversion counted in the Conv's time) PP-OCRv4 det's stem at
// 640x640 went from 0.98 to 0.79 ms, mobilenet_v2's at 224x224 from 0.154
// to 0.126 ms.
constexpr int64_t kParallelInterleave = int64_t{1} << 17;

// Interleave over n pixels, in contiguous chunks of them per thread when
// the copy is large (a copy has no result to vary with the split).
template <typename T, int K>
void InterleaveSplit(T* dst, const T* src, int64_t n, int64_t plane) {
  const int threads = n * K >= kParallelInterleave ? static_cast<int>(std::min<int64_t>(omp_get_max_threads(), n / 1024)) : 1;
  if (threads <= 1) {  // no OpenMP region at all: a team of one still costs a call into libgomp
    Interleave<T, K>(dst, src, n, plane);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t a0 = n * t / nt, a1 = n * (t + 1) / nt;
    Interleave<T, K>(dst + a0 * K, src + a0, a1 - a0, plane);
  }
}

template <typename T>
bool TryInterleave(T* dst, const T* src, const Dim& u, const Dim& inner, std::vector<Dim>& outer) {
  if (u.dst != inner.size) return false;
  auto run = [&](auto fn) {
    ForEachIndex(outer, [&](int64_t d, int64_t s) { fn(dst + d, src + s, u.size, inner.src); });
    return true;
  };
  switch (inner.size) {
    case 2: return run(InterleaveSplit<T, 2>);
    case 3: return run(InterleaveSplit<T, 3>);
    case 4: return run(InterleaveSplit<T, 4>);
    default: return false;
  }
}

// Destination bytes from which a 4-byte layout change streams its stores.
constexpr int64_t kStreamBytes = int64_t{8} << 20;

template <typename T>
void Copy(T* dst, const T* src, std::vector<Dim> dims) {
  if (dims.empty()) {
    dst[0] = src[0];
    return;
  }
  const Dim inner = dims.back();
  if (inner.src == 1) {  // contiguous runs
    dims.pop_back();
    ForEachIndex(dims, [&](int64_t d, int64_t s) { std::memcpy(dst + d, src + s, static_cast<size_t>(inner.size) * sizeof(T)); });
    return;
  }
  // The dim the source walks with unit stride, if any: tile it against the inner one.
  size_t unit = dims.size();
  for (size_t k = 0; k + 1 < dims.size(); ++k)
    if (dims[k].src == 1) unit = k;
  if (unit == dims.size()) {  // no unit-stride dim: a strided gather per row
    dims.pop_back();
    ForEachIndex(dims, [&](int64_t d, int64_t s) {
      for (int64_t i = 0; i < inner.size; ++i) dst[d + i] = src[s + i * inner.src];
    });
    return;
  }
  const Dim u = dims[unit];
  dims.pop_back();
  dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(unit));
  if (TryInterleave(dst, src, u, inner, dims)) return;
  if constexpr (sizeof(T) == 4) {
    // A destination past the caches' size is written around them (a
    // segmentation map's output: 21x512x512 took 4.7 ms cached, 2.5
    // streamed, alone on one thread); a smaller one is likely read next.
    int64_t total = u.size * inner.size;
    for (const Dim& o : dims) total *= o.size;
    const bool stream = total * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
    ForEachIndex(dims, [&](int64_t d, int64_t s) {
      Transpose32(reinterpret_cast<uint32_t*>(dst + d), reinterpret_cast<const uint32_t*>(src + s), u.size, inner.size, inner.src, u.dst,
                  stream);
    });
    return;
  }
  constexpr int64_t kTile = 32;
  ForEachIndex(dims, [&](int64_t d, int64_t s) {
    for (int64_t u0 = 0; u0 < u.size; u0 += kTile) {
      const int64_t u1 = std::min(u.size, u0 + kTile);
      for (int64_t i0 = 0; i0 < inner.size; i0 += kTile) {
        const int64_t i1 = std::min(inner.size, i0 + kTile);
        for (int64_t a = u0; a < u1; ++a) {
          T* dr = dst + d + a * u.dst;
          const T* sr = src + s + a;  // u.src == 1
          for (int64_t i = i0; i < i1; ++i) dr[i] = sr[i * inner.src];
        }
      }
    }
  });
}

}  // namespace

void CopyToRowMajor(void* dst, const void* src, size_t elem_size, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& strides) {
  for (int64_t d : shape)
    if (d == 0) return;
  std::vector<Dim> dims = Simplify(shape, strides);
  switch (elem_size) {
    case 1: Copy(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), std::move(dims)); return;
    case 2: Copy(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), std::move(dims)); return;
    case 4: Copy(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), std::move(dims)); return;
    case 8: Copy(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), std::move(dims)); return;
    default: break;
  }
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  ForEachIndex(dims, [&](int64_t di, int64_t si) {
    std::memcpy(d + di * static_cast<int64_t>(elem_size), s + si * static_cast<int64_t>(elem_size), elem_size);
  });
}

}  // namespace kiln
