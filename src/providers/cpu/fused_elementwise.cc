// FusedElementwise (ops/fused.h) on the cpu provider: one walk over the
// output in its memory order (strided_loop.h), in chunks of at most kChunk
// values (a long inner run cut, short ones grouped); a chunk goes through every step in turn, the
// intermediates in stack buffers that stay in L1, so only the inputs are
// read and only the output is written. Each step is the loop the unfused
// cpu kernel runs (elementwise_runs.h), in the same float arithmetic, so
// the fused chain's values are exactly the unfused nodes'.
//
// Every step is computed at the output's shape: elementwise ops commute
// with broadcasting, so a step whose own result would be smaller (both
// operands broadcast) gives the same values broadcast. Inputs may come in
// any dense layout (strides, 0 on broadcast dims); the output takes the
// layout of the first input that has its shape, else row-major.
//
// Declined to the composition of this provider's own kernels
// (compose_elementwise.h): other dtypes, inputs of unknown rank, more than
// kMaxInputs inputs or kMaxSteps steps.
#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "ops/fused.h"
#include "providers/cpu/elementwise_runs.h"
#include "providers/cpu/families.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/register.h"
#include "providers/cpu/strided_loop.h"
#include "runtime/compose_elementwise.h"
#include "support/layout.h"

namespace kiln::cpu {
namespace {

constexpr size_t kMaxInputs = 6;
constexpr size_t kMaxSteps = 8;
constexpr int64_t kChunk = 512;  // values per step and chunk: 8 steps x 2 KB stay in L1

struct Step {
  BinaryRun binary = nullptr;  // exactly one of binary / unary
  UnaryRun unary = nullptr;
  UnaryParams params;
  std::array<int64_t, 2> operands{};  // k >= 0: input k; k < 0: step -k-1
};

struct Plan {
  std::vector<Step> steps;
  size_t inputs = 0;
  int full = -1;  // the input whose layout the output takes (-1: row-major)
};

using Stride = std::array<int64_t, kMaxInputs + 1>;  // per operand, the output first

// The operands' offsets at position `index` of the nest's first `dims` dims.
Stride Offsets(const LoopNest<kMaxInputs + 1>& nest, size_t dims, int64_t index) {
  Stride off{};
  for (size_t k = dims; k-- > 0;) {
    const int64_t i = index % nest.size[k];
    index /= nest.size[k];
    for (size_t j = 0; j < off.size(); ++j) off[j] += i * nest.stride[k][j];
  }
  return off;
}

// An operand of one chunk: where it starts and its stride.
struct Operand {
  const float* p;
  int64_t stride;
};

// Runs the steps over `n` values whose inputs start at in[i] (stride
// in_stride[i]); the result goes to out (stride out_stride).
void RunChunk(const Plan& plan, const std::array<Operand, kMaxInputs>& in, float* out, int64_t out_stride, int64_t n,
              float (*tmp)[kChunk], float* gather) {
  const size_t last = plan.steps.size() - 1;
  auto operand = [&](int64_t o) { return o >= 0 ? in[static_cast<size_t>(o)] : Operand{tmp[-o - 1], 1}; };
  for (size_t k = 0; k <= last; ++k) {
    const Step& s = plan.steps[k];
    float* dst = k == last && out_stride == 1 ? out : tmp[k];
    const Operand a = operand(s.operands[0]);
    if (s.binary) {
      const Operand b = operand(s.operands[1]);
      s.binary(dst, a.p, b.p, n, a.stride, b.stride);
    } else if (a.stride == 1) {
      s.unary(dst, a.p, n, s.params);
    } else {
      for (int64_t i = 0; i < n; ++i) gather[i] = a.p[i * a.stride];
      s.unary(dst, gather, n, s.params);
    }
    if (dst != out && k == last)
      for (int64_t i = 0; i < n; ++i) out[i * out_stride] = dst[i];
  }
}

Result<Shape> BroadcastAll(const runtime::KernelContext& ctx, size_t inputs) {
  Shape out;
  for (size_t i = 0; i < inputs; ++i) {
    const Shape& s = ctx.input(i).shape();
    if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[k + out.size() - s.size()];
      const int64_t d = s[k];
      if (d == o || d == 1) continue;
      if (o != 1) return ctx.Error("input " + std::to_string(i) + " " + ShapeToString(s) + " does not broadcast with the others to " +
                                   ShapeToString(out));
      o = d;
    }
  }
  return out;
}

Status RunFused(runtime::KernelContext& ctx, const Plan& plan) {
  for (size_t i = 0; i < plan.inputs; ++i)
    if (ctx.input(i).dtype() != DType::kFloat32) return ctx.Error("cpu kernel takes float32, got " + ctx.input(i).Describe());
  KILN_ASSIGN_OR_RETURN(Shape shape, BroadcastAll(ctx, plan.inputs));
  DimOrder order = kRowMajor;
  if (plan.full >= 0) {
    const Tensor& f = ctx.input(static_cast<size_t>(plan.full));
    DimOrder o;
    if (f.shape() == shape && FindOrder(f, &o)) order = o;
  }
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, shape, order));
  if (y.numel() == 0) return Status::Ok();
  std::array<std::vector<int64_t>, kMaxInputs + 1> strides;
  strides[0] = y.strides();
  for (size_t i = 0; i < kMaxInputs; ++i)
    strides[i + 1] = i < plan.inputs ? BroadcastStrides(ctx.input(i), shape) : std::vector<int64_t>(shape.size(), 0);
  const LoopNest<kMaxInputs + 1> nest = MakeLoopNest<kMaxInputs + 1>(shape, strides);
  std::array<const float*, kMaxInputs> base{};
  for (size_t i = 0; i < plan.inputs; ++i) base[i] = ctx.input(i).data<float>();
  float* py = y.data<float>();
  const size_t dims = nest.size.size();
  const int64_t inner = nest.inner();
  const Stride& si = nest.stride.back();
  // Short runs (a per-channel scale on channels-last data walks C values
  // per pixel) are grouped: `group` runs of the next dim per chunk, when
  // every operand either continues there (its stride is inner times its
  // inner stride) or repeats (stride 0, the scale: then its run is tiled
  // `group` times in a buffer, rebuilt only when its offset changes).
  int64_t group = 1;
  std::array<bool, kMaxInputs + 1> repeat{};
  if (dims >= 2 && 2 * inner <= kChunk) {
    const Stride& so = nest.stride[dims - 2];
    bool ok = so[0] == inner * si[0];
    for (size_t k = 1; ok && k < repeat.size(); ++k) {
      repeat[k] = so[k] == 0;
      ok = repeat[k] || so[k] == inner * si[k];
    }
    if (ok) group = std::min(nest.size[dims - 2], kChunk / inner);
    if (group == 1) repeat.fill(false);
  }
  // Work items: (outer index, part) where a part is `group` runs of the
  // next dim, or kChunk values of one long run (so a flat walk still
  // spreads over the threads).
  const size_t outer_dims = group > 1 ? dims - 2 : dims - 1;
  const int64_t rows = group > 1 ? nest.size[dims - 2] : 1;
  const int64_t parts = group > 1 ? (rows + group - 1) / group : (inner + kChunk - 1) / kChunk;
  int64_t outer = 1;
  for (size_t k = 0; k < outer_dims; ++k) outer *= nest.size[k];
  ParallelFor(outer * parts, y.numel() * static_cast<int64_t>(plan.steps.size()), [&](int64_t begin, int64_t end) {
    alignas(64) float tmp[kMaxSteps][kChunk];
    alignas(64) float gather[kChunk];
    alignas(64) float tiles[kMaxInputs][kChunk];
    std::array<int64_t, kMaxInputs> tiled_at, tiled_n;
    tiled_at.fill(-1);
    tiled_n.fill(0);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t part = item % parts;
      Stride off = Offsets(nest, outer_dims, item / parts);
      int64_t n;
      if (group > 1) {
        const int64_t first = part * group, count = std::min(group, rows - first);
        for (size_t k = 0; k < off.size(); ++k) off[k] += first * nest.stride[dims - 2][k];
        n = count * inner;
      } else {
        for (size_t k = 0; k < off.size(); ++k) off[k] += part * kChunk * si[k];
        n = std::min(kChunk, inner - part * kChunk);
      }
      std::array<Operand, kMaxInputs> in{};
      for (size_t i = 0; i < plan.inputs; ++i) {
        const float* p = base[i] + off[i + 1];
        if (!repeat[i + 1]) {
          in[i] = {p, si[i + 1]};
          continue;
        }
        if (tiled_at[i] != off[i + 1] || tiled_n[i] != n) {
          for (int64_t j = 0; j < inner; ++j) tiles[i][j] = p[j * si[i + 1]];
          for (int64_t j = inner; j < n; ++j) tiles[i][j] = tiles[i][j - inner];
          tiled_at[i] = off[i + 1];
          tiled_n[i] = n;
        }
        in[i] = {tiles[i], 1};
      }
      RunChunk(plan, in, py + off[0], si[0], n, tmp, gather);
    }
  });
  return Status::Ok();
}

