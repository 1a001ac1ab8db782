// Resize (opsets 10-19) and Upsample on the cpu provider: nearest (all four
// nearest modes) and linear, over the two spatial axes of a 4-D float32
// tensor, in channels-last or row-major layout; the output keeps the input's
// layout (an input of one pixel per channel, dense in both, counts as
// channels-last), except a graph output, which is written row-major (the
// order it is returned in) from either. This kernel is where kiln's
// motivating bug lived (channels-last data read with channels-first strides
// behind an absorbed Transpose), so it indexes only through the strides it
// was handed, and its tests run every mode on both layouts, including
// behind a zero-copy Transpose, as a graph output and read by a later node.
//
// The output geometry and the source coordinate of each output index come
// from src/ops/resize.h, the same code the reference uses; the neighbour
// rule (fraction in (0, 1], edge clamping) is the reference's, written for
// two taps per axis.
//
// Declined (reference): cubic, antialias, tf_crop_and_resize, other dtypes
// or ranks, scales/sizes that are not constant, resizing N or C.
#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/resize.h"
#include "providers/cpu/families.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/vec_math.h"
#include "support/transpose32.h"

namespace kiln::cpu {
namespace {

using ops::ResizeAttrs;

struct Taps {
  int64_t i0 = 0, i1 = 0;  // source indices (clamped to the edge)
  float w0 = 1, w1 = 0;
};

// One output row of a channels-last resize with N and C mapped to
// themselves: output pixel ow (q + ow * pixel, C contiguous channels) from
// input rows r0 (weight hw0) and r1 (hw1), `in_pixel` floats between input
// pixels. Compiled per ISA (the channel loops vectorize; baseline SSE2 took
// 2 ms for deeplabv3's 21x512x512 output).
KILN_CPU_CLONES void LinearRow(float* q, int64_t pixel, const float* r0, const float* r1, float hw0, float hw1, int64_t in_pixel,
                               const Taps* tw, int64_t ow_count, int64_t C) {
  for (int64_t ow = 0; ow < ow_count; ++ow) {
    const Taps& w = tw[ow];
    const float* p00 = r0 + w.i0 * in_pixel;
    const float* p01 = r0 + w.i1 * in_pixel;
    const float* p10 = r1 + w.i0 * in_pixel;
    const float* p11 = r1 + w.i1 * in_pixel;
    const float a00 = hw0 * w.w0, a01 = hw0 * w.w1, a10 = hw1 * w.w0, a11 = hw1 * w.w1;
    float* o = q + ow * pixel;
    for (int64_t c = 0; c < C; ++c) o[c] = a00 * p00[c] + a01 * p01[c] + a10 * p10[c] + a11 * p11[c];
  }
}

KILN_CPU_CLONES void NearestRow(float* q, int64_t pixel, const float* r0, int64_t in_pixel, const Taps* tw, int64_t ow_count, int64_t C) {
  for (int64_t ow = 0; ow < ow_count; ++ow) {
    const float* p = r0 + tw[ow].i0 * in_pixel;
    float* o = q + ow * pixel;
    for (int64_t c = 0; c < C; ++c) o[c] = p[c];
  }
}

// The spec's neighbours of output index x along one axis.
Taps AxisTaps(const ResizeAttrs& a, const ops::ResizeAxis& ax, int64_t x) {
  const double xo = ops::ResizeSourceCoordinate(a, ax, x);
  int64_t base = static_cast<int64_t>(std::floor(xo));
  double ratio = xo - static_cast<double>(base);
  if (ratio == 0) {  // an integer coordinate: ratio 1 over the pixel to its left
    base -= 1;
    ratio = 1;
  }
  auto clamp = [&](int64_t i) { return std::min<int64_t>(std::max<int64_t>(i, 0), ax.in - 1); };
  Taps t;
  if (a.mode == ResizeAttrs::Mode::kNearest) {
    int64_t i = base;
    if (ratio == 1) {
      i = base + 1;
    } else {
      switch (a.nearest) {
        case ResizeAttrs::Nearest::kRoundPreferFloor: i = ratio <= 0.5 ? base : base + 1; break;
        case ResizeAttrs::Nearest::kRoundPreferCeil: i = ratio < 0.5 ? base : base + 1; break;
        case ResizeAttrs::Nearest::kFloor: i = base; break;
        case ResizeAttrs::Nearest::kCeil: i = base + 1; break;
      }
    }
    t.i0 = t.i1 = clamp(i);
    return t;
  }
  t.i0 = clamp(base);
  t.i1 = clamp(base + 1);
  t.w0 = static_cast<float>(1 - ratio);
  t.w1 = static_cast<float>(ratio);
  return t;
}

// row_major_out: the output is a graph output, declared row-major for any
// input layout (the factory); channels-last input is then transposed on the
// way out, row by row.
Status RunResize(runtime::KernelContext& ctx, const ResizeAttrs& a, bool row_major_out) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat32 || x.rank() != 4) return ctx.Error("cpu Resize takes 4-D float32, got " + x.Describe());
  // An input of one pixel per channel is dense in both orders; it is read
  // as channels-last, and the output written so, as the factory declares
  // (otherwise a pooled branch upsampled into a Concat, deeplabv3's ASPP,
  // came out row-major between channels-last neighbours, and the Concat
  // fell back to a strided copy: 1.7 ms at 1 thread instead of 0.4).
  const bool point = x.shape()[2] * x.shape()[3] == 1;
  const bool channels_last = IsDenseInOrder(x, kChannelsLast) && (point || !IsDenseInOrder(x, kRowMajor));
  if (!channels_last && !IsDenseInOrder(x, kRowMajor))
    return ctx.Error("cpu Resize was handed a layout it did not declare: " + x.Describe());
  ops::ResizeInputs ri;
  auto opt = [&](int idx) -> const Tensor* {
    if (idx < 0 || !ctx.input(static_cast<size_t>(idx)).defined()) return nullptr;
    return &ctx.input(static_cast<size_t>(idx));
  };
  ri.roi = opt(a.roi_input);
  ri.scales = opt(a.scales_input);
  ri.sizes = opt(a.sizes_input);
  KILN_ASSIGN_OR_RETURN(ops::ResizeGeometry g, ops::ComputeResizeGeometry(ctx.node(), a, x.shape(), ri));
  for (size_t d = 0; d < 2; ++d)
    if (g.axes[d].out != g.axes[d].in)
      return ctx.Unsupported("cpu Resize resizes only the spatial axes; this one changes axis " + std::to_string(d));
  // N and C keep their size, but a coordinate transformation may still move
  // them: opset 11's tf_half_pixel_for_nn maps x to x + 0.5 on every axis, so
  // ceil and round_prefer_ceil read index x + 1 (found by kiln fuzz). Those
  // axes are read through index maps; the identity keeps the fast loops.
  std::vector<int64_t> nmap(static_cast<size_t>(g.axes[0].out)), cmap(static_cast<size_t>(g.axes[1].out));
  bool identity_nc = true;
  for (size_t d = 0; d < 2; ++d) {
    std::vector<int64_t>& map = d == 0 ? nmap : cmap;
    for (int64_t o = 0; o < g.axes[d].out; ++o) {
      const Taps t = AxisTaps(a, g.axes[d], o);
      if (t.i0 != t.i1 && t.w1 != 0.f && t.w0 != 0.f)
        return ctx.Unsupported("cpu Resize: linear interpolation across axis " + std::to_string(d));
      map[static_cast<size_t>(o)] = t.w0 != 0.f ? t.i0 : t.i1;
      identity_nc = identity_nc && map[static_cast<size_t>(o)] == o;
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, g.out_shape, channels_last && !row_major_out ? kChannelsLast : kRowMajor));
  if (y.numel() == 0) return Status::Ok();
  if (g.axes[2].in == 0 || g.axes[3].in == 0) return ctx.Error("cannot resize an empty spatial axis");
  std::vector<Taps> th(static_cast<size_t>(g.axes[2].out)), tw(static_cast<size_t>(g.axes[3].out));
  for (int64_t o = 0; o < g.axes[2].out; ++o) th[static_cast<size_t>(o)] = AxisTaps(a, g.axes[2], o);
  for (int64_t o = 0; o < g.axes[3].out; ++o) tw[static_cast<size_t>(o)] = AxisTaps(a, g.axes[3], o);

