// Reference kernels of data movement ops, part 2: Pad, DepthToSpace,
// SpaceToDepth, ReverseSequence, Trilu, Compress. Each is the spec's index
// map written as a loop over output elements.
#include "ops/data_movement.h"
#include "ops/infer_util.h"
#include "ops/shape_ops.h"
#include "providers/reference/data_movement_util.h"
#include "providers/reference/families.h"

namespace kiln::reference {
namespace {

// Pad: out[o] = x[o - begin] inside, else the fill value (constant) or the
// mode's source index. Negative pads give negative begins: a crop.
Status Pad(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::PadAttrs a, ops::ParsePad(n, ctx.opset()));
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  std::vector<int64_t> pads;
  std::optional<std::vector<int64_t>> axes;
  if (a.pads) {
    pads = *a.pads;
  } else {
    if (!ctx.input(1).defined()) return ctx.Error("input 'pads' is required");
    KILN_ASSIGN_OR_RETURN(pads, ops::TensorInts(n, ctx.input(1), "input 'pads'"));
    if (ctx.opset() >= 18 && ctx.has_input(3)) {
      KILN_ASSIGN_OR_RETURN(auto ax, ops::TensorInts(n, ctx.input(3), "input 'axes'"));
      axes = std::move(ax);
    }
  }
  KILN_ASSIGN_OR_RETURN(auto full, ops::FullPads(n, pads, axes, rank));
  Shape s = x.shape();
  for (int64_t k = 0; k < rank; ++k) {
    const size_t kk = static_cast<size_t>(k);
    const int64_t v = s[kk] + full[kk] + full[static_cast<size_t>(rank + k)];
    if (v < 0) return ctx.Error("pads crop axis " + std::to_string(k) + " below zero");
    if (a.mode != ops::PadMode::kConstant && s[kk] == 0 && v > 0)
      return ctx.Error("cannot pad the empty axis " + std::to_string(k) + " in a non-constant mode");
    s[kk] = v;
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), s));
  if (a.mode == ops::PadMode::kConstant) {
    // Fill first: the constant_value input (opset 11, same dtype as data) or
    // the float `value` attribute (opset 1-10); 0 / "" by default.
    const Tensor* cv = ctx.has_input(2) && ctx.opset() >= 11 ? &ctx.input(2) : nullptr;
    if (cv && (!cv->defined() || cv->dtype() != x.dtype() || cv->numel() != 1))
      return ctx.Error("input 'constant_value' must be a one-element tensor of the data's dtype");
    KILN_RETURN_IF_ERROR(VisitAll(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T fill{};
      if (cv) fill = cv->data<T>()[0];
      else if constexpr (!std::is_same_v<T, std::string>) fill = FromDouble<T>(a.value);
      T* d = out.data<T>();
      for (int64_t i = 0; i < out.numel(); ++i) d[i] = fill;
    }));
  }
  const std::vector<int64_t> st = ContiguousStrides(x.shape());
  return GatherByIndex(x, out, [&](const std::vector<int64_t>& idx) -> int64_t {
    int64_t off = 0;
    for (size_t k = 0; k < idx.size(); ++k) {
      int64_t i = idx[k] - full[k];
      if (i < 0 || i >= x.shape()[k]) {
        if (a.mode == ops::PadMode::kConstant) return -1;
        i = ops::PadSourceIndex(a.mode, i, x.shape()[k]);
      }
      off += i * st[k];
    }
    return off;
  });
}

Status DepthToSpace(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::DepthToSpaceAttrs a, ops::ParseDepthToSpace(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return ctx.Error("input must have rank 4, got " + ShapeToString(x.shape()));
  const int64_t b = a.blocksize, c_out = x.dim(1) / (b * b), h = x.dim(2), w = x.dim(3);
  if (x.dim(1) % (b * b) != 0) return ctx.Error("channels are not a multiple of blocksize^2");
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), Shape{x.dim(0), c_out, h * b, w * b}));
  const std::vector<int64_t> st = ContiguousStrides(x.shape());
  return GatherByIndex(x, out, [&](const std::vector<int64_t>& o) {
    const int64_t bh = o[2] % b, bw = o[3] % b;
    // DCR: input channel (bh, bw, c); CRD: (c, bh, bw).
    const int64_t c = a.crd ? o[1] * b * b + bh * b + bw : (bh * b + bw) * c_out + o[1];
    return o[0] * st[0] + c * st[1] + (o[2] / b) * st[2] + (o[3] / b) * st[3];
  });
}

Status SpaceToDepth(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::SpaceToDepthAttrs a, ops::ParseSpaceToDepth(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return ctx.Error("input must have rank 4, got " + ShapeToString(x.shape()));
  const int64_t b = a.blocksize, c = x.dim(1);
  if (x.dim(2) % b != 0 || x.dim(3) % b != 0) return ctx.Error("spatial dims are not multiples of blocksize");
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), Shape{x.dim(0), c * b * b, x.dim(2) / b, x.dim(3) / b}));
  const std::vector<int64_t> st = ContiguousStrides(x.shape());
  return GatherByIndex(x, out, [&](const std::vector<int64_t>& o) {
    // Output channel (bh, bw, c).
    const int64_t blk = o[1] / c, ci = o[1] % c, bh = blk / b, bw = blk % b;
    return o[0] * st[0] + ci * st[1] + (o[2] * b + bh) * st[2] + (o[3] * b + bw) * st[3];
  });
}

