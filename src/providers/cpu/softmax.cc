// Softmax and LogSoftmax (float32, row-major) on the cpu provider. Rows of
// the softmax axis are contiguous when the axis is the last (the common
// case: class scores, attention); otherwise a row is strided by `inner` and
// the loop runs over `inner` columns at once so memory is still read in
// order. exp from vec_math.h; sums in float, relative error ~1e-6 against
// the reference's double sums.

#include <cmath>

#include "ops/reduction.h"
#include "providers/cpu/families.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/vec_math.h"

namespace kiln::cpu {
namespace {

// One contiguous row: y = softmax(x) or log-softmax(x). The max and the
// sum are folded into 16 lanes, then across them: as single running values
// they were dependency chains the compiler would not reorder, so the exp
// loop ran scalar (PP-OCRv4 rec's three attention Softmax nodes took 0.46 ms
// against ONNX Runtime's 0.16).
constexpr int kLanes = 16;

KILN_CPU_CLONES void SoftmaxRow(const float* __restrict x, float* __restrict y, int64_t n, bool log) {
  float lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = -INFINITY;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  float m = -INFINITY;
  for (int j = 0; j < kLanes; ++j) m = lane[j] > m ? lane[j] : m;
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  // e^(x - m) into y (log-softmax overwrites it below).
  for (i = 0; i < n; ++i) y[i] = ExpF(x[i] - m);
  for (int j = 0; j < kLanes; ++j) lane[j] = 0.f;
  for (i = 0; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += y[i + j];
  float sum = 0.f;
  for (int j = 0; j < kLanes; ++j) sum += lane[j];
  for (; i < n; ++i) sum += y[i];
  if (log) {
    const float lse = m + std::log(sum);
    for (i = 0; i < n; ++i) y[i] = x[i] - lse;
  } else {
    const float r = 1.f / sum;
    for (i = 0; i < n; ++i) y[i] *= r;
  }
}

// A block of `inner` interleaved rows of length n (row j: x[j], x[j+inner], ...).
KILN_CPU_CLONES void SoftmaxColumns(const float* x, float* y, int64_t n, int64_t inner, bool log, float* m, float* sum) {
  for (int64_t j = 0; j < inner; ++j) {
    m[j] = -INFINITY;
    sum[j] = 0;
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < inner; ++j) m[j] = x[i * inner + j] > m[j] ? x[i * inner + j] : m[j];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < inner; ++j) {
      const float e = ExpF(x[i * inner + j] - m[j]);
      sum[j] += e;
      if (!log) y[i * inner + j] = e;
    }
  for (int64_t j = 0; j < inner; ++j) sum[j] = log ? m[j] + std::log(sum[j]) : 1.f / sum[j];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < inner; ++j) y[i * inner + j] = log ? x[i * inner + j] - sum[j] : y[i * inner + j] * sum[j];
}

Status RunSoftmax(runtime::KernelContext& ctx, const ops::SoftmaxAttrs& a) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat32) return ctx.Error("cpu Softmax takes float32, got " + x.Describe());
  const int64_t rank = x.rank();
  int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) return ctx.Error("axis " + std::to_string(a.axis) + " out of range for rank " + std::to_string(rank));
  ops::AxisSplit sp;
  if (a.coerce_2d) {  // opset < 13: rows are everything from axis on
    for (int64_t d = 0; d < axis; ++d) sp.outer *= x.shape()[static_cast<size_t>(d)];
    sp.axis_dim = 1;
    for (int64_t d = axis; d < rank; ++d) sp.axis_dim *= x.shape()[static_cast<size_t>(d)];
    sp.inner = 1;
  } else {
    sp = ops::SplitAtAxis(x.shape(), axis);
  }
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, x.shape(), kRowMajor));
  if (x.numel() == 0) return Status::Ok();
  const bool log = a.kind == ops::SoftmaxKind::kLogSoftmax;
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const int64_t block = sp.axis_dim * sp.inner;
  ParallelFor(sp.outer, x.numel(), [&](int64_t begin, int64_t end) {
    if (sp.inner == 1) {
      for (int64_t o = begin; o < end; ++o) SoftmaxRow(px + o * block, py + o * block, sp.axis_dim, log);
      return;
    }
    std::vector<float> m(static_cast<size_t>(sp.inner)), s(static_cast<size_t>(sp.inner));
    for (int64_t o = begin; o < end; ++o)
      SoftmaxColumns(px + o * block, py + o * block, sp.axis_dim, sp.inner, log, m.data(), s.data());
  });
  return Status::Ok();
}

Result<runtime::Kernel> MakeSoftmax(const runtime::KernelInit& init) {
  const ir::TypeInfo* t = init.input_type(0);
  if (!t || t->kind != ir::TypeInfo::Kind::kTensor || t->dtype != DType::kFloat32) return runtime::Kernel();
  KILN_ASSIGN_OR_RETURN(ops::SoftmaxAttrs a, ops::ParseSoftmax(init.node, init.opset));
  if (a.kind == ops::SoftmaxKind::kHardmax) return runtime::Kernel();
  return runtime::Kernel([a](runtime::KernelContext& ctx) { return RunSoftmax(ctx, a); });
}

}  // namespace

void RegisterSoftmaxKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "Softmax", MakeSoftmax);
  r.RegisterFactory("", "LogSoftmax", MakeSoftmax);
}

}  // namespace kiln::cpu
