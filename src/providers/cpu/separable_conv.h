// kiln's fused depthwise-separable block (float32, channels-last, AVX-512):
// an optional 1x1 expansion, a k x k depthwise convolution and a 1x1
// projection with an optional residual, each with its activation; the
// FusedSeparableConv op (ops/fused.h), MobileNet's inverted residual.
//
// Why: run one layer at a time, the expanded tensor (up to six times the
// block's input) goes out to memory and back twice; in mobilenet_v2's first
// blocks at 112x112 and 56x56 that traffic, not arithmetic, sets the time
// (oneDNN's 16->96 at 112x112: 0.20 ms with warm caches, 0.44 ms in the
// model). Here each thread walks its output rows in bands: it expands only
// the input rows the band's windows need into a ring of rows (reused by the
// next band), runs the depthwise window over them into a band buffer, and
// projects the band straight into the output, so the expanded and depthwise
// values never leave the core's caches.
//
// Each value is one fixed-order sum, as the unfused convolutions compute it
// (expansion and projection on PackedGemm, direct_conv.h), and rows are
// split into one contiguous chunk per thread (a map of few rows, such as
// PP-OCRv4 rec's 3x80 and 12x80, into one strip of columns per thread
// instead): the thread count changes no result. A chunk recomputes the
// expansion of the k - sh rows (a strip: k - sw columns) its windows share
// with the previous one.
#pragma once

#include <cstdint>
#include <memory>

#include "ops/fused.h"
#include "providers/cpu/direct_conv.h"

namespace kiln::cpu {

struct SeparableShape {
  int64_t n = 0, ih = 0, iw = 0, ic = 0;  // input [n, ih, iw, ic]
  int64_t m = 0;                          // depthwise channels (ic without expansion)
  bool expand = false;
  int64_t k = 3, sh = 1, sw = 1;          // depthwise window k x k, strides
  int64_t pad_top = 0, pad_left = 0;      // the end pads follow from the output size
  int64_t oh = 0, ow = 0, oc = 0;         // output [n, oh, ow, oc]
};

class SeparableConv {
 public:
  // One step's weights as ONNX holds them (expansion [m, ic, 1, 1],
  // depthwise [m, 1, k, k], projection [oc, m, 1, 1]), bias (or null) and
  // activation.
  struct Step {
    const float* w = nullptr;
    const float* bias = nullptr;
    ops::ActivationAttrs act;
  };

  // AVX-512F on this CPU (checked at run time).
  static bool Available();

  SeparableConv(const SeparableShape& s, const Step& expand, const Step& depthwise, const Step& project);
  // x [n, ih, iw, ic], y [n, oh, ow, oc], z (like y, or null): dense
  // channels-last. y may be z (each z value is read before y's value at its
  // place is written), never x.
  void Run(const float* x, float* y, const float* z) const;

 private:
  // Output columns [c0, c1) of a row range, from input columns [x0, x1)
  // (those their windows read); the whole width unless the threads split
  // the map by columns (Run).
  struct Strip {
    int64_t c0, c1, x0, x1;
  };
  Strip StripOf(int64_t c0, int64_t c1) const;
  void RunRows(const float* x, float* y, const float* z, int64_t n, int64_t r0, int64_t r1, const Strip& st) const;
  void Depthwise(const float* x, int64_t n, const float* ring, int64_t r, float* d, const Strip& st) const;

  SeparableShape s_;
  int64_t mp_, ocp_;  // m and oc rounded up to 16
  int64_t band_;      // output rows per band
  int64_t ring_;      // input rows the ring holds
  AlignedFloatsPtr we_, be_, wd_, bd_, wp_, bp_;
  ops::ActivationAttrs act_e_, act_d_, act_p_;
};

}  // namespace kiln::cpu
