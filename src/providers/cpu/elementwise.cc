// float32 elementwise kernels of the cpu provider: the binary arithmetic ops
// with numpy broadcasting (Add, Sub, Mul, Div, Max, Min, PRelu) and the
// unary activations. Both read any dense layout (KernelLayouts any_dense):
// a unary op writes its output in the input's layout; a binary op in the
// layout of the operand that has the output's shape (row-major when neither
// does), through the elementwise loop (elementwise_loop.h), which walks the
// output in memory order in chunks spread over the threads. The loops are
// compiled for AVX-512, AVX2 and baseline x86-64 and the best one is picked
// at load time (target_clones); the math is vec_math.h's, not libm's, so it
// vectorizes.
//
// Declined (left to the reference): other dtypes, opset < 7 broadcasting
// (its `axis` rules), Max/Min with other than two inputs, Clip bounds that
// are not constant.

#include <cmath>
#include <functional>

#include "ops/elementwise.h"
#include "providers/cpu/elementwise_loop.h"
#include "providers/cpu/elementwise_runs.h"
#include "providers/cpu/families.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/vec_math.h"

namespace kiln::cpu {
namespace {

enum class BinOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kPRelu, kPow };

template <BinOp op>
inline float Apply(float a, float b) {
  if constexpr (op == BinOp::kAdd) return a + b;
  if constexpr (op == BinOp::kSub) return a - b;
  if constexpr (op == BinOp::kMul) return a * b;
  if constexpr (op == BinOp::kDiv) return a / b;
  // Max/Min propagate NaN as the spec's numpy semantics do.
  if constexpr (op == BinOp::kMax) return a != a || b != b ? a + b : (a > b ? a : b);
  if constexpr (op == BinOp::kMin) return a != a || b != b ? a + b : (a < b ? a : b);
  if constexpr (op == BinOp::kPRelu) return a < 0 ? a * b : a;
  if constexpr (op == BinOp::kPow) return std::pow(a, b);
}

// The inner run: o[i] = a[i*sa] op b[i*sb], with the common stride pairs
// spelled out so each is a straight vector loop.
template <BinOp op>
inline void BinaryRunT(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = Apply<op>(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const float v = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = Apply<op>(a[i], v);
  } else if (sa == 0 && sb == 1) {
    const float v = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = Apply<op>(v, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = Apply<op>(a[i * sa], b[i * sb]);
  }
}

KILN_CPU_CLONES void AddRun(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb) { BinaryRunT<BinOp::kAdd>(o, a, b, n, sa, sb); }
KILN_CPU_CLONES void SubRun(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb) { BinaryRunT<BinOp::kSub>(o, a, b, n, sa, sb); }
KILN_CPU_CLONES void MulRun(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb) { BinaryRunT<BinOp::kMul>(o, a, b, n, sa, sb); }
KILN_CPU_CLONES void DivRun(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb) { BinaryRunT<BinOp::kDiv>(o, a, b, n, sa, sb); }
KILN_CPU_CLONES void MaxRun(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb) { BinaryRunT<BinOp::kMax>(o, a, b, n, sa, sb); }
KILN_CPU_CLONES void MinRun(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb) { BinaryRunT<BinOp::kMin>(o, a, b, n, sa, sb); }
KILN_CPU_CLONES void PReluRun(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb) { BinaryRunT<BinOp::kPRelu>(o, a, b, n, sa, sb); }

// Pow: a constant exponent 2 (LayerNorm's variance) is a multiply; others
// go through std::pow (as the reference's double pow rounded to float).
void PowRun(float* o, const float* a, const float* b, int64_t n, int64_t sa, int64_t sb) {
  if (sb == 0 && b[0] == 2.f) {
    if (sa == 1) {
      MulRun(o, a, a, n, 1, 1);
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = a[i * sa] * a[i * sa];
    }
    return;
  }
  BinaryRunT<BinOp::kPow>(o, a, b, n, sa, sb);
}

runtime::KernelLayouts AnyDense(size_t inputs, runtime::OutputOrderFn out) {
  runtime::KernelLayouts l;
  l.inputs.resize(inputs);
  for (auto& in : l.inputs) in.any_dense = true;
  l.output_order = std::move(out);
  return l;
}

runtime::KernelFactory BinaryFactory(BinaryRun run) {
  return [run](const runtime::KernelInit& init) -> Result<runtime::Kernel> {
    if (init.node.inputs.size() != 2 || !IsFloatWithRank(init.input_type(0)) || !IsFloatWithRank(init.input_type(1)))
      return runtime::Kernel();
    if (init.opset < 7) return runtime::Kernel();  // legacy broadcast / PRelu slope rules
    ElementwisePlan plan;
    plan.inputs = 2;
    plan.full = CoveringInput({&*init.input_type(0)->shape, &*init.input_type(1)->shape});
    plan.steps = {ElementwiseStepRun{run, nullptr, {}, {0, 1}}};
    return ElementwiseKernel(std::move(plan));
  };
}

// ---- unary ------------------------------------------------------------------

KILN_CPU_CLONES void ReluRun(float* o, const float* x, int64_t n, UnaryParams) {
  for (int64_t i = 0; i < n; ++i) o[i] = x[i] > 0 ? x[i] : 0.f;
}
KILN_CPU_CLONES void LeakyReluRun(float* o, const float* x, int64_t n, UnaryParams p) {
  for (int64_t i = 0; i < n; ++i) o[i] = x[i] < 0 ? p.alpha * x[i] : x[i];
}
KILN_CPU_CLONES void SigmoidRun(float* o, const float* x, int64_t n, UnaryParams) {
  for (int64_t i = 0; i < n; ++i) o[i] = SigmoidF(x[i]);
}
KILN_CPU_CLONES void TanhRun(float* o, const float* x, int64_t n, UnaryParams) {
  for (int64_t i = 0; i < n; ++i) o[i] = TanhF(x[i]);
}
KILN_CPU_CLONES void ExpRun(float* o, const float* x, int64_t n, UnaryParams) {
  for (int64_t i = 0; i < n; ++i) o[i] = ExpF(x[i]);
}
KILN_CPU_CLONES void HardSigmoidRun(float* o, const float* x, int64_t n, UnaryParams p) {
  for (int64_t i = 0; i < n; ++i) o[i] = Clamp01(p.alpha * x[i] + p.beta);
}
KILN_CPU_CLONES void HardSwishRun(float* o, const float* x, int64_t n, UnaryParams) {
  for (int64_t i = 0; i < n; ++i) o[i] = x[i] * Clamp01(x[i] * (1.f / 6.f) + 0.5f);
}
// Clip: bounds as alpha (min) and beta (max); NaN passes through as the spec's.
KILN_CPU_CLONES void ClipRun(float* o, const float* x, int64_t n, UnaryParams p) {
  for (int64_t i = 0; i < n; ++i) o[i] = x[i] < p.alpha ? p.alpha : (x[i] > p.beta ? p.beta : x[i]);
}
KILN_CPU_CLONES void NegRun(float* o, const float* x, int64_t n, UnaryParams) {
  for (int64_t i = 0; i < n; ++i) o[i] = -x[i];
}
KILN_CPU_CLONES void AbsRun(float* o, const float* x, int64_t n, UnaryParams) {
  for (int64_t i = 0; i < n; ++i) o[i] = std::fabs(x[i]);
}
KILN_CPU_CLONES void SqrtRun(float* o, const float* x, int64_t n, UnaryParams) {
  for (int64_t i = 0; i < n; ++i) o[i] = std::sqrt(x[i]);
}

Status RunUnary(runtime::KernelContext& ctx, UnaryRun run, UnaryParams p) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat32) return ctx.Error("cpu kernel takes float32, got " + x.Describe());
  DimOrder order;
  if (!FindOrder(x, &order)) return ctx.Error("cpu kernel was handed a non-dense input: " + x.Describe());
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, x.shape(), order));
  // Dense in the same order: the same flat position holds the same element.
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const int64_t n = x.numel();
  ParallelFor(n, n, [&](int64_t begin, int64_t end) { run(py + begin, px + begin, end - begin, p); });
  return Status::Ok();
}

