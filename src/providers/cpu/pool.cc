// MaxPool and AveragePool (2-D, float32) on oneDNN's pooling_v2 primitive
// (it takes dilations), except channels-last MaxPool without dilation, which
// runs kiln's own loop (MaxPoolChannelsLast below); GlobalMaxPool and
// GlobalAveragePool on kiln's own loops (GlobalPool below). The factory runs
// once per node at session creation and declines what oneDNN cannot compute
// exactly, so those nodes fall back to the reference kernel:
//   - other dtypes or ranks (1-D/3-D pools, MaxPool's int8/uint8);
//   - MaxPool's Indices output (oneDNN's workspace is not ONNX's flat index);
//     storage_order only changes Indices, so without them it is accepted;
//   - AveragePool with count_include_pad where ceil_mode adds an output
//     window that reaches past the end padding: the spec (and the reference)
//     divides by the taps inside the padded extent, oneDNN's
//     avg_include_padding always by the whole kernel. Static shapes are
//     checked exactly; a dynamic shape with ceil_mode + count_include_pad is
//     declined outright;
//   - exclude-padding AveragePool where a dilated window holds padding only
//     (oneDNN refuses it; the spec's value is 0): checked on static shapes,
//     dynamic ones with dilations and padding are declined.
//
// Output size: ONNX's floor((in + pads - eff_k) / s) + 1, or with ceil_mode
// the ceiling, dropping a last window that would start in the end padding
// (ops::ForwardAxis). oneDNN only knows the floor form, so ceil_mode is
// expressed as a larger end pad that makes the floor form give the same
// size; max and exclude-padding average ignore padding taps, so the extra
// pad changes no value.
//
// A window that holds no input value at all (possible only with dilations)
// is -inf for MaxPool and 0 for AveragePool in the reference; those cells
// are found per axis when the primitive is built and written after it ran
// (MaxPool, and AveragePool with count_include_pad).
//
// Layouts: the input is accepted channels-last (NHWC storage) and row-major
// (NCHW) and the output is written in the order the input arrived in, with
// the matching oneDNN tag, so pooling never forces a conversion between
// channels-last convolutions and never adds one on an NCHW path.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "ops/pool.h"
#include "providers/cpu/dnnl_common.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/vec_math.h"
#include "providers/cpu/families.h"
#include "support/lane_mask.h"

// GCC 12 warns that the _mm512_undefined_ps() its own intrinsics pass as
// the unused merge source of _mm512_max_ps "may be used uninitialized"; it
// is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace kiln::cpu {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

enum class PoolKind { kMax, kAverage, kGlobalMax, kGlobalAverage };

bool IsGlobal(PoolKind k) { return k == PoolKind::kGlobalMax || k == PoolKind::kGlobalAverage; }
bool IsMax(PoolKind k) { return k == PoolKind::kMax || k == PoolKind::kGlobalMax; }

struct PoolPrimitive {
  dnnl::pooling_v2_forward::primitive_desc pd;
  dnnl::pooling_v2_forward prim;
  Shape out_shape;
  // Output rows / columns whose window has no tap inside the input.
  std::vector<int64_t> empty_rows, empty_cols;
  // Channels-last MaxPool without dilation: kiln's loop (MaxPoolChannelsLast)
  // with this window, instead of the primitive.
  bool kiln_max = false;
  int64_t kernel[2] = {}, stride[2] = {}, pad_begin[2] = {};
};

// kiln's channels-last MaxPool (AVX-512F, no dilation): each output pixel's
// channels, 64 at a time in registers, folded over the window's taps in
// row-major order from the first tap inside the input, keeping a value only
// where the next one is greater (_mm512_max_ps(v, acc) is v > acc ? v : acc),
// exactly as the reference compares, NaN included. Every window holds a
// tap (Build takes this path only when no window is padding only, which
// without dilation is always: pads are smaller than the kernel, and
// ceil_mode drops a window that would start in the end padding). In
// resnet50 at 1 thread (per-node minima of 3 alternated runs) its 3x3/2
// MaxPool of 112x112x64 went from oneDNN's 0.21 to 0.15 ms (ONNX Runtime's: 0.095; the pool alone, run
// after run on one 3.2 MB input, 0.077 against oneDNN's 0.084),
// rtmdet_like's three 5x5 SPPF pools from 0.17 to 0.14 ms in all.

