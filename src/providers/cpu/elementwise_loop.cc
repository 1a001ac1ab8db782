// The elementwise loop (elementwise_loop.h).
#include "providers/cpu/elementwise_loop.h"

#include <algorithm>
#include <memory>
#include <string>

#include "providers/cpu/parallel.h"
#include "providers/cpu/strided_loop.h"
#include "support/layout.h"

namespace kiln::cpu {
namespace {

constexpr int64_t kElementwiseChunk = 512;  // values per step and chunk: 8 steps x 2 KB stay in L1
// A lone binary step writes straight to the output and needs no buffer: its
// long runs are cut only for the threads, in parts this long.
constexpr int64_t kDirectPart = 16384;

// The operands' offsets (the output first) at position `index` of the
// nest's first `dims` dims.
template <size_t N>
std::array<int64_t, N> Offsets(const LoopNest<N>& nest, size_t dims, int64_t index) {
  std::array<int64_t, N> off{};
  for (size_t k = dims; k-- > 0;) {
    const int64_t i = index % nest.size[k];
    index /= nest.size[k];
    for (size_t j = 0; j < off.size(); ++j) off[j] += i * nest.stride[k][j];
  }
  return off;
}

// The operands' offsets at consecutive positions of the nest's first
// `dims` dims: decomposed once, then stepped like an odometer.
template <size_t N>
class OuterWalk {
 public:
  OuterWalk(const LoopNest<N>& nest, size_t dims, int64_t start) : nest_(nest), dims_(dims), idx_(dims), off_(Offsets(nest, dims, start)) {
    for (size_t k = dims; k-- > 0;) {
      idx_[k] = start % nest.size[k];
      start /= nest.size[k];
    }
  }
  const std::array<int64_t, N>& offsets() const { return off_; }
  void Next() {
    for (size_t k = dims_; k-- > 0;) {
      for (size_t j = 0; j < N; ++j) off_[j] += nest_.stride[k][j];
      if (++idx_[k] < nest_.size[k]) return;
      for (size_t j = 0; j < N; ++j) off_[j] -= nest_.stride[k][j] * nest_.size[k];
      idx_[k] = 0;
    }
  }

