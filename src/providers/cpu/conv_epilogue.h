// The end of a convolution that oneDNN computed in its blocked layout
// (nChw16c / nChw8c: channels in blocks of `block`, padded): one pass that
// writes the channels-last result, adds the residual and applies the fused
// activation and post_affine. It replaces oneDNN's reorder back to NHWC, so
// a kernel (Winograd) that supports no eltwise post-ops but ReLU still runs
// every FusedConv: y = post_scale * act(conv + z) + post_shift.
#pragma once

#include <cstdint>

#include "ops/fused.h"

namespace kiln::cpu {

struct BlockedGeometry {
  int64_t n = 0, c = 0, hw = 0;  // batch, channels (unpadded), pixels
  int64_t block = 16;            // channels per block (the padding is skipped)
};

// dst: channels-last [n, hw, c]; src: blocked [n, ceil(c/block), hw, block];
// residual: channels-last like dst, or null. Threads over n*hw when large.
void BlockedToChannelsLast(float* dst, const float* src, const float* residual, const BlockedGeometry& g,
                           const ops::ActivationAttrs& act);

// y[i] = post_scale * act(y[i] + residual[i]) + post_shift for i < n, in
// place on one thread (residual may be null): the end of kiln's own direct
// convolution (direct_conv.h), run on each output row while it is in cache.
void ResidualActivationInPlace(float* y, const float* residual, int64_t n, const ops::ActivationAttrs& act);

}  // namespace kiln::cpu