// Vector v of NV from p: a plain load where all 16 lanes are channels
// (masked loads issue more slowly on this machine's AMD cores, winograd.cc),
// the last vector masked by `last`.
template <int NV>
__attribute__((target("avx512f"))) inline __m512 LoadChannels(const float* p, int v, __mmask16 last) {
  return v < NV - 1 || last == 0xFFFF ? _mm512_loadu_ps(p + 16 * v) : _mm512_maskz_loadu_ps(last, p + 16 * v);
}

// One output pixel's channels [c0, c0 + 16 * NV) over the window rows
// [y0, y1) and columns [x0, x1) of image xi (c channels per pixel), the
// last vector's lanes masked by `last`. NV is known to the compiler so the
// accumulators stay in registers.
template <int NV>
__attribute__((target("avx512f"))) inline void MaxPoolPixel(const float* xi, int64_t iw, int64_t c, int64_t y0, int64_t y1, int64_t x0,
                                                            int64_t x1, __mmask16 last, float* out) {
  __m512 acc[NV];
  const float* first = xi + (y0 * iw + x0) * c;
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) acc[v] = LoadChannels<NV>(first, v, last);
  for (int64_t iy = y0; iy < y1; ++iy)
    for (int64_t ix = iy == y0 ? x0 + 1 : x0; ix < x1; ++ix) {
      const float* tap = xi + (iy * iw + ix) * c;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[v] = _mm512_max_ps(LoadChannels<NV>(tap, v, last), acc[v]);
    }
#pragma GCC unroll 4
  for (int v = 0; v < NV - 1; ++v) _mm512_storeu_ps(out + 16 * v, acc[v]);
  _mm512_mask_storeu_ps(out + 16 * (NV - 1), last, acc[NV - 1]);
}

// Output rows [r0, r1) of all images' n * oh.
__attribute__((target("avx512f"))) void MaxPoolRows(const float* x, float* y, const Shape& xs, const PoolPrimitive& p, int64_t r0, int64_t r1) {
  const int64_t c = xs[1], ih = xs[2], iw = xs[3], oh = p.out_shape[2], ow = p.out_shape[3];
  const int64_t kh = p.kernel[0], kw = p.kernel[1], sh = p.stride[0], sw = p.stride[1], pt = p.pad_begin[0], pl = p.pad_begin[1];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t img = r / oh, oy = r % oh;
    const int64_t y0 = std::max<int64_t>(0, oy * sh - pt), y1 = std::min(ih, oy * sh - pt + kh);
    const float* xi = x + img * ih * iw * c;
    float* yr = y + r * ow * c;
    for (int64_t ox = 0; ox < ow; ++ox) {
      const int64_t x0 = std::max<int64_t>(0, ox * sw - pl), x1 = std::min(iw, ox * sw - pl + kw);
      float* out = yr + ox * c;
      // Blocks of 64 channels, then what is left (1 to 4 vectors).
      for (int64_t c0 = 0; c0 < c; c0 += 64) {
        const int64_t rest = std::min<int64_t>(64, c - c0), nv = (rest + 15) / 16;
        const __mmask16 last = FirstLanes(rest - 16 * (nv - 1));
        const float* xc = xi + c0;
        float* oc = out + c0;
        switch (nv) {
          case 4: MaxPoolPixel<4>(xc, iw, c, y0, y1, x0, x1, last, oc); break;
          case 3: MaxPoolPixel<3>(xc, iw, c, y0, y1, x0, x1, last, oc); break;
          case 2: MaxPoolPixel<2>(xc, iw, c, y0, y1, x0, x1, last, oc); break;
          default: MaxPoolPixel<1>(xc, iw, c, y0, y1, x0, x1, last, oc); break;
        }
      }
    }
  }
}

