// Reference kernels of Gemm, MatMul, MatMulInteger, QLinearMatMul and Det:
// plain triple loops, double accumulation for floating types, 64-bit integer
// accumulation for integer types. Einsum: matmul_einsum.cc.
#include <cmath>
#include <limits>

#include "ops/matmul.h"
#include "providers/reference/families.h"
#include "providers/reference/matmul_einsum.h"
#include "providers/reference/reduction_util.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

Status Gemm(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::GemmAttrs a, ops::ParseGemm(ctx.node(), ctx.opset()));
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  const Tensor& C = ctx.input(2);  // undefined when omitted (opset 11+)
  KILN_ASSIGN_OR_RETURN(Tensor Y, ctx.AllocOutput(0));
  const int64_t M = Y.dim(0), N = Y.dim(1);
  const int64_t K = a.trans_a ? A.dim(0) : A.dim(1);
  // A'(m, k) and B'(k, n) as offsets into the row-major buffers.
  const int64_t a_m = a.trans_a ? 1 : K, a_k = a.trans_a ? M : 1;
  const int64_t b_k = a.trans_b ? 1 : N, b_n = a.trans_b ? K : 1;
  std::vector<int64_t> c_strides;
  if (C.defined()) c_strides = BroadcastStrides(C.shape(), {M, N});
  Status st = Status::Ok();
  KILN_RETURN_IF_ERROR(VisitNumeric(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = AccOf<T>;
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.Error("bool is not supported");
    } else {
      const T* ad = A.data<T>();
      const T* bd = B.data<T>();
      const T* cd = C.defined() ? C.data<T>() : nullptr;
      T* yd = Y.data<T>();
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          Acc acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += ToAcc(ad[m * a_m + k * a_k]) * ToAcc(bd[k * b_k + n * b_n]);
          const Acc c = cd ? ToAcc(cd[m * c_strides[0] + n * c_strides[1]]) : Acc(0);
          if constexpr (kIsFloatLike<T>) {
            yd[m * N + n] = FromDouble<T>(static_cast<double>(a.alpha) * acc + static_cast<double>(a.beta) * c);
          } else if (a.alpha == 1.0f && a.beta == 1.0f) {
            yd[m * N + n] = FromAcc<T>(acc + c);  // exact integer path
          } else {
            yd[m * N + n] = SafeFromDouble<T>(static_cast<double>(a.alpha) * static_cast<double>(acc) +
                                              static_cast<double>(a.beta) * static_cast<double>(c));
          }
        }
    }
  }));
  return st;
}

// Calls f(a_offset, b_offset, y_offset) for each matrix pair of the batch.
template <typename F>
void ForEachBatch(const ops::MatMulPlan& p, F&& f) {
  ForEachIndex(p.batch.empty() ? Shape{} : p.batch, [&](int64_t lin, const std::vector<int64_t>& idx) {
    f(OffsetOf(idx, p.a_batch_strides) * p.m * p.k, OffsetOf(idx, p.b_batch_strides) * p.k * p.n, lin * p.m * p.n);
  });
}

Status MatMul(runtime::KernelContext& ctx) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(ops::MatMulPlan p, ops::PlanMatMul(ctx.node(), A.shape(), B.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor Y, ctx.AllocOutput(0));
  Status st = Status::Ok();
  KILN_RETURN_IF_ERROR(VisitNumeric(A.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = AccOf<T>;
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.Error("bool is not supported");
    } else {
      const T* ad = A.data<T>();
      const T* bd = B.data<T>();
      T* yd = Y.data<T>();
      ForEachBatch(p, [&](int64_t ao, int64_t bo, int64_t yo) {
        for (int64_t m = 0; m < p.m; ++m)
          for (int64_t n = 0; n < p.n; ++n) {
            Acc acc = 0;
            for (int64_t k = 0; k < p.k; ++k) acc += ToAcc(ad[ao + m * p.k + k]) * ToAcc(bd[bo + k * p.n + n]);
            yd[yo + m * p.n + n] = FromAcc<T>(acc);
          }
      });
    }
  }));
  return st;
}

// A quantization parameter (zero point or scale): one value for the whole
// tensor, or one per row of A / column of B (1-D of `count` values).
struct QuantParam {
  std::vector<double> v;
  double at(int64_t i) const { return v.size() == 1 ? v[0] : v[static_cast<size_t>(i)]; }
};
Result<QuantParam> ReadQuantParam(runtime::KernelContext& ctx, size_t i, int64_t count, const char* what,
                                  double def) {
  QuantParam q;
  if (!ctx.has_input(i)) { q.v = {def}; return q; }
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1 && t.numel() != count)
    return ctx.Error(std::string(what) + " must have 1 or " + std::to_string(count) + " elements, got " +
                     std::to_string(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) q.v.push_back(t.GetAsDouble(k));
  return q;
}