runtime::KernelLayouts UnaryLayouts(size_t inputs) {
  runtime::KernelLayouts l = AnyDense(1, [](const std::vector<DimOrder>& in) { return in[0]; });
  l.inputs.resize(inputs);  // Clip's bounds: scalars, row-major
  return l;
}

runtime::KernelFactory UnaryFactory(UnaryRun run, std::function<Result<UnaryParams>(const runtime::KernelInit&)> params = nullptr) {
  return [run, params](const runtime::KernelInit& init) -> Result<runtime::Kernel> {
    if (!IsFloatWithRank(init.input_type(0))) return runtime::Kernel();
    UnaryParams p;
    if (params) {
      auto r = params(init);
      if (!r.ok()) {
        if (r.status().code() == StatusCode::kUnimplemented) return runtime::Kernel();  // declined
        return r.status();
      }
      p = *r;
    }
    return runtime::Kernel([run, p](runtime::KernelContext& ctx) { return RunUnary(ctx, run, p); }, UnaryLayouts(init.node.inputs.size()));
  };
}

Result<UnaryParams> ActivationParams(const runtime::KernelInit& init) {
  KILN_ASSIGN_OR_RETURN(ops::ActivationAttrs a, ops::ParseActivation(init.node, init.opset));
  return UnaryParams{a.alpha, a.beta};
}