void MaxPoolChannelsLast(const float* x, float* y, const Shape& xs, const PoolPrimitive& p) {
  const int64_t rows = xs[0] * p.out_shape[2];
  const int64_t work = rows * p.out_shape[3] * xs[1] * p.kernel[0] * p.kernel[1];
  ParallelFor(rows, work, [&](int64_t r0, int64_t r1) { MaxPoolRows(x, y, xs, p, r0, r1); });
}

// The order a dense 4-D input is stored in: channels-last when its strides
// are exactly NHWC's, else row-major when it is dense that way, else
// channels-last when dense that way (size-1 dims make both possible).
bool ArrivedOrder(const Tensor& x, DimOrder* order) {
  if (x.strides() == StridesInOrder(x.shape(), kChannelsLast)) { *order = kChannelsLast; return true; }
  if (IsDenseInOrder(x, kRowMajor)) { *order = kRowMajor; return true; }
  if (IsDenseInOrder(x, kChannelsLast)) { *order = kChannelsLast; return true; }
  return false;
}

// Global pooling is kiln's own loop, not oneDNN's: oneDNN's pooling with a
// whole-map kernel ran at a fraction of memory speed (0.064 ms for one
// squeeze-excite block of PP-OCR cls, 13% of that model's time), and squeeze-excite
// blocks put one after nearly every stage. Channels-last rows of C values
// are folded into C accumulators, chunk by chunk of rows (kPoolChunk below);
// a row-major plane into 16 lanes by one thread. Either way each output is
// a fold in a fixed order, so the thread count changes no result.
// acc[j] = sum or max over rows r of x[r * stride + j], j < c. A block of
// channels at a time in two register accumulators (even and odd rows), so
// no sum waits on the previous row's (accumulating in memory did: 0.26 ns
// per value). Always inlined, so each ISA clone below gets its own copy.
template <bool kMax>
__attribute__((always_inline)) inline float Fold2(float a, float b) {
  if constexpr (kMax) return b > a ? b : a;
  return a + b;
}

// kW channels from x into acc, over `rows` rows `stride` apart.
template <bool kMax, int kW>
__attribute__((always_inline)) inline void FoldBlock(const float* __restrict x, int64_t rows, int64_t stride, float* __restrict acc) {
  float a[kW], b[kW];
  for (int k = 0; k < kW; ++k) a[k] = x[k], b[k] = kMax ? x[k] : 0.f;
  int64_t r = 1;
  for (; r + 1 < rows; r += 2)
    for (int k = 0; k < kW; ++k) {
      a[k] = Fold2<kMax>(a[k], x[r * stride + k]);
      b[k] = Fold2<kMax>(b[k], x[(r + 1) * stride + k]);
    }
  if (r < rows)
    for (int k = 0; k < kW; ++k) a[k] = Fold2<kMax>(a[k], x[r * stride + k]);
  for (int k = 0; k < kW; ++k) acc[k] = Fold2<kMax>(a[k], b[k]);
}

// Blocks of 128 channels (16 AVX-512 accumulators: each row's values of
// the block are read in one sweep), then 64, 32, 16, 8, 4 and single ones
// (SE blocks of 8 channels are common in small models).
template <bool kMax>
__attribute__((always_inline)) inline void FoldRows(const float* __restrict x, int64_t rows, int64_t stride, int64_t c, float* __restrict acc) {
  int64_t j = 0;
  for (; j + 128 <= c; j += 128) FoldBlock<kMax, 128>(x + j, rows, stride, acc + j);
  if (j + 64 <= c) FoldBlock<kMax, 64>(x + j, rows, stride, acc + j), j += 64;
  if (j + 32 <= c) FoldBlock<kMax, 32>(x + j, rows, stride, acc + j), j += 32;
  for (; j + 16 <= c; j += 16) FoldBlock<kMax, 16>(x + j, rows, stride, acc + j);
  if (j + 8 <= c) FoldBlock<kMax, 8>(x + j, rows, stride, acc + j), j += 8;
  if (j + 4 <= c) FoldBlock<kMax, 4>(x + j, rows, stride, acc + j), j += 4;
  for (; j < c; ++j) FoldBlock<kMax, 1>(x + j, rows, stride, acc + j);
}