// (A - a_zero_point) x (B - b_zero_point) accumulated exactly in int64, for
// each output element: f(y_offset, m, n, acc).
template <typename F>
Status QuantizedProduct(runtime::KernelContext& ctx, const Tensor& A, const Tensor& B, const QuantParam& azp,
                        const QuantParam& bzp, const ops::MatMulPlan& p, F&& f) {
  ForEachBatch(p, [&](int64_t ao, int64_t bo, int64_t yo) {
    for (int64_t m = 0; m < p.m; ++m)
      for (int64_t n = 0; n < p.n; ++n) {
        int64_t acc = 0;
        const int64_t za = static_cast<int64_t>(azp.at(m)), zb = static_cast<int64_t>(bzp.at(n));
        for (int64_t k = 0; k < p.k; ++k)
          acc += (static_cast<int64_t>(A.GetAsDouble(ao + m * p.k + k)) - za) *
                 (static_cast<int64_t>(B.GetAsDouble(bo + k * p.n + n)) - zb);
        f(yo + m * p.n + n, m, n, acc);
      }
  });
  return Status::Ok();
}

Status MatMulInteger(runtime::KernelContext& ctx) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(ops::MatMulPlan p, ops::PlanMatMul(ctx.node(), A.shape(), B.shape()));
  KILN_ASSIGN_OR_RETURN(QuantParam azp, ReadQuantParam(ctx, 2, p.m, "a_zero_point", 0));
  KILN_ASSIGN_OR_RETURN(QuantParam bzp, ReadQuantParam(ctx, 3, p.n, "b_zero_point", 0));
  KILN_ASSIGN_OR_RETURN(Tensor Y, ctx.AllocOutput(0));
  int32_t* yd = Y.data<int32_t>();
  return QuantizedProduct(ctx, A, B, azp, bzp, p, [&](int64_t o, int64_t, int64_t, int64_t acc) {
    yd[o] = static_cast<int32_t>(static_cast<uint32_t>(acc));  // int32 accumulation wraps
  });
}

// y = saturate(round_half_even(acc * a_scale * b_scale / y_scale) + y_zero_point).
Status QLinearMatMul(runtime::KernelContext& ctx) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(3);
  KILN_ASSIGN_OR_RETURN(ops::MatMulPlan p, ops::PlanMatMul(ctx.node(), A.shape(), B.shape()));
  KILN_ASSIGN_OR_RETURN(QuantParam as, ReadQuantParam(ctx, 1, p.m, "a_scale", 1));
  KILN_ASSIGN_OR_RETURN(QuantParam azp, ReadQuantParam(ctx, 2, p.m, "a_zero_point", 0));
  KILN_ASSIGN_OR_RETURN(QuantParam bs, ReadQuantParam(ctx, 4, p.n, "b_scale", 1));
  KILN_ASSIGN_OR_RETURN(QuantParam bzp, ReadQuantParam(ctx, 5, p.n, "b_zero_point", 0));
  KILN_ASSIGN_OR_RETURN(QuantParam ys, ReadQuantParam(ctx, 6, p.m, "y_scale", 1));
  KILN_ASSIGN_OR_RETURN(QuantParam yzp, ReadQuantParam(ctx, 7, p.m, "y_zero_point", 0));
  KILN_ASSIGN_OR_RETURN(Tensor Y, ctx.AllocOutput(0));
  const bool is_signed = Y.dtype() == DType::kInt8;
  const double lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  return QuantizedProduct(ctx, A, B, azp, bzp, p, [&](int64_t o, int64_t m, int64_t n, int64_t acc) {
    // Scales are float32 tensors: their product in float, as the spec's reference computes it.
    const float scale = static_cast<float>(as.at(m)) * static_cast<float>(bs.at(n)) / static_cast<float>(ys.at(m));
    double q = std::nearbyint(static_cast<double>(acc) * static_cast<double>(scale)) + yzp.at(m);
    q = std::min(hi, std::max(lo, q));
    Y.SetFromDouble(o, q);
  });
}

// Determinant by Gaussian elimination with partial pivoting, in double.
Status Det(runtime::KernelContext& ctx) {
  const Tensor& X = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor Y, ctx.AllocOutput(0));
  const int64_t n = X.dim(X.rank() - 1);
  const int64_t count = Y.numel();
  std::vector<double> a(static_cast<size_t>(n * n));
  for (int64_t b = 0; b < count; ++b) {
    for (int64_t e = 0; e < n * n; ++e) a[static_cast<size_t>(e)] = X.GetAsDouble(b * n * n + e);
    auto at = [&](int64_t r, int64_t c) -> double& { return a[static_cast<size_t>(r * n + c)]; };
    double det = 1;
    for (int64_t c = 0; c < n && det != 0; ++c) {
      int64_t piv = c;
      for (int64_t r = c + 1; r < n; ++r)
        if (std::fabs(at(r, c)) > std::fabs(at(piv, c))) piv = r;
      if (at(piv, c) == 0) { det = 0; break; }
      if (piv != c) {
        for (int64_t k = 0; k < n; ++k) std::swap(at(piv, k), at(c, k));
        det = -det;
      }
      det *= at(c, c);
      for (int64_t r = c + 1; r < n; ++r) {
        const double f = at(r, c) / at(c, c);
        for (int64_t k = c; k < n; ++k) at(r, k) -= f * at(c, k);
      }
    }
    Y.SetFromDouble(b, det);
  }
  return Status::Ok();
}

}  // namespace

void RegisterMatMulKernels(runtime::KernelRegistry& r) {
  r.Register("", "Gemm", Gemm);
  r.Register("", "MatMul", MatMul);
  r.Register("", "MatMulInteger", MatMulInteger);
  r.Register("", "QLinearMatMul", QLinearMatMul);
  r.Register("", "Det", Det);
  RegisterEinsumKernel(r);
}

}  // namespace kiln::reference
