// Reference kernels of the signal ops (opset 17+): the DFT as its defining
// sum (no FFT), in double, with the angle reduced mod n for precision.
#include <cmath>

#include "ops/signal.h"
#include "providers/reference/families.h"
#include "providers/reference/util.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {
namespace {

constexpr double kPi = 3.14159265358979323846;

Result<int64_t> IntScalar(runtime::KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (!t.defined() || (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64) || t.numel() != 1)
    return ctx.Error(std::string(what) + " (input " + std::to_string(i) + ") must be an integer scalar");
  return static_cast<int64_t>(t.GetAsDouble(0));
}

Result<double> FloatScalar(runtime::KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (!t.defined() || t.numel() != 1 || t.dtype() == DType::kString)
    return ctx.Error(std::string(what) + " (input " + std::to_string(i) + ") must be a numeric scalar");
  return t.GetAsDouble(0);
}

// e^{sign * 2 pi i * (j k mod n) / n}
void Twiddle(int64_t j, int64_t k, int64_t n, double sign, double* re, double* im) {
  const double a = sign * 2.0 * kPi * static_cast<double>((j * k) % n) / static_cast<double>(n);
  *re = std::cos(a);
  *im = std::sin(a);
}

Status Dft(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::DftAttrs a, ops::ParseDft(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return ctx.Error("input 0 must be a tensor");
  const int64_t r = x.rank();
  if (r < 2 || (x.shape().back() != 1 && x.shape().back() != 2))
    return ctx.Error("input must have rank >= 2 and a last dim of 1 or 2, got shape " + ShapeToString(x.shape()));
  int64_t axis = a.axis;
  if (a.axis_from_input && ctx.has_input(2)) { KILN_ASSIGN_OR_RETURN(axis, IntScalar(ctx, 2, "axis")); }
  if (axis < -r || axis >= r || axis == -1 || axis == r - 1)
    return ctx.Error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  const int64_t n = x.dim(static_cast<int>(axis));
  int64_t len = n;
  if (ctx.has_input(1)) {
    KILN_ASSIGN_OR_RETURN(len, IntScalar(ctx, 1, "dft_length"));
    if (len <= 0) return ctx.Error("dft_length must be positive, got " + std::to_string(len));
  }
  const bool complex_in = x.shape().back() == 2;
  if (a.onesided && (a.inverse || complex_in))
    return ctx.Unsupported("onesided output is defined for the forward transform of a real signal only");
  const int64_t bins = a.onesided ? len / 2 + 1 : len;
  Shape os = x.shape();
  os.back() = 2;
  os[static_cast<size_t>(axis)] = bins;
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), os));
  const int64_t outer = DimProduct(x.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = DimProduct(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size() - 1);
  const int64_t c = x.shape().back();
  const int64_t used = std::min(n, len);  // samples past dft_length are dropped, missing ones are zeros
  const double sign = a.inverse ? 1.0 : -1.0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      for (int64_t k = 0; k < bins; ++k) {
        double sr = 0, si = 0;
        for (int64_t j = 0; j < used; ++j) {
          const int64_t src = ((o * n + j) * inner + in) * c;
          const double xr = x.GetAsDouble(src), xi = complex_in ? x.GetAsDouble(src + 1) : 0.0;
          double wr, wi;
          Twiddle(j, k, len, sign, &wr, &wi);
          sr += xr * wr - xi * wi;
          si += xr * wi + xi * wr;
        }
        if (a.inverse) { sr /= static_cast<double>(len); si /= static_cast<double>(len); }
        const int64_t dst = ((o * bins + k) * inner + in) * 2;
        out.SetFromDouble(dst, sr);
        out.SetFromDouble(dst + 1, si);
      }
    }
  }
  return Status::Ok();
}

Status Stft(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::StftAttrs a, ops::ParseStft(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (!x.defined() || x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2))
    return ctx.Error("signal must be [batch, length, 1 or 2], got " + ctx.input_datum(0).Describe());
  KILN_ASSIGN_OR_RETURN(int64_t step, IntScalar(ctx, 1, "frame_step"));
  if (step <= 0) return ctx.Error("frame_step must be positive, got " + std::to_string(step));
  const Tensor& w = ctx.input(2);
  int64_t flen = -1;
  if (ctx.has_input(3)) { KILN_ASSIGN_OR_RETURN(flen, IntScalar(ctx, 3, "frame_length")); }
  if (w.defined()) {
    if (w.rank() != 1) return ctx.Error("window must be 1-D, got shape " + ShapeToString(w.shape()));
    if (flen >= 0 && flen != w.dim(0))
      return ctx.Error("frame_length " + std::to_string(flen) + " differs from the window length " + std::to_string(w.dim(0)));
    flen = w.dim(0);
  }
  if (flen <= 0) return ctx.Error("needs a positive frame_length or a window");
  const int64_t L = x.dim(1);
  if (flen > L) return ctx.Error("frame_length " + std::to_string(flen) + " exceeds the signal length " + std::to_string(L));
  const bool complex_in = x.dim(2) == 2;
  if (a.onesided && complex_in) return ctx.Error("onesided output needs a real signal");
  const int64_t frames = (L - flen) / step + 1;
  const int64_t bins = a.onesided ? flen / 2 + 1 : flen;
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), {x.dim(0), frames, bins, 2}));
  const int64_t c = x.dim(2);
  for (int64_t b = 0; b < x.dim(0); ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t k = 0; k < bins; ++k) {
        double sr = 0, si = 0;
        for (int64_t j = 0; j < flen; ++j) {
          const int64_t src = (b * L + f * step + j) * c;
          const double wj = w.defined() ? w.GetAsDouble(j) : 1.0;
          const double xr = x.GetAsDouble(src) * wj, xi = complex_in ? x.GetAsDouble(src + 1) * wj : 0.0;
          double tr, ti;
          Twiddle(j, k, flen, -1.0, &tr, &ti);
          sr += xr * tr - xi * ti;
          si += xr * ti + xi * tr;
        }
        const int64_t dst = ((b * frames + f) * bins + k) * 2;
        out.SetFromDouble(dst, sr);
        out.SetFromDouble(dst + 1, si);
      }
    }
  }
  return Status::Ok();
}

