// Copies between tensors of one logical shape in any layouts (strides):
// the cpu provider's Concat writes each input into its slice of the output
// through it, and Split and Slice copy their views of the input out with it.
#pragma once

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

// dst = src element by element (same shape, any strides, any dtype but
// string: a byte copy by element size). The loops run in dst's memory order
// with dims contiguous in both merged, so a channel slice of channels-last
// data is one run of channels per pixel; runs are split across threads.
Status CopyInto(const Tensor& dst, const Tensor& src);

}  // namespace kiln::cpu