  const auto& xs = x.strides();
  const auto& ys = y.strides();
  const float* src = x.data<float>();
  float* dst = y.data<float>();
  const int64_t N = g.out_shape[0], C = g.out_shape[1], OH = g.out_shape[2], OW = g.out_shape[3];
  if (channels_last) {
    // One output row of pixels into q (channels contiguous, `pixel` floats
    // between pixels): per output pixel, a run of C channels from up to 4
    // input pixels.
    auto pixel_row = [&](int64_t n, int64_t oh, float* q0, int64_t pixel) {
      const Taps& h = th[static_cast<size_t>(oh)];
      const int64_t sn = nmap[static_cast<size_t>(n)];
      if (identity_nc) {
        const float* r0 = src + sn * xs[0] + h.i0 * xs[2];
        if (a.mode == ResizeAttrs::Mode::kNearest) {
          NearestRow(q0, pixel, r0, xs[3], tw.data(), OW, C);
        } else {
          LinearRow(q0, pixel, r0, src + sn * xs[0] + h.i1 * xs[2], h.w0, h.w1, xs[3], tw.data(), OW, C);
        }
        return;
      }
      for (int64_t ow = 0; ow < OW; ++ow) {
        const Taps& w = tw[static_cast<size_t>(ow)];
        const float* p00 = src + sn * xs[0] + h.i0 * xs[2] + w.i0 * xs[3];
        const float* p01 = src + sn * xs[0] + h.i0 * xs[2] + w.i1 * xs[3];
        const float* p10 = src + sn * xs[0] + h.i1 * xs[2] + w.i0 * xs[3];
        const float* p11 = src + sn * xs[0] + h.i1 * xs[2] + w.i1 * xs[3];
        float* q = q0 + ow * pixel;
        const float a00 = h.w0 * w.w0, a01 = h.w0 * w.w1, a10 = h.w1 * w.w0, a11 = h.w1 * w.w1;
        for (int64_t c = 0; c < C; ++c) {
          const int64_t sc = cmap[static_cast<size_t>(c)] * xs[1];
          q[c] = a.mode == ResizeAttrs::Mode::kNearest ? p00[sc] : a00 * p00[sc] + a01 * p01[sc] + a10 * p10[sc] + a11 * p11[sc];
        }
      }
    };
    if (!row_major_out) {
      ParallelFor(N * OH, y.numel(), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) pixel_row(row / OH, row % OH, dst + (row / OH) * ys[0] + (row % OH) * ys[2], ys[3]);
      });
    } else {
      // Channels-last in, row-major out (a graph output, see the factory):
      // each row is resized into a small buffer, then transposed into its
      // C output rows, so the output is written once, in its final order.
      ParallelFor(N * OH, y.numel(), [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> buf;
        buf.resize(static_cast<size_t>(OW * C));
        for (int64_t row = begin; row < end; ++row) {
          const int64_t n = row / OH, oh = row % OH;
          pixel_row(n, oh, buf.data(), C);
          float* out = dst + n * ys[0] + oh * ys[2];
          Transpose32(reinterpret_cast<uint32_t*>(out), reinterpret_cast<const uint32_t*>(buf.data()), C, OW, C, ys[1], true);
        }
      });
    }
  } else {
    ParallelFor(N * C, y.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t plane_index = begin; plane_index < end; ++plane_index) {
        const int64_t n = plane_index / C, c = plane_index % C;
        const float* plane = src + nmap[static_cast<size_t>(n)] * xs[0] + cmap[static_cast<size_t>(c)] * xs[1];
        float* out = dst + n * ys[0] + c * ys[1];
        for (int64_t oh = 0; oh < OH; ++oh) {
          const Taps& h = th[static_cast<size_t>(oh)];
          const float* r0 = plane + h.i0 * xs[2];
          const float* r1 = plane + h.i1 * xs[2];
          float* q = out + oh * ys[2];
          if (a.mode == ResizeAttrs::Mode::kNearest) {
            for (int64_t ow = 0; ow < OW; ++ow) q[ow] = r0[tw[static_cast<size_t>(ow)].i0];
          } else {
            for (int64_t ow = 0; ow < OW; ++ow) {
              const Taps& w = tw[static_cast<size_t>(ow)];
              q[ow] = h.w0 * (w.w0 * r0[w.i0] + w.w1 * r0[w.i1]) + h.w1 * (w.w0 * r1[w.i0] + w.w1 * r1[w.i1]);
            }
          }
        }
      }
    });
  }
  return Status::Ok();
}