KILN_CPU_CLONES void FoldRowsChannelsLast(const float* x, int64_t rows, int64_t stride, int64_t c, float* acc, bool max) {
  if (max)
    FoldRows<true>(x, rows, stride, c, acc);
  else
    FoldRows<false>(x, rows, stride, c, acc);
}

KILN_CPU_CLONES float FoldPlane(const float* x, int64_t n, bool max) {
  constexpr int kLanes = 16;
  float lane[kLanes];
  int64_t i = 0;
  if (n >= kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] = x[j];
    for (i = kLanes; i + kLanes <= n; i += kLanes) {
      if (max)
        for (int j = 0; j < kLanes; ++j) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
      else
        for (int j = 0; j < kLanes; ++j) lane[j] += x[i + j];
    }
  } else {
    for (int j = 0; j < kLanes; ++j) lane[j] = max ? x[0] : 0.f;
  }
  float r = lane[0];
  for (int j = 1; j < kLanes; ++j) r = max ? (lane[j] > r ? lane[j] : r) : r + lane[j];
  for (; i < n; ++i) r = max ? (x[i] > r ? x[i] : r) : r + x[i];
  return r;
}

// Channels-last pooling cuts each image's rows (pixels) into chunks of
// kPoolChunk rows, a count that does not depend on the thread count: each
// chunk is read once, from start to end, all its channels folded into its
// own partial row, and the partials are folded in chunk order afterwards.
// So every output is the same fixed-order fold for any thread count, and
// large maps are split across threads too. Walking the image once per
// block of 64 channels instead (each walk reading part of every row) took
// 0.74 ms on PP-OCR det's 96-channel 160x160 map, where ONNX Runtime takes
// 0.28.
constexpr int64_t kPoolChunk = 256;

int64_t GlobalPoolChunks(const Shape& x) { return (x[2] * x[3] + kPoolChunk - 1) / kPoolChunk; }

// y[n, c] = max or mean of x[n, c, :, :], x dense channels-last or row-major.
// partial: n * GlobalPoolChunks(x) * c floats (channels-last only).
void GlobalPool(const Tensor& x, Tensor& y, bool channels_last, bool max, float* partial) {
  const Shape& s = x.shape();
  const int64_t n = s[0], c = s[1], hw = s[2] * s[3];
  const float* in = x.data<float>();
  float* out = y.data<float>();  // [N, C, 1, 1]: the same in either order
  const float scale = max ? 1.f : 1.f / static_cast<float>(hw);
  if (channels_last) {
    const int64_t chunks = GlobalPoolChunks(s);
    ParallelFor(n * chunks, n * c * hw, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t img = i / chunks, r0 = (i % chunks) * kPoolChunk, rows = std::min(kPoolChunk, hw - r0);
        FoldRowsChannelsLast(in + (img * hw + r0) * c, rows, c, c, partial + i * c, max);
      }
    });
    for (int64_t img = 0; img < n; ++img) {
      float* acc = out + img * c;
      FoldRowsChannelsLast(partial + img * chunks * c, chunks, c, c, acc, max);
      if (!max)
        for (int64_t j = 0; j < c; ++j) acc[j] *= scale;
    }
    return;
  }
  ParallelFor(n * c, n * c * hw, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = FoldPlane(in + i * hw, hw, max) * scale;
  });
}

class PoolKernel {
 public:
  PoolKernel(const ir::Node& node, PoolKind kind, ops::PoolAttrs attrs) : node_(node), kind_(kind), attrs_(std::move(attrs)) {}

  // The primitive for one input shape and layout; Unimplemented when oneDNN
  // cannot compute this shape exactly (the factory declines on it).
  Result<std::shared_ptr<const PoolPrimitive>> Get(const Shape& x, bool channels_last) {
    std::lock_guard<std::mutex> lock(mu_);
    auto key = std::make_pair(x, channels_last);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    KILN_ASSIGN_OR_RETURN(auto p, Build(x, channels_last));
    cache_[key] = p;
    return p;
  }

