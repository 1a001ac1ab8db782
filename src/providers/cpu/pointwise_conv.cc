#include "providers/cpu/pointwise_conv.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "providers/cpu/conv_epilogue.h"
#include "providers/cpu/dnnl_common.h"
#include "providers/cpu/parallel.h"

namespace kiln::cpu {
namespace {

// Pixel rows per work item: the item's input rows stay within this many
// bytes (a quarter of the 1 MiB L2, leaving room for the weight panel),
// at least kMinBlockRows, in whole register tiles of 6 rows.
constexpr int64_t kBlockBytes = 256 * 1024;
constexpr int64_t kMinBlockRows = 48;
constexpr int64_t kTileRows = 6;

}  // namespace

// Measured one call at a time, caches flushed before each (min of 15, 1
// thread, this machine's AMD EPYC; pixels x ic -> oc): 49 x 512 -> 2048
// 0.54 ms (190 GFLOP/s) where oneDNN's kernel took 0.63-0.67 in resnet50;
// 49 x 2048 -> 512 0.52-0.54; 196 x 256 -> 1024 and 196 x 1024 -> 256 0.48
// (oneDNN 0.52-0.55); 784 x 512 -> 128 0.48-0.50 (oneDNN 0.51);
// 196 x 1024 -> 512 0.94-0.99 (oneDNN 1.05). With 64 input channels
// DirectConv's row kernel wins (56x56 64 -> 64: 0.14 against 0.16 ms).
// In the models (KILN_CPU_POINTWISE=0 against on, per-node minima of
// alternated runs) the gap shrinks to memory's share: resnet50's 27 such
// 1x1s 18.42 -> 18.21 ms at 1 thread, rtmdet_like's 23 (SiLU) 11.32 ->
// 10.55; PP-OCRv4 rec's 240 -> 240 at 12x80 even at 1 thread and 0.31 ->
// 0.36 ms at 2 (its neighbours are oneDNN's, split their own way).
bool PointwiseConv::Preferred(const PointwiseShape& s) {
  const char* v = std::getenv("KILN_CPU_POINTWISE");
  const std::string mode = v ? v : "";
  if (mode == "0" || !DirectConv::Available()) return false;
  if (mode == "all") return true;
  return s.ic > 128;
}

PointwiseConv::PointwiseConv(const PointwiseShape& s, const float* w, const float* bias, const ops::ActivationAttrs& act)
    : s_(s), ocp_((s.oc + 15) / 16 * 16), act_(act) {
  panels_ = (ocp_ + kGemmTileChannels - 1) / kGemmTileChannels;
  const int64_t rows = std::max(kMinBlockRows, kBlockBytes / (s.ic * static_cast<int64_t>(sizeof(float))));
  block_rows_ = std::min(s.pixels, std::max(kTileRows, rows / kTileRows * kTileRows));
  w_.reset(PackGemmPanels(w, s.oc, s.ic, ocp_));
  bias_.reset(AlignedFloats(ocp_));
  if (bias) std::copy(bias, bias + s.oc, bias_.get());
}

void PointwiseConv::Run(const float* x, float* y, const float* residual) const {
  if (s_.pixels == 0) return;
  const double flops = 2.0 * static_cast<double>(s_.pixels) * static_cast<double>(s_.ic) * static_cast<double>(s_.oc);
  const Clamp clamp = ClampOf(act_);
  // Rows [r0, r0 + rows) against panel b.
  auto gemm = [&](int64_t b, int64_t r0, int64_t rows, const float* prefetch) {
    const int64_t c0 = b * kGemmTileChannels;
    PackedGemm(x + r0 * s_.ic, s_.ic, rows, s_.ic, w_.get() + b * s_.ic * kGemmTileChannels, GemmPanelWidth(ocp_, b) / 16,
               bias_.get() + c0, y + r0 * s_.oc + c0, s_.oc,
               {.z = residual ? residual + r0 * s_.oc + c0 : nullptr,
                .channels = std::min(kGemmTileChannels, s_.oc - c0),
                .lo = clamp.lo,
                .hi = clamp.hi,
                .prefetch = prefetch,
                .act = Clamps(act_) ? nullptr : &act_});
  };
  // A range of pixel rows against panels [b0, b1), panel-major: a panel is
  // read once (from memory the first time), then every pixel block of the
  // range against it while it stays in L2; the last block of a panel asks
  // for the next panel into L2 while it reads its own.
  auto run = [&](int64_t p0, int64_t p1, int64_t b0, int64_t b1) {
    // Equal blocks of at most block_rows_ (in whole tiles): the last block,
    // which asks for the next panel, must not be a stub, or the request
    // comes too late to overlap anything. resnet50's 7x7 2048->512 1x1s
    // ran 49 rows as 48 + 1 and took 0.63-0.68 ms; as 30 + 19, 0.56-0.57
    // (per-node minima of 5 alternated runs, 1 thread).
    const int64_t blocks = std::max<int64_t>(1, (p1 - p0 + block_rows_ - 1) / block_rows_);
    const int64_t per = ((p1 - p0 + blocks - 1) / blocks + kTileRows - 1) / kTileRows * kTileRows;
    for (int64_t b = b0; b < b1; ++b)
      for (int64_t r0 = p0; r0 < p1; r0 += per) {
        const int64_t rows = std::min(per, p1 - r0);
        const bool next = r0 + rows == p1 && b + 1 < b1;
        gemm(b, r0, rows, next ? w_.get() + b * s_.ic * kGemmTileChannels + s_.ic * GemmPanelWidth(ocp_, b) : nullptr);
      }
  };
  // Threads only where oneDNN's primitives would use them (kSerialFlops).
  // With more pixels than weights each thread takes a range of pixel rows
  // (in whole tiles) and every panel, so it writes the rows the next
  // layer's same split reads on the same core (split by panels instead,
  // resnet50's 28x28 1x1s and their neighbors took 5-15% longer at 2
  // threads: each pixel's channels came from both cores). With more
  // weights (a ResNet's last stage) each thread takes its own panels and
  // streams only those.
  const int64_t work = flops < kSerialFlops ? 0 : kParallelMin;
  if (s_.pixels * (s_.ic + s_.oc) > s_.ic * s_.oc) {
    ParallelFor((s_.pixels + kTileRows - 1) / kTileRows, work,
                [&](int64_t t0, int64_t t1) { run(t0 * kTileRows, std::min(s_.pixels, t1 * kTileRows), 0, panels_); });
  } else {
    ParallelFor(panels_, work, [&](int64_t b0, int64_t b1) { run(0, s_.pixels, b0, b1); });
  }
}

}  // namespace kiln::cpu
