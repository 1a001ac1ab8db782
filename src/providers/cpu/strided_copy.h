// Copies between tensors of one logical shape in any layouts (strides):
// the cpu provider's Concat writes each input into its slice of the output
// through it, and Split and Slice copy their views of the input out with it.
#pragma once

#include <cstdint>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

// dst = src element by element (same shape, any strides, any dtype but
// string: a byte copy by element size). The loops run in dst's memory order
// with dims contiguous in both merged, so a channel slice of channels-last
// data is one run of channels per pixel; runs are split across threads.
Status CopyInto(const Tensor& dst, const Tensor& src);

// `rows` rows of `bytes` bytes: row i from src + i * src_stride to dst + i *
// dst_stride (strides in bytes). Rows of up to 64 bytes (a few channels per
// pixel) copy with fixed-size moves, one call per block of rows: a loop or
// a library call per 12-byte row was most of the time of a 640x640 image's
// focus stem (in yolo_c2f_like at 1 thread, a 3-channel Slice with steps
// 0.38 -> 0.09 ms, the Concat of four 1.02 -> 0.50).
void CopyRows(void* dst, int64_t dst_stride, const void* src, int64_t src_stride, int64_t rows, int64_t bytes);

}  // namespace kiln::cpu