// Why the cpu kernel cannot run a node exactly (empty: it can).
std::string Declines(const runtime::KernelInit& init, const ResizeAttrs& a) {
  const ir::TypeInfo* t = init.input_type(0);
  if (!t || t->kind != ir::TypeInfo::Kind::kTensor || t->dtype != DType::kFloat32 || !t->shape || t->shape->size() != 4)
    return "input is not 4-D float32";
  if (a.mode == ResizeAttrs::Mode::kCubic) return "cubic mode";
  if (a.antialias) return "antialias";
  if (a.coord == ResizeAttrs::Coord::kTfCropAndResize) return "tf_crop_and_resize";
  if (!a.axes.empty()) return "axes";
  for (int idx : {a.scales_input, a.sizes_input}) {
    if (idx < 0 || !init.node.HasInput(static_cast<size_t>(idx))) continue;
    const Tensor* c = init.constant(static_cast<size_t>(idx));
    if (!c) return "scales or sizes are not constant";
    // N and C must keep their size: scales 1, or sizes equal to the static dims.
    for (int d = 0; d < 2 && d < c->numel(); ++d) {
      const double v = c->GetAsDouble(d);
      const ir::Dim& dim = (*t->shape)[static_cast<size_t>(d)];
      if (idx == a.scales_input ? v != 1.0 : !(dim.known() && dim.value == static_cast<int64_t>(v))) return "resizes N or C";
    }
  }
  return "";
}

