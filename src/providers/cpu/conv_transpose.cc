// ConvTranspose and FusedConvTranspose (2-D, float32; the activation as
// oneDNN post-ops) on oneDNN's deconvolution_forward. Like
// conv.cc: the factory runs once per node at session creation and declines
// what it cannot run exactly (other ranks or dtypes, weights or bias that
// are not constant), so those nodes fall back to the reference kernel; the
// weights are reordered once per input shape into the layout the primitive
// wants, and primitives are cached per input shape (a static shape builds
// its primitive at session creation).
//
// Geometry: the output size and pads come from ops::TransposeAxis, the same
// code the reference and shape inference use (pads, output_padding,
// output_shape, SAME_* auto_pad). oneDNN's size is
// (in - 1) * s + eff_k - pad_l - pad_r, with output position
// i * s + k * d - pad_l, the spec's; so pad_l is the spec's begin pad and
// pad_r whatever makes the size right (end pad minus output_padding, or
// what output_shape asks for). oneDNN takes pad_l >= 0 and pad_r > -stride;
// other cases (an output_shape larger than the full result with the extra
// cells at the beginning, output_padding >= stride under a dilation) are
// declined.
//
// Weights: ONNX's W is [C, M/group, kH, kW] with C = group * C/group, i.e.
// (g, ic, oc, kh, kw) in memory: oneDNN's giohw (iohw without groups).
//
// Data layout: channels-last in and out, as cpu Conv (oneDNN's jit
// deconvolutions run on NHWC); the executor converts anything else.
//
// Tiled upsampling: when the kernel equals the stride on both axes, with no
// pads, dilation, output_padding or groups (the 2x2 stride-2 upsampling of
// PP-OCR det's head, U-Nets, FPNs), every input pixel writes its own
// kH x kW tile of the output and no two tiles overlap:
//   y[n, oc, i*kH + a, j*kW + b] = bias[oc] + sum_c x[n, c, i, j] * W[c, oc, a, b]
// With AVX-512 each tile row a is a product of its own, [W, C] x [C, kW*M]
// per input row, run on the direct kernel's register tiles (PackedGemm,
// direct_conv.h) straight into y: channels-last, input pixel j's tile row
// is kW*M contiguous floats of y's row i*kH + a, so the product's rows lie
// kW*M floats apart and no pass moves them. Where a whole tile fits one
// vector (kH*kW*M <= 16) one product covers all tile rows and a short loop
// moves its values; 2x2 tiles of one channel run pixel-vectorized instead
// (UpsampleTo1Tiles below). Without AVX-512 it is one oneDNN matmul,
// [N*H*W, C] x [C, kH*kW*M], whose tile rows a pass copies into place.
// In PP-OCR det (1 thread, 24 -> 24 channels on 160x160 and 24 -> 1 on
// 320x320) oneDNN 2.6's deconvolution took 10.8 and 5.8 ms per run (its
// jit kernel pads 24 channels to blocks of 16 and runs at 3-11 GFLOP/s),
// the matmul and copy 1.79 and 1.87 ms, the register tiles 0.71 and 1.06
// (0.42 and 0.59 at 2 threads; per-node minimum of 4 alternated runs).
// The 24 -> 1 layer pixel-vectorized: 0.96 -> 0.66 ms at 1 thread, 0.50 ->
// 0.33 at 2 (per-node minima of 4 alternated runs of the model); alone,
// its input repeated, 0.83 -> 0.42 ms.
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ops/conv.h"
#include "ops/fused.h"
#include "providers/cpu/conv_epilogue.h"
#include "providers/cpu/direct_conv.h"
#include "providers/cpu/dnnl_common.h"
#include "providers/cpu/families.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/shape_cache.h"
#include "support/lane_mask.h"
#include "support/transpose32.h"

