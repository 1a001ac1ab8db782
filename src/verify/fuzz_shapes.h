// Shape bookkeeping of the graph fuzzer (fuzz_grammar.h): the output-size
// formulas of the ops it generates, written once from the ONNX specification
// (opset 17), so every generated graph is valid by construction and every
// value's static shape is known when the next node is chosen. Pure integer
// arithmetic; no graph types.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::verify {

// Size limits of generated values: every dim, and the element count.
struct FuzzLimits {
  int64_t max_dim = 48;          // any axis (a Concat may double a 24-px side)
  int64_t max_channels = 32;     // output channels of Conv/ConvTranspose, input channels they accept
  int64_t max_spatial = 24;      // generated inputs, Resize targets
  int64_t max_numel = 2 * 32 * 24 * 24;
};
bool FitsLimits(const Shape& s, const FuzzLimits& limits);

int64_t Numel(const Shape& s);
// Effective extent of a dilated kernel: (k - 1) * d + 1.
inline int64_t DilatedKernel(int64_t k, int64_t d) { return (k - 1) * d + 1; }

// One spatial axis of a Conv / pooling window (explicit pads).
struct Window1D {
  int64_t kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
};
// floor((in + pb + pe - dk) / s) + 1, or ceil with ceil_mode; <= 0 when the
// window does not fit.
int64_t WindowOutSize(int64_t in, const Window1D& w, bool ceil_mode = false);
// With ceil_mode, whether the last window starts inside the input or its
// left padding (PyTorch and ONNX Runtime drop a window that starts in the
// right padding; the ONNX formula keeps it — generated graphs avoid the case).
bool CeilModeLastWindowStartsInside(int64_t in, const Window1D& w);
// auto_pad SAME_UPPER/SAME_LOWER: output ceil(in / s), total pad
// max(0, (out - 1) * s + dk - in), the odd one at the end (UPPER) or begin (LOWER).
void SamePads(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, bool upper, int64_t* pad_begin,
              int64_t* pad_end);
// ConvTranspose: s * (in - 1) + output_padding + dk - pb - pe.
int64_t ConvTransposeOutSize(int64_t in, const Window1D& w, int64_t output_padding);

// Slice (opset 13) along one axis of size `dim`: the clamping of the spec
// (negative starts/ends count from the end; INT64 sentinels clamp) and
// max(0, ceil((end - start) / step)).
int64_t SliceOutSize(int64_t dim, int64_t start, int64_t end, int64_t step);

// Multidirectional (numpy) broadcasting; false when the shapes do not broadcast.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out);
// result[i] = s[perm[i]].
Shape PermuteShape(const Shape& s, const std::vector<int64_t>& perm);
// perm^-1.
std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm);
// Positive divisors of n, ascending.
std::vector<int64_t> Divisors(int64_t n);
// Resize with scales: floor(in * scale) (opset 13: roi ignored outside tf_crop_and_resize).
int64_t ResizeOutSize(int64_t in, float scale);
// Flatten(axis) of a shape: [prod(s[:axis]), prod(s[axis:])], axis in [0, rank].
Shape FlattenShape(const Shape& s, int64_t axis);

}  // namespace kiln::verify
