#include "providers/cpu/strided_copy.h"

#include <array>
#include <cstring>
#include <string>
#include <utility>

#include "providers/cpu/parallel.h"
#include "providers/cpu/strided_loop.h"

namespace kiln::cpu {
namespace {

template <int64_t kBytes>
void CopyRowsFixed(char* __restrict dst, int64_t ds, const char* __restrict src, int64_t ss, int64_t rows) {
  for (int64_t i = 0; i < rows; ++i) std::memcpy(dst + i * ds, src + i * ss, kBytes);  // constant size: inline moves
}

using CopyRowsFn = void (*)(char*, int64_t, const char*, int64_t, int64_t);
template <int64_t... kWords>
constexpr std::array<CopyRowsFn, sizeof...(kWords)> MakeFixedTable(std::integer_sequence<int64_t, kWords...>) {
  return {&CopyRowsFixed<(kWords + 1) * 4>...};
}
// Rows of 4, 8, ..., 64 bytes.
constexpr auto kFixedRows = MakeFixedTable(std::make_integer_sequence<int64_t, 16>());

template <typename T>
void CopyStrided(T* dst, const T* src, const LoopNest<2>& nest) {
  const auto& inner = nest.stride.back();
  const int64_t n = nest.inner();
  if (nest.size.size() >= 2 && inner[0] == 1 && inner[1] == 1 && n * static_cast<int64_t>(sizeof(T)) <= 64) {
    // Short contiguous runs: the two innermost dims as one block of rows
    // per call (CopyRows), the dims outside them split across threads.
    LoopNest<2> rows = nest;
    rows.size.pop_back();
    rows.stride.pop_back();
    const int64_t outer = rows.outer_count();
    ParallelFor(outer, outer * rows.inner() * n, [&](int64_t o0, int64_t o1) {
      ForEachInnerRun(rows, o0, o1, [&](const std::array<int64_t, 2>& off, int64_t m, const std::array<int64_t, 2>& s) {
        CopyRows(dst + off[0], s[0] * static_cast<int64_t>(sizeof(T)), src + off[1], s[1] * static_cast<int64_t>(sizeof(T)), m,
                 n * static_cast<int64_t>(sizeof(T)));
      });
    });
    return;
  }
  const int64_t outer = nest.outer_count();
  ParallelFor(outer, outer * n, [&](int64_t o0, int64_t o1) {
    ForEachInnerRun(nest, o0, o1, [&](const std::array<int64_t, 2>& off, int64_t count, const std::array<int64_t, 2>& s) {
      T* __restrict d = dst + off[0];
      const T* __restrict p = src + off[1];
      if (s[0] == 1 && s[1] == 1) {
        std::memcpy(d, p, static_cast<size_t>(count) * sizeof(T));
      } else {
        for (int64_t i = 0; i < count; ++i) d[i * s[0]] = p[i * s[1]];
      }
    });
  });
}

}  // namespace

void CopyRows(void* dst, int64_t dst_stride, const void* src, int64_t src_stride, int64_t rows, int64_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (bytes >= 4 && bytes <= 64 && bytes % 4 == 0) return kFixedRows[static_cast<size_t>(bytes / 4 - 1)](d, dst_stride, s, src_stride, rows);
  for (int64_t i = 0; i < rows; ++i) std::memcpy(d + i * dst_stride, s + i * src_stride, static_cast<size_t>(bytes));
}

Status CopyInto(const Tensor& dst, const Tensor& src) {
  const LoopNest<2> nest = MakeLoopNest<2>(src.shape(), {dst.strides(), src.strides()});
  switch (DTypeSize(src.dtype())) {
    case 1: CopyStrided(static_cast<uint8_t*>(dst.raw()), static_cast<const uint8_t*>(src.raw()), nest); break;
    case 2: CopyStrided(static_cast<uint16_t*>(dst.raw()), static_cast<const uint16_t*>(src.raw()), nest); break;
    case 4: CopyStrided(static_cast<uint32_t*>(dst.raw()), static_cast<const uint32_t*>(src.raw()), nest); break;
    case 8: CopyStrided(static_cast<uint64_t*>(dst.raw()), static_cast<const uint64_t*>(src.raw()), nest); break;
    default: return Internal("element size " + std::to_string(DTypeSize(src.dtype())) + " cannot be copied");
  }
  return Status::Ok();
}

}  // namespace kiln::cpu