// GCC 12 warns that the _mm512_undefined_ps() its own intrinsics pass as
// the unused merge source (of _mm512_min_ps / _mm512_max_ps in the clamp)
// "may be used uninitialized"; it is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace kiln::cpu {
namespace {

// The 2x2 stride-2 upsampling to one channel (PP-OCR det's last layer, a
// DBNet head): per input pixel, four dot products of its C channels, each
// one output value. On channels-last input a pixel-major product fills 4
// of a vector's 16 lanes, so an input row is first turned into channel
// planes (Transpose32) and the products run pixel-vectorized: 16 pixels
// per vector, the weight broadcast, and NC vectors of pixels by the 4 taps
// in registers. Each value is the same fixed-order sum as PackedGemm's
// (bias, then channels in order), so results do not change. The taps
// (a, b) of 16 pixels then interleave into output rows 2i + a.
template <int NC>
__attribute__((target("avx512f"))) void UpsampleTo1Tiles(const float* planes, int64_t ld, int64_t c, const float* w4, float bias,
                                                         float lo, float hi, float* y0, float* y1, int64_t pixels) {
  __m512 acc[NC][4];
#pragma GCC unroll 4
  for (int k = 0; k < NC; ++k)
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) acc[k][t] = _mm512_set1_ps(bias);
  for (int64_t ci = 0; ci < c; ++ci) {
    const float* xp = planes + ci * ld;
    __m512 xv[NC];
#pragma GCC unroll 4
    for (int k = 0; k < NC; ++k) xv[k] = _mm512_loadu_ps(xp + 16 * k);
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) {
      const __m512 wv = _mm512_set1_ps(w4[ci * 4 + t]);
#pragma GCC unroll 4
      for (int k = 0; k < NC; ++k) acc[k][t] = _mm512_fmadd_ps(xv[k], wv, acc[k][t]);
    }
  }
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  // Output column 2j + b takes tap b of pixel j: lanes of taps (a, 0) and (a, 1) alternate.
  const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
#pragma GCC unroll 4
  for (int k = 0; k < NC; ++k) {
    const int64_t left = pixels - 16 * k;  // real pixels in this vector (NC covers them all)
#pragma GCC unroll 2
    for (int a = 0; a < 2; ++a) {
      const __m512 t0 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[k][2 * a]));  // NaN stays NaN
      const __m512 t1 = _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[k][2 * a + 1]));
      float* out = (a == 0 ? y0 : y1) + 32 * k;
      _mm512_mask_storeu_ps(out, FirstLanes(2 * left), _mm512_permutex2var_ps(t0, first, t1));
      _mm512_mask_storeu_ps(out + 16, FirstLanes(2 * left - 16), _mm512_permutex2var_ps(t0, second, t1));
    }
  }
}

using UpsampleTo1Fn = void (*)(const float*, int64_t, int64_t, const float*, float, float, float, float*, float*, int64_t);
constexpr UpsampleTo1Fn kUpsampleTo1[5] = {nullptr, &UpsampleTo1Tiles<1>, &UpsampleTo1Tiles<2>, &UpsampleTo1Tiles<3>, &UpsampleTo1Tiles<4>};
constexpr int64_t kUpsampleTo1Pixels = 64;  // pixels per call: 4 vectors by 4 taps, 16 accumulators

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct DeconvPrimitive {
  dnnl::deconvolution_forward::primitive_desc pd;
  dnnl::deconvolution_forward prim;
  PackedWeights weights;  // reordered into pd.weights_desc()
  dnnl::memory bias;
  Shape out_shape;
  bool empty = false;  // a zero-sized dim: no primitive, the output is the bias
  // Tiled upsampling (see the top): a matmul instead of the deconvolution.
  bool tiled = false;
  dnnl::matmul::primitive_desc mm_pd;
  dnnl::matmul mm;
  int64_t rows = 0, cols = 0;  // of the product: N*H*W, kH*kW*M
  // Or, with AVX-512, per tile row a: W[:, :, a, :] as [C][kW*M] (columns
  // (b, oc)) in PackedGemm's weight panels, and the bias per column; one
  // entry for all tile rows (columns (a, b, oc)) where kH*kW*M <= 16.
  std::vector<AlignedFloatsPtr> row_w, row_b;
  // Or, for 2x2 tiles of one channel with AVX-512, the pixel-vectorized
  // products (UpsampleTo1Tiles): W as [C][4] (taps a*2 + b), the bias.
  AlignedFloatsPtr to1_w;
  float to1_bias = 0;
};