 private:
  const LoopNest<N>& nest_;
  size_t dims_;
  std::vector<int64_t> idx_;
  std::array<int64_t, N> off_;
};

// An operand of one chunk: where it starts and its stride.
struct Operand {
  const float* p;
  int64_t stride;
};

// Runs the steps over `n` values of the inputs `in`; the result goes to out
// (stride out_stride). tmp holds each step's chunk, gather a strided
// operand of a unary step.
void RunChunk(const ElementwisePlan& plan, const std::array<Operand, kElementwiseMaxInputs>& in, float* out, int64_t out_stride, int64_t n,
              float (*tmp)[kElementwiseChunk], float* gather) {
  const size_t last = plan.steps.size() - 1;
  auto operand = [&](int64_t o) { return o >= 0 ? in[static_cast<size_t>(o)] : Operand{tmp[-o - 1], 1}; };
  for (size_t k = 0; k <= last; ++k) {
    const ElementwiseStepRun& s = plan.steps[k];
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

// The walk over N operands (the output and N-1 inputs): templated on N so
// that the loop nest and each item's offsets cover only the operands there are.
template <size_t N>
void Walk(const ElementwisePlan& plan, const std::vector<const Tensor*>& inputs, Tensor& y) {
  using Stride = std::array<int64_t, N>;
  const Shape& shape = y.shape();
  std::array<std::vector<int64_t>, N> strides;
  strides[0] = y.strides();
  for (size_t i = 0; i + 1 < N; ++i) strides[i + 1] = BroadcastStrides(*inputs[i], shape);
  const LoopNest<N> nest = MakeLoopNest<N>(shape, strides);
  std::array<const float*, N - 1> base{};
  for (size_t i = 0; i + 1 < N; ++i) base[i] = inputs[i]->data<float>();
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
  std::array<bool, N> repeat{};
  // (Runs of 256 or more are long enough alone: measured, grouping two of
  // them was slower than two calls.)
  if (dims >= 2 && 4 * inner <= kElementwiseChunk) {
    const Stride& so = nest.stride[dims - 2];
    bool ok = so[0] == inner * si[0];
    for (size_t k = 1; ok && k < repeat.size(); ++k) {
      repeat[k] = so[k] == 0;
      ok = repeat[k] || so[k] == inner * si[k];
    }
    if (ok) group = std::min(nest.size[dims - 2], kElementwiseChunk / inner);
    if (group == 1) repeat.fill(false);
  }
  // Work items: (outer index, part) where a part is `group` runs of the
  // next dim, or `part_len` values of one long run (so a flat walk still
  // spreads over the threads).
  const bool direct = plan.steps.size() == 1 && plan.steps[0].binary && si[0] == 1;
  const int64_t part_len = direct ? kDirectPart : kElementwiseChunk;
  const size_t outer_dims = group > 1 ? dims - 2 : dims - 1;
  const int64_t rows = group > 1 ? nest.size[dims - 2] : 1;
  const int64_t parts = group > 1 ? (rows + group - 1) / group : (inner + part_len - 1) / part_len;
  int64_t outer = 1;
  for (size_t k = 0; k < outer_dims; ++k) outer *= nest.size[k];
  const int64_t work = y.numel() * static_cast<int64_t>(plan.steps.size());
  if (direct && group == 1) {  // the binary kernels' common case: no buffers, one call per part
    const ElementwiseStepRun& st = plan.steps[0];
    const size_t a = static_cast<size_t>(st.operands[0]), b = static_cast<size_t>(st.operands[1]);
    ParallelFor(outer * parts, work, [&](int64_t begin, int64_t end) {
      OuterWalk<N> walk(nest, outer_dims, begin / parts);
      for (int64_t item = begin, part = begin % parts; item < end; ++item, ++part) {
        if (part == parts) {
          part = 0;
          walk.Next();
        }
        const Stride& off = walk.offsets();
        const int64_t start = part * part_len, n = std::min(part_len, inner - start);
        st.binary(py + off[0] + start, base[a] + off[a + 1] + start * si[a + 1], base[b] + off[b + 1] + start * si[b + 1], n,
                  si[a + 1], si[b + 1]);
      }
    });
    return;
  }
  ParallelFor(outer * parts, work, [&](int64_t begin, int64_t end) {
    alignas(64) float tmp[kElementwiseMaxSteps][kElementwiseChunk];
    alignas(64) float gather[kElementwiseChunk];
    alignas(64) float tiles[kElementwiseMaxInputs][kElementwiseChunk];
    std::array<int64_t, N - 1> tiled_at, tiled_n;
    tiled_at.fill(-1);
    tiled_n.fill(0);
    OuterWalk<N> walk(nest, outer_dims, begin / parts);
    for (int64_t item = begin, part = begin % parts; item < end; ++item, ++part) {
      if (part == parts) {
        part = 0;
        walk.Next();
      }
      Stride off = walk.offsets();
      int64_t n;
      if (group > 1) {
        const int64_t first = part * group, count = std::min(group, rows - first);
        for (size_t k = 0; k < off.size(); ++k) off[k] += first * nest.stride[dims - 2][k];
        n = count * inner;
      } else {
        for (size_t k = 0; k < off.size(); ++k) off[k] += part * part_len * si[k];
        n = std::min(part_len, inner - part * part_len);
      }
      std::array<Operand, kElementwiseMaxInputs> in;
      for (size_t i = 0; i + 1 < N; ++i) {
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
}

}  // namespace

Status RunElementwisePlan(runtime::KernelContext& ctx, const ElementwisePlan& plan) {
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < plan.inputs; ++i) {
    inputs.push_back(&ctx.input(i));
    if (inputs.back()->dtype() != DType::kFloat32) return ctx.Error("cpu kernel takes float32, got " + inputs.back()->Describe());
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, BroadcastAll(ctx, plan.inputs));
  DimOrder order = kRowMajor;
  if (plan.full >= 0) {
    const Tensor& f = ctx.input(static_cast<size_t>(plan.full));
    DimOrder o;
    if (f.shape() == shape && FindOrder(f, &o)) order = o;
  }
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, shape, order));
  if (y.numel() == 0) return Status::Ok();
  switch (plan.inputs) {
    case 1: Walk<2>(plan, inputs, y); break;
    case 2: Walk<3>(plan, inputs, y); break;
    case 3: Walk<4>(plan, inputs, y); break;
    case 4: Walk<5>(plan, inputs, y); break;
    case 5: Walk<6>(plan, inputs, y); break;
    case 6: Walk<7>(plan, inputs, y); break;
    default: return ctx.Error("the elementwise loop takes 1 to " + std::to_string(kElementwiseMaxInputs) + " inputs, got " +
                              std::to_string(plan.inputs));
  }
  return Status::Ok();
}

int CoveringInput(const std::vector<const ir::Dims*>& dims) {
  for (size_t i = 0; i < dims.size(); ++i) {
    bool covers = true;
    for (size_t j = 0; covers && j < dims.size(); ++j) covers = CoversStatically(*dims[i], *dims[j]);
    if (covers) return static_cast<int>(i);
  }
  return -1;
}

runtime::Kernel ElementwiseKernel(ElementwisePlan plan) {
  auto shared = std::make_shared<const ElementwisePlan>(std::move(plan));
  runtime::KernelLayouts layouts;
  layouts.inputs.resize(shared->inputs);
  for (auto& in : layouts.inputs) in.any_dense = true;
  const int full = shared->full;
  layouts.output_order = [full](const std::vector<DimOrder>& in) {
    return full >= 0 && static_cast<size_t>(full) < in.size() ? in[static_cast<size_t>(full)] : kRowMajor;
  };
  return runtime::Kernel([shared](runtime::KernelContext& ctx) { return RunElementwisePlan(ctx, *shared); }, std::move(layouts));
}

}  // namespace kiln::cpu