  Status Run(runtime::KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32 || x.rank() != 4) return ctx.Error("cpu pooling expects a float32 NCHW input, got " + x.Describe());
    DimOrder order;
    if (!ArrivedOrder(x, &order)) return ctx.Error("cpu pooling was handed input X in a layout it did not declare: " + x.Describe());
    const bool cl = order == kChannelsLast;
    if (IsGlobal(kind_)) {
      const Shape& s = x.shape();
      KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, Shape{s[0], s[1], 1, 1}, order));
      if (y.numel() == 0) return Status::Ok();
      if (s[2] * s[3] == 0) {  // as the reference: the max of nothing is -inf, the mean 0
        std::fill_n(y.data<float>(), y.numel(), IsMax(kind_) ? -std::numeric_limits<float>::infinity() : 0.f);
        return Status::Ok();
      }
      Tensor partial;
      if (cl) {  // the chunks' partial folds (see kPoolChunk), from the session's pool
        KILN_ASSIGN_OR_RETURN(partial, ctx.AllocScratch(DType::kFloat32, Shape{s[0] * GlobalPoolChunks(s), s[1]}, kRowMajor, false));
      }
      GlobalPool(x, y, cl, IsMax(kind_), cl ? partial.data<float>() : nullptr);
      return Status::Ok();
    }
    KILN_ASSIGN_OR_RETURN(auto p, Get(x.shape(), cl));
    KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, p->out_shape, order));
    if (y.numel() == 0) return Status::Ok();
    if (p->kiln_max) {
      MaxPoolChannelsLast(x.data<float>(), y.data<float>(), x.shape(), *p);
      return Status::Ok();
    }
    const tag t = cl ? tag::nhwc : tag::nchw;
    KILN_RETURN_IF_ERROR(Guard(node_, [&] {
      dnnl::memory src({Dims(x.shape()), dt::f32, t}, Engine(), const_cast<void*>(x.raw()));
      dnnl::memory dst({Dims(p->out_shape), dt::f32, t}, Engine(), y.raw());
      Execute(p->prim, p->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
    }));
    if (!p->empty_rows.empty() || !p->empty_cols.empty()) FillEmptyWindows(*p, y);
    return Status::Ok();
  }

 private:
  Result<std::shared_ptr<const PoolPrimitive>> Build(const Shape& x, bool channels_last) {
    auto p = std::make_shared<PoolPrimitive>();
    dnnl::memory::dims kernel, strides, dil, pad_l, pad_r;
    // Global pools never come here (kiln's own loops, GlobalPool above).
    ops::PoolAttrs a = attrs_;
    KILN_ASSIGN_OR_RETURN(auto geo, ops::PoolGeometry(node_, a, {x[2], x[3]}));
    p->out_shape = {x[0], x[1], geo[0].out, geo[1].out};
    for (size_t i = 0; i < 2; ++i) {
      const int64_t in = x[2 + i], s = a.sp.strides[i], d = a.sp.dilations[i], k = a.sp.kernel_shape[i];
      const int64_t eff_k = (k - 1) * d + 1, out = geo[i].out;
      // oneDNN's size is floor((in + pl + pr - eff_k) / s) + 1: keep the
      // spec's end pad when it gives the same size, else (ceil_mode) the
      // pad that ends the last window.
      int64_t pr = geo[i].pad_end;
      if ((in + geo[i].pad_begin + pr - eff_k) / s + 1 != out) pr = (out - 1) * s + eff_k - in - geo[i].pad_begin;
      if (kind_ == PoolKind::kAverage && a.count_include_pad && pr > geo[i].pad_end)
        return Unimplemented(node_.Describe() + ": ceil_mode adds a window past the end padding, which count_include_pad "
                             "divides by its taps in the padded extent and oneDNN by the whole kernel");
      kernel.push_back(k);
      strides.push_back(s);
      dil.push_back(d - 1);
      pad_l.push_back(geo[i].pad_begin);
      pad_r.push_back(pr);
      // Output cells along this axis whose taps all fall outside the input.
      std::vector<int64_t>& empty = i == 0 ? p->empty_rows : p->empty_cols;
      for (int64_t o = 0; o < out; ++o) {
        bool any = false;
        for (int64_t j = 0; j < k && !any; ++j) {
          const int64_t pos = o * s - geo[i].pad_begin + j * d;
          any = pos >= 0 && pos < in;
        }
        if (!any) empty.push_back(o);
      }
      // oneDNN refuses exclude-padding averages over windows of padding
      // only (a division by zero), which the spec defines as 0.
      if (kind_ == PoolKind::kAverage && !a.count_include_pad && !empty.empty())
        return Unimplemented(node_.Describe() + ": a dilated window holds padding only, which oneDNN's exclude-padding average refuses");
    }
    bool undilated = true;
    for (int64_t d : a.sp.dilations) undilated = undilated && d == 1;
    const bool every_window_reads = p->empty_rows.empty() && p->empty_cols.empty();
    if (kind_ == PoolKind::kMax && channels_last && undilated && every_window_reads && HasAvx512F()) {
      p->kiln_max = true;
      for (size_t i = 0; i < 2; ++i) {
        p->kernel[i] = a.sp.kernel_shape[i];
        p->stride[i] = a.sp.strides[i];
        p->pad_begin[i] = geo[i].pad_begin;
      }
      return std::shared_ptr<const PoolPrimitive>(p);
    }
    KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "input", x));
    KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "output", p->out_shape));
    const dnnl::algorithm alg = IsMax(kind_) ? dnnl::algorithm::pooling_max
                                : (kind_ == PoolKind::kAverage && attrs_.count_include_pad) ? dnnl::algorithm::pooling_avg_include_padding
                                                                                           : dnnl::algorithm::pooling_avg_exclude_padding;
    const tag t = channels_last ? tag::nhwc : tag::nchw;
    // A small pool runs on the calling thread (SerialScope, as a small
    // Conv does): PP-OCR cls's 2x2 MaxPool of 200x2x96 took 5 us on one
    // thread and 15 us split over two.
    double work = static_cast<double>(x[0] * x[1] * p->out_shape[2] * p->out_shape[3]);
    for (int64_t k : a.sp.kernel_shape) work *= static_cast<double>(k);
    SerialScope serial(work < kSerialFlops);
    Status s = Guard(node_, [&] {
      dnnl::memory::desc src_md(Dims(x), dt::f32, t);
      dnnl::memory::desc dst_md(Dims(p->out_shape), dt::f32, t);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_md, dst_md, strides, kernel, dil, pad_l, pad_r);
      p->pd = dnnl::pooling_v2_forward::primitive_desc(desc, attr, Engine());
      p->prim = dnnl::pooling_v2_forward(p->pd);
    });
    KILN_RETURN_IF_ERROR(s);
    return std::shared_ptr<const PoolPrimitive>(p);
  }

  // Cells of windows of padding only: -inf (MaxPool) or 0 (AveragePool), as
  // the reference writes them. Indexed through y's strides (either layout).
  void FillEmptyWindows(const PoolPrimitive& p, Tensor& y) const {
    const float v = IsMax(kind_) ? -std::numeric_limits<float>::infinity() : 0.f;
    float* base = y.data<float>();
    const auto& st = y.strides();
    const Shape& sh = y.shape();
    std::vector<bool> row_empty(static_cast<size_t>(sh[2]), false), col_empty(static_cast<size_t>(sh[3]), false);
    for (int64_t r : p.empty_rows) row_empty[static_cast<size_t>(r)] = true;
    for (int64_t c : p.empty_cols) col_empty[static_cast<size_t>(c)] = true;
    for (int64_t n = 0; n < sh[0]; ++n)
      for (int64_t c = 0; c < sh[1]; ++c)
        for (int64_t h = 0; h < sh[2]; ++h)
          for (int64_t w = 0; w < sh[3]; ++w)
            if (row_empty[static_cast<size_t>(h)] || col_empty[static_cast<size_t>(w)])
              base[n * st[0] + c * st[1] + h * st[2] + w * st[3]] = v;
  }

  const ir::Node& node_;
  PoolKind kind_;
  ops::PoolAttrs attrs_;
  std::mutex mu_;
  std::map<std::pair<Shape, bool>, std::shared_ptr<const PoolPrimitive>> cache_;
};