runtime::KernelFactory ResizeFactory(bool upsample) {
  return [upsample](const runtime::KernelInit& init) -> Result<runtime::Kernel> {
    KILN_ASSIGN_OR_RETURN(ResizeAttrs a, upsample ? ops::ParseUpsample(init.node, init.opset) : ops::ParseResize(init.node, init.opset));
    if (a.scales_attr && a.scales_attr->size() >= 2 && ((*a.scales_attr)[0] != 1.f || (*a.scales_attr)[1] != 1.f)) return runtime::Kernel();
    if (!Declines(init, a).empty()) return runtime::Kernel();
    runtime::KernelLayouts l;
    l.inputs.resize(1);
    l.inputs[0].orders = {kChannelsLast, kRowMajor};
    // A graph output is written row-major, the order it is returned in,
    // instead of converted after (deeplabv3's 21x512x512 output: ~3 ms).
    const bool row_major_out = init.is_graph_output(0);
    // A one-pixel input comes out channels-last whatever order it arrived in
    // (RunResize), known here when H and W are static.
    const ir::Dims& dims = *init.input_type(0)->shape;
    const bool point = dims[2].known() && dims[3].known() && dims[2].value * dims[3].value == 1;
    l.output_order = [row_major_out, point](const std::vector<DimOrder>& in) {
      return row_major_out ? kRowMajor : point ? kChannelsLast : in[0];
    };
    return runtime::Kernel([a, row_major_out](runtime::KernelContext& ctx) { return RunResize(ctx, a, row_major_out); }, std::move(l));
  };
}

}  // namespace

void RegisterResizeKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "Resize", ResizeFactory(false));
  r.RegisterFactory("", "Upsample", ResizeFactory(true));
}

}  // namespace kiln::cpu