bool IsFloatWithRank(const ir::TypeInfo* t) {
  return t && t->kind == ir::TypeInfo::Kind::kTensor && t->dtype == DType::kFloat32 && t->shape;
}

// The first input whose load-time dims cover every other input's (the
// elementwise kernels' rule: unknown dims are taken to fit), -1 if none.
int FullInput(const runtime::KernelInit& init, size_t inputs) {
  for (size_t i = 0; i < inputs; ++i) {
    bool covers = true;
    for (size_t j = 0; covers && j < inputs; ++j) covers = CoversStatically(*init.input_type(i)->shape, *init.input_type(j)->shape);
    if (covers) return static_cast<int>(i);
  }
  return -1;
}

Result<runtime::Kernel> MakeFusedElementwise(const runtime::KernelInit& init) {
  const ir::Node& n = init.node;
  KILN_ASSIGN_OR_RETURN(std::vector<ops::ElementwiseStep> steps, ops::ParseElementwiseSteps(n));
  auto plan = std::make_shared<Plan>();
  plan->inputs = n.inputs.size();
  bool fast = plan->inputs <= kMaxInputs && steps.size() <= kMaxSteps;
  for (size_t i = 0; fast && i < plan->inputs; ++i) fast = IsFloatWithRank(init.input_type(i));
  for (const ops::ElementwiseStep& s : steps) {
    Step step;
    if (s.operands.size() == 2) step.binary = FindBinaryRun(s.op);
    if (s.operands.size() == 1) step.unary = FindUnaryRun(s.op);
    if (!step.binary && !step.unary) fast = false;
    step.params = {s.alpha, s.beta};
    for (size_t k = 0; k < s.operands.size(); ++k) step.operands[k] = s.operands[k];
    plan->steps.push_back(step);
  }
  if (!fast) return runtime::ComposeElementwise(Kernels(), init);
  plan->full = FullInput(init, plan->inputs);
  runtime::KernelLayouts layouts;
  layouts.inputs.resize(plan->inputs);
  for (auto& in : layouts.inputs) in.any_dense = true;
  const int full = plan->full;
  layouts.output_order = [full](const std::vector<DimOrder>& in) {
    return full >= 0 && static_cast<size_t>(full) < in.size() ? in[static_cast<size_t>(full)] : kRowMajor;
  };
  return runtime::Kernel([plan](runtime::KernelContext& ctx) { return RunFused(ctx, *plan); }, std::move(layouts));
}

}  // namespace

void RegisterFusedElementwiseKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory(ops::kKilnDomain, "FusedElementwise", MakeFusedElementwise);
}

}  // namespace kiln::cpu