class ConvTransposeKernel {
 public:
  ConvTransposeKernel(const ir::Node& node, ops::ConvTransposeAttrs attrs, ops::ActivationAttrs act, Tensor w, Tensor b)
      : node_(node), attrs_(std::move(attrs)), act_(act), w_(w.Contiguous()), b_(b) {}

  // Unimplemented when oneDNN cannot express this shape's geometry.
  Result<std::shared_ptr<const DeconvPrimitive>> Get(const Shape& x) {
    return cache_.Get(x, [this](const Shape& s) { return Build(s); });
  }

  Status Run(runtime::KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32 || x.rank() != 4) return ctx.Error("cpu ConvTranspose expects float32 NCHW input, got " + x.Describe());
    if (!IsDenseInOrder(x, kChannelsLast))
      return ctx.Error(std::string("cpu ConvTranspose was handed input X in a layout it did not declare: ") + x.Describe());
    KILN_ASSIGN_OR_RETURN(auto p, Get(x.shape()));
    KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, p->out_shape, kChannelsLast));
    if (y.numel() == 0) return Status::Ok();
    if (p->empty) {  // no input cell contributes: every output cell is act(its channel's bias)
      float* yp = y.data<float>();
      const Tensor b = b_.defined() ? b_.Contiguous() : Tensor();
      const int64_t m = p->out_shape[1];
      for (int64_t i = 0; i < y.numel(); ++i)  // channels-last: C innermost
        yp[i] = static_cast<float>(ops::ApplyActivation(act_, b.defined() ? b.data<float>()[i % m] : 0.0));
      return Status::Ok();
    }
    if (p->to1_w) {
      RunUpsampleTo1(*p, x, y);
      return Status::Ok();
    }
    if (p->tiled && !p->row_w.empty()) {
      RunTiledRows(*p, x, y);
      return Status::Ok();
    }
    if (p->tiled) return RunTiled(*p, x, y);
    return Guard(node_, [&] {
      dnnl::memory src({Dims(x.shape()), dt::f32, tag::nhwc}, Engine(), const_cast<void*>(x.raw()));
      dnnl::memory dst({Dims(p->out_shape), dt::f32, tag::nhwc}, Engine(), y.raw());
      Execute(p->prim, p->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p->weights.memory}, {DNNL_ARG_BIAS, p->bias}, {DNNL_ARG_DST, dst}});
    });
  }

 private:
  // x and y channels-last: the product into y (kH = 1) or into a buffer of
  // this thread's, whose tile rows are then copied into place.
  Status RunTiled(const DeconvPrimitive& p, const Tensor& x, Tensor& y) {
    const int64_t kh = attrs_.sp.kernel_shape[0], kw = attrs_.sp.kernel_shape[1], m = p.out_shape[1];
    const int64_t w_in = x.shape()[3], ow = p.out_shape[3];
    thread_local BigVector<uint8_t> tile_buf;
    float* prod = kh == 1 ? y.data<float>()
                          : static_cast<float*>(ThreadBuffer(tile_buf, static_cast<size_t>(p.rows * p.cols) * sizeof(float)));
    KILN_RETURN_IF_ERROR(Guard(node_, [&] {
      dnnl::memory src({{p.rows, x.shape()[1]}, dt::f32, tag::ab}, Engine(), const_cast<void*>(x.raw()));
      dnnl::memory dst({{p.rows, p.cols}, dt::f32, tag::ab}, Engine(), prod);
      Execute(p.mm, p.mm_pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p.weights.memory}, {DNNL_ARG_BIAS, p.bias}, {DNNL_ARG_DST, dst}});
    }));
    if (kh == 1) return Status::Ok();
    // Product row r = (n*H + i)*W + j, tile row a: y's row n*OH + i*kH + a,
    // from column j*kW, kW*M floats.
    float* out = y.data<float>();
    const int64_t run = kw * m;
    ParallelFor(p.rows, p.rows * p.cols, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t ni = r / w_in, j = r % w_in;
        for (int64_t a = 0; a < kh; ++a)
          std::memcpy(out + ((ni * kh + a) * ow + j * kw) * m, prod + r * p.cols + a * run, static_cast<size_t>(run) * sizeof(float));
      }
    });
    return Status::Ok();
  }

  // The tiled case on the register tiles (see the top), input row by
  // input row: each tile row a's product written into y's row i*kH + a;
  // or, where a pixel's whole tile fits one vector (kH*kW*M <= 16, PP-OCR
  // det's 24 -> 1), one product for all tile rows into a row buffer, whose
  // values are then moved into place: half the multiplications for 2x2
  // tiles, each vector lane otherwise idle.
  void RunTiledRows(const DeconvPrimitive& p, const Tensor& x, Tensor& y) const {
    const int64_t c = x.shape()[1], h = x.shape()[2], w_in = x.shape()[3];
    const int64_t kh = attrs_.sp.kernel_shape[0], m = p.out_shape[1], ow = p.out_shape[3];
    const int64_t run = attrs_.sp.kernel_shape[1] * m, padded = (run + 15) / 16 * 16;
    const Clamp clamp = ClampOf(act_);
    const double flops = 2.0 * static_cast<double>(p.rows) * static_cast<double>(c) * static_cast<double>(p.cols);
    const float* xd = x.data<float>();
    float* yd = y.data<float>();
    ParallelFor(x.shape()[0] * h, flops < kSerialFlops ? 0 : kParallelMin, [&](int64_t r0, int64_t r1) {
      thread_local std::vector<float> row_buf;
      for (int64_t r = r0; r < r1; ++r) {  // input row (n, i); output rows (n*H + i)*kH + a
        const float* xr = xd + r * w_in * c;
        if (p.row_w.size() == 1 && kh > 1) {  // one vector per pixel: [w_in][16], lanes (a, b, oc)
          row_buf.resize(static_cast<size_t>(w_in * 16));
          PackedGemm(xr, c, w_in, c, p.row_w[0].get(), 1, p.row_b[0].get(), row_buf.data(), 16, {.lo = clamp.lo, .hi = clamp.hi});
          for (int64_t a = 0; a < kh; ++a) {
            float* yr = yd + (r * kh + a) * ow * m;
            for (int64_t j = 0; j < w_in; ++j)
              for (int64_t q = 0; q < run; ++q) yr[j * run + q] = row_buf[static_cast<size_t>(j * 16 + a * run + q)];
          }
        } else {
          for (int64_t a = 0; a < kh; ++a) {
            float* yr = yd + (r * kh + a) * ow * m;
            for (int64_t b = 0; b * kGemmTileChannels < padded; ++b)
              PackedGemm(xr, c, w_in, c, p.row_w[a].get() + b * c * kGemmTileChannels, GemmPanelWidth(padded, b) / 16,
                         p.row_b[a].get() + b * kGemmTileChannels, yr + b * kGemmTileChannels, run,
                         {.channels = std::min(kGemmTileChannels, run - b * kGemmTileChannels), .lo = clamp.lo, .hi = clamp.hi});
          }
        }
        if (!Clamps(act_)) ResidualActivationInPlace(yd + r * kh * ow * m, nullptr, kh * ow * m, act_);
      }
    });
  }

  // 2x2 tiles of one channel (UpsampleTo1Tiles), input row by input row:
  // the row's channel planes into a buffer of this thread's, then groups of
  // up to 64 pixels into output rows 2i and 2i + 1.
  void RunUpsampleTo1(const DeconvPrimitive& p, const Tensor& x, Tensor& y) const {
    const int64_t c = x.shape()[1], h = x.shape()[2], w_in = x.shape()[3], ow = p.out_shape[3];
    const int64_t ld = (w_in + kUpsampleTo1Pixels - 1) / kUpsampleTo1Pixels * kUpsampleTo1Pixels;
    const Clamp clamp = ClampOf(act_);
    const double flops = 2.0 * static_cast<double>(p.rows) * static_cast<double>(c) * 4.0;
    const float* xd = x.data<float>();
    float* yd = y.data<float>();
    ParallelFor(x.shape()[0] * h, flops < kSerialFlops ? 0 : kParallelMin, [&](int64_t r0, int64_t r1) {
      // Columns past w_in are read (whole vectors) but never stored; they
      // hold the zeros the buffer was sized with, or an earlier row's values
      // (another shape's), never uninitialized memory.
      thread_local std::vector<float> planes;
      if (planes.size() < static_cast<size_t>(c * ld)) planes.assign(static_cast<size_t>(c * ld), 0.f);
      for (int64_t r = r0; r < r1; ++r) {  // input row (n, i); output rows 2r and 2r + 1
        Transpose32(reinterpret_cast<uint32_t*>(planes.data()), reinterpret_cast<const uint32_t*>(xd + r * w_in * c), c, w_in, c, ld);
        float* y0 = yd + 2 * r * ow;
        for (int64_t j0 = 0; j0 < w_in; j0 += kUpsampleTo1Pixels) {
          const int64_t n = std::min(kUpsampleTo1Pixels, w_in - j0);
          kUpsampleTo1[(n + 15) / 16](planes.data() + j0, ld, c, p.to1_w.get(), p.to1_bias, clamp.lo, clamp.hi, y0 + 2 * j0, y0 + ow + 2 * j0, n);
        }
        if (!Clamps(act_)) ResidualActivationInPlace(y0, nullptr, 2 * ow, act_);
      }
    });
  }

  // The tiled case's weights: on the register tiles where the CPU has
  // AVX-512, else as one oneDNN matmul (see the top).
  void BuildTiled(DeconvPrimitive& p, const Shape& x) {
    const Shape& ws = w_.shape();  // [C, M, kH, kW]
    const int64_t c = ws[0], m = ws[1], kh = ws[2], kw = ws[3];
    p.tiled = true;
    p.rows = x[0] * x[2] * x[3];
    p.cols = kh * kw * m;
    const char* direct = std::getenv("KILN_CPU_DIRECT");  // =0: oneDNN only, as for Conv
    if (DirectConv::Available() && !(direct && std::string(direct) == "0")) {
      if (m == 1 && kh == 2 && kw == 2) {
        p.to1_w.reset(AlignedFloats(c * 4));
        const float* w = w_.data<float>();  // [C][1][2][2]: taps a*2 + b in order
        std::copy(w, w + c * 4, p.to1_w.get());
        if (b_.defined()) p.to1_bias = b_.Contiguous().data<float>()[0];
        return;
      }
      // Tile rows' products of their own, or one of all of them (columns
      // (a, b, oc)) where a pixel's whole tile fits one vector.
      const int64_t run = kw * m, one = kh * run <= 16 ? kh : 1;
      const int64_t cols = one * run, padded = (cols + 15) / 16 * 16;
      const float* w = w_.data<float>();
      const Tensor bc = b_.defined() ? b_.Contiguous() : Tensor();
      for (int64_t a0 = 0; a0 < kh; a0 += one) {
        AlignedFloatsPtr wa(AlignedFloats(c * padded)), ba(AlignedFloats(padded));
        for (int64_t col = 0; col < cols; ++col) {  // col = (a - a0) * kW * M + b * M + oc
          const int64_t a = a0 + col / run, b = col % run / m, oc = col % m, panel = col / kGemmTileChannels;
          float* pw = wa.get() + panel * c * kGemmTileChannels + col - panel * kGemmTileChannels;
          for (int64_t ci = 0; ci < c; ++ci) pw[ci * GemmPanelWidth(padded, panel)] = w[((ci * m + oc) * kh + a) * kw + b];
          if (bc.defined()) ba[col] = bc.data<float>()[oc];
        }
        p.row_w.push_back(std::move(wa));
        p.row_b.push_back(std::move(ba));
      }
      return;
    }
    // B[ci, (a*kW + b)*M + oc] = W[ci, oc, a, b]; the bias repeats per tile cell.
    std::vector<float> b_mat(static_cast<size_t>(c * p.cols));
    const float* w = w_.data<float>();
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t oc = 0; oc < m; ++oc)
        for (int64_t a = 0; a < kh; ++a)
          for (int64_t b = 0; b < kw; ++b)
            b_mat[static_cast<size_t>(ci * p.cols + (a * kw + b) * m + oc)] = w[((ci * m + oc) * kh + a) * kw + b];
    const double flops = 2.0 * static_cast<double>(p.rows) * static_cast<double>(c) * static_cast<double>(p.cols);
    SerialScope serial(flops < kSerialFlops);
    dnnl::memory::desc src_md({p.rows, c}, dt::f32, tag::ab);
    dnnl::memory::desc w_any({c, p.cols}, dt::f32, tag::any);
    dnnl::memory::desc dst_md({p.rows, p.cols}, dt::f32, tag::ab);
    dnnl::memory::desc b_md({1, p.cols}, dt::f32, tag::ab);
    dnnl::primitive_attr attr = Attr();
    const bool has_bias = b_.defined();
    auto desc = has_bias ? dnnl::matmul::desc(src_md, w_any, b_md, dst_md) : dnnl::matmul::desc(src_md, w_any, dst_md);
    p.mm_pd = dnnl::matmul::primitive_desc(desc, attr, Engine());
    p.mm = dnnl::matmul(p.mm_pd);
    p.weights = PackWeights({{c, p.cols}, dt::f32, tag::ab}, p.mm_pd.weights_desc(), b_mat.data());
    if (has_bias) {
      const Tensor bc = b_.Contiguous();
      p.bias = dnnl::memory(b_md, Engine());
      float* bp = static_cast<float*>(p.bias.get_data_handle());
      for (int64_t k = 0; k < p.cols; ++k) bp[k] = bc.data<float>()[k % m];
    }
  }

  Result<std::shared_ptr<const DeconvPrimitive>> Build(const Shape& x) {
    const Shape& ws = w_.shape();
    const int64_t g = attrs_.group;
    if (x[1] != ws[0] || x[1] % g != 0)
      return node_.Invalid("input has " + std::to_string(x[1]) + " channels, W " + ShapeToString(ws) + " with group " +
                           std::to_string(g) + " does not fit");
    const int64_t m = ws[1] * g;
    auto p = std::make_shared<DeconvPrimitive>();
    p->out_shape = {x[0], m, 0, 0};
    dnnl::memory::dims strides, dil, pad_l, pad_r;
    for (size_t i = 0; i < 2; ++i) {
      KILN_ASSIGN_OR_RETURN(ops::AxisGeometry geo, ops::TransposeAxis(node_, attrs_, i, x[2 + i]));
      const int64_t in = x[2 + i], s = attrs_.sp.strides[i], d = attrs_.sp.dilations[i];
      const int64_t eff_k = (attrs_.sp.kernel_shape[i] - 1) * d + 1;
      const int64_t pr = (in - 1) * s + eff_k - geo.pad_begin - geo.out;
      if (geo.out < 0) return node_.Invalid("negative output size on spatial axis " + std::to_string(i));
      if (geo.pad_begin < 0 || pr <= -s)
        return Unimplemented(node_.Describe() + ": output cells outside the full transposed convolution (begin pad " +
                             std::to_string(geo.pad_begin) + ", end pad " + std::to_string(pr) + ") are not expressible in oneDNN");
      p->out_shape[2 + i] = geo.out;
      strides.push_back(s);
      dil.push_back(d - 1);
      pad_l.push_back(geo.pad_begin);
      pad_r.push_back(pr);
    }
    KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "input", x));
    KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "output", p->out_shape));
    KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "weights", ws));
    if (p->out_shape[2] == 0 || p->out_shape[3] == 0 || x[0] == 0 || x[1] == 0 || x[2] == 0 || x[3] == 0 || m == 0) {
      p->empty = true;
      return std::shared_ptr<const DeconvPrimitive>(p);
    }
    // oneDNN weights: {G, OC/G, IC/G, KH, KW}; ONNX's W is (g, ic, oc, kh, kw) in memory.
    dnnl::memory::dims wdims = g == 1 ? dnnl::memory::dims{ws[1], ws[0], ws[2], ws[3]}
                                      : dnnl::memory::dims{g, ws[1], ws[0] / g, ws[2], ws[3]};
    const tag wtag = g == 1 ? tag::iohw : tag::giohw;
    bool tiled = g == 1;
    for (size_t i = 0; i < 2; ++i)
      tiled = tiled && attrs_.sp.kernel_shape[i] == strides[i] && attrs_.sp.dilations[i] == 1 && pad_l[i] == 0 &&
              p->out_shape[2 + i] == x[2 + i] * strides[i];
    if (tiled) {
      KILN_RETURN_IF_ERROR(Guard(node_, [&] { BuildTiled(*p, x); }));
      return std::shared_ptr<const DeconvPrimitive>(p);
    }
    Status s = Guard(node_, [&] {
      dnnl::memory::desc src_md(Dims(x), dt::f32, tag::nhwc);
      dnnl::memory::desc dst_md(Dims(p->out_shape), dt::f32, tag::nhwc);
      dnnl::memory::desc w_any(wdims, dt::f32, tag::any);
      dnnl::memory::desc b_md({m}, dt::f32, tag::x);
      dnnl::primitive_attr attr = Attr();
      const bool has_bias = b_.defined();
      auto desc = has_bias ? dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                                              src_md, w_any, b_md, dst_md, strides, dil, pad_l, pad_r)
                           : dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                                              src_md, w_any, dst_md, strides, dil, pad_l, pad_r);
      p->pd = dnnl::deconvolution_forward::primitive_desc(desc, attr, Engine());
      p->prim = dnnl::deconvolution_forward(p->pd);
      p->weights = PackWeights({wdims, dt::f32, wtag}, p->pd.weights_desc(), w_.raw());
      if (has_bias) p->bias = BiasMemory(b_);
    });
    KILN_RETURN_IF_ERROR(s);
    return std::shared_ptr<const DeconvPrimitive>(p);
  }

  // User scratchpad, the activation as post-ops (MakeConvTranspose checked
  // that oneDNN can express it). The tiled copy moves finished values.
  dnnl::primitive_attr Attr() const {
    dnnl::post_ops po;
    AppendActivation(act_, po);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
  }

  const ir::Node& node_;
  ops::ConvTransposeAttrs attrs_;
  ops::ActivationAttrs act_;
  Tensor w_, b_;
  ShapeCache<DeconvPrimitive> cache_;
};

