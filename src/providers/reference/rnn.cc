// Reference kernels of RNN, GRU and LSTM: the spec's equations step by
// step, in double. Gate row order in W/R/B: RNN (i), GRU (z, r, h),
// LSTM (i, o, f, c); peepholes P are (i, o, f).
#include <algorithm>

#include "ops/rnn.h"
#include "providers/reference/families.h"

namespace kiln::reference {
namespace {

using ops::RnnAttrs;
using ops::RnnKind;

std::vector<double> ToVec(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.GetAsDouble(i);
  return v;
}

Status CheckShape(runtime::KernelContext& ctx, size_t i, const Shape& want, const char* what) {
  const Tensor& t = ctx.input(i);
  if (!t.defined()) return ctx.Error(std::string(what) + " (input " + std::to_string(i) + ") must be a tensor");
  if (t.shape() != want)
    return ctx.Error(std::string(what) + " has shape " + ShapeToString(t.shape()) + ", expected " + ShapeToString(want));
  if (t.dtype() != ctx.input(0).dtype() && i != 4)
    return ctx.Error(std::string(what) + " has dtype " + DTypeName(t.dtype()) + ", X has " + DTypeName(ctx.input(0).dtype()));
  return Status::Ok();
}

Status Recurrent(runtime::KernelContext& ctx, RnnKind kind) {
  KILN_ASSIGN_OR_RETURN(RnnAttrs a, ops::ParseRnn(ctx.node(), ctx.opset(), kind));
  const Tensor& X = ctx.input(0);
  const Tensor& W = ctx.input(1);
  const Tensor& R = ctx.input(2);
  if (!X.defined() || X.rank() != 3) return ctx.Error("X must be a rank-3 tensor, got " + ctx.input_datum(0).Describe());
  if (!R.defined() || R.rank() != 3) return ctx.Error("R must be a rank-3 tensor, got " + ctx.input_datum(2).Describe());
  const int64_t S = X.dim(a.layout == 0 ? 0 : 1), Bn = X.dim(a.layout == 0 ? 1 : 0), I = X.dim(2);
  const int64_t D = a.num_directions, G = a.gates;
  const int64_t H = a.hidden_size > 0 ? a.hidden_size : R.dim(2);
  KILN_RETURN_IF_ERROR(CheckShape(ctx, 1, {D, G * H, I}, "W"));
  KILN_RETURN_IF_ERROR(CheckShape(ctx, 2, {D, G * H, H}, "R"));
  if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(CheckShape(ctx, 3, {D, 2 * G * H}, "B"));
  if (ctx.has_input(4)) KILN_RETURN_IF_ERROR(CheckShape(ctx, 4, {Bn}, "sequence_lens"));
  const Shape state_shape = a.layout == 0 ? Shape{D, Bn, H} : Shape{Bn, D, H};
  if (ctx.has_input(5)) KILN_RETURN_IF_ERROR(CheckShape(ctx, 5, state_shape, "initial_h"));
  if (kind == RnnKind::kLstm && ctx.has_input(6)) KILN_RETURN_IF_ERROR(CheckShape(ctx, 6, state_shape, "initial_c"));
  if (kind == RnnKind::kLstm && ctx.has_input(7)) KILN_RETURN_IF_ERROR(CheckShape(ctx, 7, {D, 3 * H}, "P"));

  const std::vector<double> x = ToVec(X), w = ToVec(W), r = ToVec(R);
  const std::vector<double> bias = ctx.has_input(3) ? ToVec(ctx.input(3)) : std::vector<double>(static_cast<size_t>(D * 2 * G * H), 0.0);
  const std::vector<double> h0 = ctx.has_input(5) ? ToVec(ctx.input(5)) : std::vector<double>(static_cast<size_t>(D * Bn * H), 0.0);
  const bool lstm = kind == RnnKind::kLstm;
  const std::vector<double> c0 = lstm && ctx.has_input(6) ? ToVec(ctx.input(6)) : std::vector<double>(static_cast<size_t>(D * Bn * H), 0.0);
  const std::vector<double> peep = lstm && ctx.has_input(7) ? ToVec(ctx.input(7)) : std::vector<double>(static_cast<size_t>(D * 3 * H), 0.0);
  std::vector<int64_t> lens(static_cast<size_t>(Bn), S);
  if (ctx.has_input(4)) {
    for (int64_t b = 0; b < Bn; ++b) {
      const int64_t l = static_cast<int64_t>(ctx.input(4).GetAsDouble(b));
      if (l < 0 || l > S) return ctx.Error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(l) + " is outside [0, " + std::to_string(S) + "]");
      lens[static_cast<size_t>(b)] = l;
    }
  }
  // Index helpers for the two layouts.
  auto xi = [&](int64_t t, int64_t b, int64_t i) { return static_cast<size_t>((a.layout == 0 ? (t * Bn + b) : (b * S + t)) * I + i); };
  auto si = [&](int64_t d, int64_t b, int64_t h) { return static_cast<size_t>((a.layout == 0 ? (d * Bn + b) : (b * D + d)) * H + h); };
  auto yi = [&](int64_t t, int64_t d, int64_t b, int64_t h) {
    return static_cast<size_t>((a.layout == 0 ? ((t * D + d) * Bn + b) : ((b * S + t) * D + d)) * H + h);
  };
  std::vector<double> y(static_cast<size_t>(S * D * Bn * H), 0.0), yh(static_cast<size_t>(D * Bn * H)), yc(yh.size());
  auto clip = [&](double v) { return a.clip ? std::max(-*a.clip, std::min(*a.clip, v)) : v; };