// Generalized cosine window sum_m (-1)^m a_m cos(2 pi m n / N'), with
// N' = size (periodic) or size - 1 (symmetric).
Status CosineWindow(runtime::KernelContext& ctx, const std::vector<double>& coef) {
  KILN_ASSIGN_OR_RETURN(ops::WindowAttrs a, ops::ParseWindow(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(int64_t size, IntScalar(ctx, 0, "size"));
  if (size < 0) return ctx.Error("size must be >= 0, got " + std::to_string(size));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, a.output_dtype, {size}));
  const double np = static_cast<double>(a.periodic ? size : size - 1);
  for (int64_t n = 0; n < size; ++n) {
    double v = 0;
    for (size_t m = 0; m < coef.size(); ++m) {
      const double ang = np > 0 ? 2.0 * kPi * static_cast<double>(m) * static_cast<double>(n) / np : 0.0;
      v += (m % 2 ? -1.0 : 1.0) * coef[m] * std::cos(ang);
    }
    out.SetFromDouble(n, v);
  }
  return Status::Ok();
}

Status HannWindow(runtime::KernelContext& ctx) { return CosineWindow(ctx, {0.5, 0.5}); }
Status HammingWindow(runtime::KernelContext& ctx) { return CosineWindow(ctx, {25.0 / 46.0, 21.0 / 46.0}); }
Status BlackmanWindow(runtime::KernelContext& ctx) { return CosineWindow(ctx, {0.42, 0.5, 0.08}); }

// Triangular filters on a mel scale (opset 17 spec): num_mel_bins + 2 points
// evenly spaced in mel between the edges, mapped to DFT bin indices.
Status MelWeightMatrix(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::WindowAttrs a, ops::ParseWindow(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(int64_t mels, IntScalar(ctx, 0, "num_mel_bins"));
  KILN_ASSIGN_OR_RETURN(int64_t dft, IntScalar(ctx, 1, "dft_length"));
  KILN_ASSIGN_OR_RETURN(int64_t rate, IntScalar(ctx, 2, "sample_rate"));
  KILN_ASSIGN_OR_RETURN(double lo, FloatScalar(ctx, 3, "lower_edge_hertz"));
  KILN_ASSIGN_OR_RETURN(double hi, FloatScalar(ctx, 4, "upper_edge_hertz"));
  if (mels <= 0 || dft <= 0 || rate <= 0) return ctx.Error("num_mel_bins, dft_length and sample_rate must be positive");
  if (lo < 0 || hi < lo) return ctx.Error("need 0 <= lower_edge_hertz <= upper_edge_hertz");
  const int64_t spec_bins = dft / 2 + 1;
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, a.output_dtype, {spec_bins, mels}));
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double lo_mel = to_mel(lo), hi_mel = to_mel(hi);
  const double step = (hi_mel - lo_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> pts(static_cast<size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595.0) - 1.0);
    pts[static_cast<size_t>(i)] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
    if (pts[static_cast<size_t>(i)] < 0 || pts[static_cast<size_t>(i)] >= spec_bins)
      return ctx.Error("upper_edge_hertz " + std::to_string(hi) + " maps past the last DFT bin (sample_rate " +
                       std::to_string(rate) + ")");
  }
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = pts[static_cast<size_t>(i)], center = pts[static_cast<size_t>(i + 1)], right = pts[static_cast<size_t>(i + 2)];
    if (center == left) {
      out.SetFromDouble(center * mels + i, 1.0);
    } else {
      for (int64_t j = left; j <= center; ++j)
        out.SetFromDouble(j * mels + i, static_cast<double>(j - left) / static_cast<double>(center - left));
    }
    for (int64_t j = center; j < right; ++j)
      out.SetFromDouble(j * mels + i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  return Status::Ok();
}

}  // namespace

void RegisterSignalKernels(runtime::KernelRegistry& r) {
  r.Register("", "DFT", Dft);
  r.Register("", "STFT", Stft);
  r.Register("", "HannWindow", HannWindow);
  r.Register("", "HammingWindow", HammingWindow);
  r.Register("", "BlackmanWindow", BlackmanWindow);
  r.Register("", "MelWeightMatrix", MelWeightMatrix);
}

}  // namespace kiln::reference
