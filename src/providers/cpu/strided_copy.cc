#include "providers/cpu/strided_copy.h"

#include <cstring>
#include <string>

#include "providers/cpu/parallel.h"
#include "providers/cpu/strided_loop.h"

namespace kiln::cpu {
namespace {

template <typename T>
void CopyStrided(T* dst, const T* src, const LoopNest<2>& nest) {
  const int64_t outer = nest.outer_count();
  ParallelFor(outer, outer * nest.inner(), [&](int64_t o0, int64_t o1) {
    ForEachInnerRun(nest, o0, o1, [&](const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& s) {
      T* __restrict d = dst + off[0];
      const T* __restrict p = src + off[1];
      if (s[0] == 1 && s[1] == 1 && n >= 64) {
        std::memcpy(d, p, static_cast<size_t>(n) * sizeof(T));
      } else if (s[0] == 1 && s[1] == 1) {
        for (int64_t i = 0; i < n; ++i) d[i] = p[i];  // short runs (a few channels per pixel): no call per run
      } else {
        for (int64_t i = 0; i < n; ++i) d[i * s[0]] = p[i * s[1]];
      }
    });
  });
}

}  // namespace

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
