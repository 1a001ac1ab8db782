// kiln's own 1x1 convolution (float32, channels-last, group 1, stride 1, no
// padding): per pixel, y = bias + x . W, a matrix product of the pixels by
// the weights, on PackedGemm's register tiles (direct_conv.h). For the wide
// 1x1s of ResNets and the last layers of detectors and classifiers, where
// oneDNN 2.6's channels-last kernel runs at 140-185 GFLOP/s on this
// machine's cores and the panels below at 185-215 (pointwise_conv.cc has
// the figures). The narrow ones (at most 128 input channels) stay with
// DirectConv, whose row kernel is faster there.
//
// Weights are packed once in panels of 64 output channels (PackGemmPanels).
// The work is panel-major: a panel is read from memory once and stays in L2
// while the pixel rows pass against it in blocks. Threads split the pixel
// rows when the pixels outweigh the weights (each thread then writes the
// rows its neighbors' row splits read on the same core), else the panels
// (each thread streams only its own). Every output value is one fixed-order
// sum over the input channels, so the thread count changes no result. A
// residual starts the sum, a Relu or Clip is applied in registers, other
// activations to each register tile's rows right after its stores.
#pragma once

#include <cstdint>

#include "ops/fused.h"
#include "providers/cpu/direct_conv.h"

namespace kiln::cpu {

struct PointwiseShape {
  int64_t pixels = 0;  // n * h * w
  int64_t ic = 0, oc = 0;
};

class PointwiseConv {
 public:
  // Whether this kernel is the faster choice for the shape (AVX-512F, more
  // than 128 input channels). KILN_CPU_POINTWISE=0 turns it off, =all takes
  // every shape (for tests).
  static bool Preferred(const PointwiseShape& s);

  // w: [oc, ic, 1, 1] row-major (ONNX); bias: oc values, or null.
  PointwiseConv(const PointwiseShape& s, const float* w, const float* bias, const ops::ActivationAttrs& act);
  // x [pixels, ic], y [pixels, oc] and residual (like y, or null): dense
  // channels-last. y may be the residual itself (each residual value is
  // read before the output value at its place is written), not x.
  void Run(const float* x, float* y, const float* residual) const;

 private:
  PointwiseShape s_;
  int64_t ocp_;         // oc rounded up to 16
  int64_t panels_;      // of kGemmTileChannels output channels
  int64_t block_rows_;  // pixel rows per work item
  AlignedFloatsPtr w_, bias_;
  ops::ActivationAttrs act_;
};

}  // namespace kiln::cpu