// ReverseSequence: the first seq_lens[b] steps of batch b run backwards.
Status ReverseSequence(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::ReverseSequenceAttrs a, ops::ParseReverseSequence(n, ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.Error("input must have rank >= 2");
  KILN_ASSIGN_OR_RETURN(auto lens, ops::TensorInts(n, ctx.input(1), "input 'sequence_lens'"));
  const int64_t batch = x.dim(static_cast<int>(a.batch_axis)), steps = x.dim(static_cast<int>(a.time_axis));
  if (static_cast<int64_t>(lens.size()) != batch)
    return ctx.Error("sequence_lens has " + std::to_string(lens.size()) + " values for a batch of " + std::to_string(batch));
  for (int64_t l : lens)
    if (l < 0 || l > steps) return ctx.Error("sequence length " + std::to_string(l) + " is outside [0, " + std::to_string(steps) + "]");
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), x.shape()));
  const std::vector<int64_t> st = ContiguousStrides(x.shape());
  const size_t ta = static_cast<size_t>(a.time_axis), ba = static_cast<size_t>(a.batch_axis);
  return GatherByIndex(x, out, [&](const std::vector<int64_t>& o) {
    const int64_t len = lens[static_cast<size_t>(o[ba])], t = o[ta];
    const int64_t src_t = t < len ? len - 1 - t : t;
    return OffsetOf(o, st) + (src_t - t) * st[ta];
  });
}

// Trilu: keeps x[..., i, j] where j - i >= k (upper) or j - i <= k (lower).
Status Trilu(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::TriluAttrs a, ops::ParseTrilu(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.Error("input must have rank >= 2");
  int64_t k = 0;
  if (ctx.has_input(1)) {
    KILN_ASSIGN_OR_RETURN(auto kv, ops::TensorInts(ctx.node(), ctx.input(1), "input 'k'"));
    if (kv.size() != 1) return ctx.Error("input 'k' must be a scalar");
    k = kv[0];
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), x.shape()));
  const size_t r = static_cast<size_t>(x.rank());
  const std::vector<int64_t> st = ContiguousStrides(x.shape());
  return GatherByIndex(x, out, [&](const std::vector<int64_t>& o) -> int64_t {
    const int64_t d = o[r - 1] - o[r - 2];
    const bool keep = a.upper ? d >= k : d <= k;
    return keep ? OffsetOf(o, st) : -1;  // the output starts zeroed
  });
}

// Compress: the slices (or flat elements) whose condition is true, in order.
Status Compress(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::CompressAttrs a, ops::ParseCompress(n, ctx.opset()));
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  if (!cond.defined() || cond.dtype() != DType::kBool || cond.rank() != 1) return ctx.Error("input 'condition' must be a 1-D bool tensor");
  int64_t axis = -1, len = x.numel();
  if (a.axis) {
    KILN_ASSIGN_OR_RETURN(axis, ops::NormalizeAxis(n, *a.axis, x.rank()));
    len = x.dim(static_cast<int>(axis));
  }
  // Condition entries past the axis are ignored when false; a true one selects nothing that exists.
  std::vector<int64_t> picked;
  const bool* c = cond.data<bool>();
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (!c[i]) continue;
    if (i >= len) return ctx.Error("condition is true at index " + std::to_string(i) + " past the axis length " + std::to_string(len));
    picked.push_back(i);
  }
  const int64_t m = static_cast<int64_t>(picked.size());
  if (axis < 0) {
    KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), Shape{m}));
    return GatherByIndex(x, out, [&](const std::vector<int64_t>& o) { return picked[static_cast<size_t>(o[0])]; });
  }
  Shape s = x.shape();
  s[static_cast<size_t>(axis)] = m;
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), s));
  const std::vector<int64_t> st = ContiguousStrides(x.shape());
  const size_t ax = static_cast<size_t>(axis);
  return GatherByIndex(x, out, [&](const std::vector<int64_t>& o) {
    return OffsetOf(o, st) + (picked[static_cast<size_t>(o[ax])] - o[ax]) * st[ax];
  });
}

}  // namespace

void RegisterDataMovementMoreKernels(runtime::KernelRegistry& r) {
  r.Register("", "Pad", Pad);
  r.Register("", "DepthToSpace", DepthToSpace);
  r.Register("", "SpaceToDepth", SpaceToDepth);
  r.Register("", "ReverseSequence", ReverseSequence);
  r.Register("", "Trilu", Trilu);
  r.Register("", "Compress", Compress);
}

}  // namespace kiln::reference
