// Copies a tensor's elements from any strides into row-major order: the
// work of every layout conversion (Tensor::Clone, ConvertLayout), which the
// executor does at provider boundaries and for graph outputs. A plain
// element-by-element walk costs several ns per element; this one merges
// dims that are contiguous in the source, copies contiguous inner runs with
// memcpy, and copies a layout change (the source's unit-stride dim is not
// the destination's innermost, as channels-last -> NCHW) in square tiles so
// both sides stay in cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

// dst: row-major storage of `shape` (elem_size bytes per element); src:
// element strides `strides` (any sign; 0 for broadcast dims). elem_size 1, 2, 4 or 8 takes
// the fast paths, any other size a byte copy per element.
void CopyToRowMajor(void* dst, const void* src, size_t elem_size, const std::vector<int64_t>& shape,
                    const std::vector<int64_t>& strides);

}  // namespace kiln