// Clip bounds: attributes before opset 11, then optional constant inputs.
Result<UnaryParams> ClipParams(const runtime::KernelInit& init) {
  KILN_ASSIGN_OR_RETURN(ops::ClipAttrs a, ops::ParseClip(init.node, init.opset));
  UnaryParams p{-INFINITY, INFINITY};
  if (a.min) p.alpha = *a.min;
  if (a.max) p.beta = *a.max;
  for (size_t i = 1; i <= 2; ++i) {
    if (!init.node.HasInput(i)) continue;
    const Tensor* c = init.constant(i);
    if (!c || c->dtype() != DType::kFloat32 || c->numel() != 1) return Status(StatusCode::kUnimplemented, "Clip bound not constant");
    (i == 1 ? p.alpha : p.beta) = static_cast<float>(c->GetAsDouble(0));
  }
  return p;
}

struct NamedBinary {
  const char* op;
  BinaryRun run;
};
const NamedBinary kBinaryRuns[] = {{"Add", AddRun}, {"Sub", SubRun},     {"Mul", MulRun},     {"Div", DivRun},
                                       {"Max", MaxRun}, {"Min", MinRun},     {"PRelu", PReluRun}, {"Pow", PowRun}};
struct NamedUnary {
  const char* op;
  UnaryRun run;
};
const NamedUnary kUnaryRuns[] = {{"Relu", ReluRun},   {"LeakyRelu", LeakyReluRun}, {"Sigmoid", SigmoidRun},
                                     {"Tanh", TanhRun},   {"Exp", ExpRun},             {"HardSigmoid", HardSigmoidRun},
                                     {"HardSwish", HardSwishRun}, {"Clip", ClipRun},   {"Neg", NegRun},
                                     {"Abs", AbsRun},     {"Sqrt", SqrtRun}};

}  // namespace

bool CoversStatically(const ir::Dims& big, const ir::Dims& small) {
  if (small.size() > big.size()) return false;
  const size_t off = big.size() - small.size();
  for (size_t i = 0; i < small.size(); ++i) {
    const ir::Dim& s = small[i];
    const ir::Dim& b = big[off + i];
    if (s.known() && s.value == 1) continue;
    if (s.known() && b.known() && s.value != b.value) return false;
  }
  return true;
}

BinaryRun FindBinaryRun(const std::string& op) {
  for (const auto& b : kBinaryRuns)
    if (op == b.op) return b.run;
  return nullptr;
}

UnaryRun FindUnaryRun(const std::string& op) {
  for (const auto& u : kUnaryRuns)
    if (op == u.op) return u.run;
  return nullptr;
}

void RegisterElementwiseKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "Add", BinaryFactory(AddRun));
  r.RegisterFactory("", "Sub", BinaryFactory(SubRun));
  r.RegisterFactory("", "Mul", BinaryFactory(MulRun));
  r.RegisterFactory("", "Div", BinaryFactory(DivRun));
  r.RegisterFactory("", "Max", BinaryFactory(MaxRun));
  r.RegisterFactory("", "Min", BinaryFactory(MinRun));
  r.RegisterFactory("", "PRelu", BinaryFactory(PReluRun));
  r.RegisterFactory("", "Pow", BinaryFactory(PowRun));
  r.RegisterFactory("", "Relu", UnaryFactory(ReluRun));
  r.RegisterFactory("", "LeakyRelu", UnaryFactory(LeakyReluRun, ActivationParams));
  r.RegisterFactory("", "Sigmoid", UnaryFactory(SigmoidRun));
  r.RegisterFactory("", "Tanh", UnaryFactory(TanhRun));
  r.RegisterFactory("", "Exp", UnaryFactory(ExpRun));
  r.RegisterFactory("", "HardSigmoid", UnaryFactory(HardSigmoidRun, ActivationParams));
  r.RegisterFactory("", "HardSwish", UnaryFactory(HardSwishRun));
  r.RegisterFactory("", "Clip", UnaryFactory(ClipRun, ClipParams));
  r.RegisterFactory("", "Neg", UnaryFactory(NegRun));
  r.RegisterFactory("", "Abs", UnaryFactory(AbsRun));
  r.RegisterFactory("", "Sqrt", UnaryFactory(SqrtRun));
}

}  // namespace kiln::cpu