  for (int64_t d = 0; d < D; ++d) {
    const bool rev = (D == 2 && d == 1) || (D == 1 && a.reverse);
    const auto* acts = &a.activations[static_cast<size_t>(d) * a.functions_per_direction];
    const double* wd = &w[static_cast<size_t>(d * G * H * I)];
    const double* rd = &r[static_cast<size_t>(d * G * H * H)];
    const double* wb = &bias[static_cast<size_t>(d * 2 * G * H)];
    const double* rb = wb + G * H;
    const double* pd = &peep[static_cast<size_t>(d * 3 * H)];
    for (int64_t b = 0; b < Bn; ++b) {
      std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H));
      for (int64_t k = 0; k < H; ++k) { h[static_cast<size_t>(k)] = h0[si(d, b, k)]; c[static_cast<size_t>(k)] = c0[si(d, b, k)]; }
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = rev ? len - 1 - s : s;
        // xw[g*H+k] = x_t . W[g*H+k] + Wb ; hr[g*H+k] = h . R[g*H+k] + Rb
        std::vector<double> xw(static_cast<size_t>(G * H)), hr(static_cast<size_t>(G * H));
        for (int64_t row = 0; row < G * H; ++row) {
          double sx = wb[row], sh = rb[row];
          for (int64_t i = 0; i < I; ++i) sx += x[xi(t, b, i)] * wd[row * I + i];
          for (int64_t k = 0; k < H; ++k) sh += h[static_cast<size_t>(k)] * rd[row * H + k];
          xw[static_cast<size_t>(row)] = sx;
          hr[static_cast<size_t>(row)] = sh;
        }
        std::vector<double> hn(static_cast<size_t>(H)), cn(static_cast<size_t>(H)), rgate(static_cast<size_t>(H));
        if (kind == RnnKind::kGru)
          for (int64_t k = 0; k < H; ++k)
            rgate[static_cast<size_t>(k)] = acts[0].Apply(clip(xw[static_cast<size_t>(H + k)] + hr[static_cast<size_t>(H + k)]));
        for (int64_t k = 0; k < H; ++k) {
          const auto K = static_cast<size_t>(k), HH = static_cast<size_t>(H);
          if (kind == RnnKind::kRnn) {
            hn[K] = acts[0].Apply(clip(xw[K] + hr[K]));
          } else if (kind == RnnKind::kGru) {
            const double z = acts[0].Apply(clip(xw[K] + hr[K]));
            const double rg = rgate[K];
            double pre;
            if (a.linear_before_reset) {
              pre = xw[2 * HH + K] + rg * hr[2 * HH + K];
            } else {
              // (r . h) R_h^T + Rb_h: the reset gate applies before the product.
              double sh = rb[2 * H + k];
              for (int64_t j = 0; j < H; ++j)
                sh += rgate[static_cast<size_t>(j)] * h[static_cast<size_t>(j)] * rd[(2 * H + k) * H + j];
              pre = xw[2 * HH + K] + sh;
            }
            const double hh = acts[1].Apply(clip(pre));
            hn[K] = (1.0 - z) * hh + z * h[K];
          } else {
            const double ig = acts[0].Apply(clip(xw[K] + hr[K] + pd[k] * c[K]));
            double fg = acts[0].Apply(clip(xw[2 * HH + K] + hr[2 * HH + K] + pd[2 * H + k] * c[K]));
            if (a.input_forget) fg = 1.0 - ig;  // coupled input and forget gates
            const double cc = acts[1].Apply(clip(xw[3 * HH + K] + hr[3 * HH + K]));
            cn[K] = fg * c[K] + ig * cc;
            const double og = acts[0].Apply(clip(xw[HH + K] + hr[HH + K] + pd[H + k] * cn[K]));
            hn[K] = og * acts[2].Apply(cn[K]);
          }
        }
        h = hn;
        if (lstm) c = cn;
        for (int64_t k = 0; k < H; ++k) y[yi(t, d, b, k)] = h[static_cast<size_t>(k)];
      }
      for (int64_t k = 0; k < H; ++k) {
        yh[si(d, b, k)] = h[static_cast<size_t>(k)];
        yc[si(d, b, k)] = c[static_cast<size_t>(k)];
      }
    }
  }
  const DType dt = X.dtype();
  const Shape y_shape = a.layout == 0 ? Shape{S, D, Bn, H} : Shape{Bn, S, D, H};
  auto emit = [&](size_t i, const Shape& s, const std::vector<double>& v) -> Status {
    if (!ctx.has_output(i)) return Status::Ok();
    KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(i, dt, s));
    for (size_t k = 0; k < v.size(); ++k) out.SetFromDouble(static_cast<int64_t>(k), v[k]);
    return Status::Ok();
  };
  KILN_RETURN_IF_ERROR(emit(0, y_shape, y));
  KILN_RETURN_IF_ERROR(emit(1, state_shape, yh));
  if (lstm) KILN_RETURN_IF_ERROR(emit(2, state_shape, yc));
  return Status::Ok();
}

}  // namespace

void RegisterRnnKernels(runtime::KernelRegistry& r) {
  r.Register("", "RNN", [](runtime::KernelContext& c) { return Recurrent(c, RnnKind::kRnn); });
  r.Register("", "GRU", [](runtime::KernelContext& c) { return Recurrent(c, RnnKind::kGru); });
  r.Register("", "LSTM", [](runtime::KernelContext& c) { return Recurrent(c, RnnKind::kLstm); });
}

}  // namespace kiln::reference