// Whether some dilation > 1 meets padding (explicit or SAME): only then can a
// window miss the input entirely (an undilated window always covers a cell).
bool Dilated(const ops::PoolAttrs& a) {
  bool dilated = false, padded = a.sp.auto_pad == ops::AutoPad::kSameUpper || a.sp.auto_pad == ops::AutoPad::kSameLower;
  for (int64_t d : a.sp.dilations) dilated = dilated || d > 1;
  for (int64_t p : a.sp.pads) padded = padded || p > 0;
  return dilated && padded;
}

Result<runtime::Kernel> MakePool(const runtime::KernelInit& init, PoolKind kind) {
  const ir::Node& n = init.node;
  const ir::TypeInfo* t = init.input_type(0);
  if (!t || t->kind != ir::TypeInfo::Kind::kTensor || t->dtype != DType::kFloat32 || !t->shape || t->shape->size() != 4)
    return runtime::Kernel();
  KILN_ASSIGN_OR_RETURN(ops::PoolAttrs attrs, ops::ParsePool(n, init.opset));
  if (kind == PoolKind::kMax && n.HasOutput(1)) return runtime::Kernel();  // Indices
  if (!IsGlobal(kind)) {
    ops::PoolAttrs probe = attrs;
    KILN_RETURN_IF_ERROR(ops::PoolGeometry(n, probe, {-1, -1}).status());  // kernel_shape, lengths, ranges
  }
  auto kernel = std::make_shared<PoolKernel>(n, kind, attrs);
  const ir::Dims& xd = *t->shape;
  bool static_shape = true;
  Shape xs;
  for (const ir::Dim& d : xd) {
    static_shape = static_shape && d.known();
    xs.push_back(d.value);
  }
  if (static_shape && !IsGlobal(kind)) {
    // Build the primitive now (either layout is a few microseconds; the
    // channels-last one is what the planner's convolutions hand over).
    auto p = kernel->Get(xs, true);
    if (!p.ok() && p.status().code() == StatusCode::kUnimplemented) return runtime::Kernel();
    KILN_RETURN_IF_ERROR(p.status());
  } else if (kind == PoolKind::kAverage && attrs.ceil_mode && attrs.count_include_pad) {
    return runtime::Kernel();  // exactness depends on the shape (see the top of the file)
  } else if (kind == PoolKind::kAverage && !attrs.count_include_pad && Dilated(attrs)) {
    return runtime::Kernel();  // a window of padding only may appear for some shapes
  }
  runtime::KernelLayouts layouts;
  layouts.inputs.resize(1);
  layouts.inputs[0].orders = {kChannelsLast, kRowMajor};
  layouts.output_order = [](const std::vector<DimOrder>& in) { return in.empty() ? kRowMajor : in[0]; };
  return runtime::Kernel([kernel](runtime::KernelContext& ctx) { return kernel->Run(ctx); }, std::move(layouts));
}

}  // namespace

void RegisterPoolKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "MaxPool", [](const runtime::KernelInit& i) { return MakePool(i, PoolKind::kMax); });
  r.RegisterFactory("", "AveragePool", [](const runtime::KernelInit& i) { return MakePool(i, PoolKind::kAverage); });
  r.RegisterFactory("", "GlobalMaxPool", [](const runtime::KernelInit& i) { return MakePool(i, PoolKind::kGlobalMax); });
  r.RegisterFactory("", "GlobalAveragePool", [](const runtime::KernelInit& i) { return MakePool(i, PoolKind::kGlobalAverage); });
}

}  // namespace kiln::cpu