Result<runtime::Kernel> MakeConvTranspose(const runtime::KernelInit& init, bool fused) {
  const ir::Node& n = init.node;
  const ir::TypeInfo* t = init.input_type(0);
  const Tensor* w = init.constant(1);
  if (!t || t->kind != ir::TypeInfo::Kind::kTensor || t->dtype != DType::kFloat32 || !t->shape || t->shape->size() != 4)
    return runtime::Kernel();
  if (!w || w->dtype() != DType::kFloat32 || w->rank() != 4) return runtime::Kernel();
  // A fused node carries ConvTranspose-11's attributes (ops/fused.h).
  KILN_ASSIGN_OR_RETURN(ops::ConvTransposeAttrs attrs, ops::ParseConvTranspose(n, fused ? 11 : init.opset));
  ops::ActivationAttrs act;
  if (fused) {
    KILN_ASSIGN_OR_RETURN(act, ops::ParseActivation(n));
    dnnl::post_ops probe;
    if (!AppendActivation(act, probe)) return runtime::Kernel();
  }
  if (attrs.group <= 0) return runtime::Kernel();
  const int64_t m = w->shape()[1] * attrs.group;
  Tensor b;
  if (n.HasInput(2)) {
    if (!init.constant(2) || init.constant(2)->dtype() != DType::kFloat32) return runtime::Kernel();
    b = *init.constant(2);
    if (b.numel() != m) return n.Invalid("bias has " + std::to_string(b.numel()) + " values, expected " + std::to_string(m));
  }
  if (attrs.sp.kernel_shape.empty()) attrs.sp.kernel_shape = {w->shape()[2], w->shape()[3]};
  KILN_RETURN_IF_ERROR(ops::ResolveSpatial(n, attrs.sp, 2));
  if (attrs.sp.kernel_shape[0] != w->shape()[2] || attrs.sp.kernel_shape[1] != w->shape()[3]) return runtime::Kernel();
  if (!attrs.output_padding.empty() && attrs.output_padding.size() != 2) return runtime::Kernel();
  if (!attrs.output_shape.empty() && attrs.output_shape.size() != 2 && attrs.output_shape.size() != 4) return runtime::Kernel();
  if (w->shape()[0] % attrs.group != 0) return runtime::Kernel();
  auto kernel = std::make_shared<ConvTransposeKernel>(n, attrs, act, *w, b);
  const ir::Dims& xd = *t->shape;
  bool static_shape = true;
  Shape xs;
  for (const ir::Dim& d : xd) {
    static_shape = static_shape && d.known();
    xs.push_back(d.value);
  }
  if (static_shape) {
    auto p = kernel->Get(xs);
    if (!p.ok() && p.status().code() == StatusCode::kUnimplemented) return runtime::Kernel();
    KILN_RETURN_IF_ERROR(p.status());
  } else if (!attrs.output_shape.empty()) {
    return runtime::Kernel();  // the pads depend on the input size: whether oneDNN can express them is known only per shape
  } else {
    // Without output_shape the pads do not depend on the input size: probe
    // them on a nominal size, so a geometry oneDNN cannot express is
    // declined now rather than failing at run time.
    for (size_t i = 0; i < 2; ++i) {
      KILN_ASSIGN_OR_RETURN(ops::AxisGeometry geo, ops::TransposeAxis(n, attrs, i, 16));
      const int64_t s = attrs.sp.strides[i];
      const int64_t eff_k = (attrs.sp.kernel_shape[i] - 1) * attrs.sp.dilations[i] + 1;
      if (geo.pad_begin < 0 || 15 * s + eff_k - geo.pad_begin - geo.out <= -s) return runtime::Kernel();
    }
  }
  runtime::KernelLayouts layouts;
  layouts.inputs.resize(1);
  layouts.inputs[0].orders = {kChannelsLast};
  layouts.output_order = [](const std::vector<DimOrder>&) { return kChannelsLast; };
  return runtime::Kernel([kernel](runtime::KernelContext& ctx) { return kernel->Run(ctx); }, std::move(layouts));
}

}  // namespace

void RegisterConvTransposeKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "ConvTranspose", [](const runtime::KernelInit& i) { return MakeConvTranspose(i, false); });
  r.RegisterFactory(ops::kKilnDomain, "FusedConvTranspose", [](const runtime::KernelInit& i) { return MakeConvTranspose(i, true); });
}

}  // namespace kiln::cpu
