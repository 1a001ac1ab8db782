// Data movement ops, part 1: Concat, Split, Slice, Transpose, Tile (their
// attributes, shared index helpers and shape inference). Part 2 (Pad,
// DepthToSpace, SpaceToDepth, ReverseSequence, Trilu, Compress) is in
// data_movement_more.cc.
#include "ops/data_movement.h"

#include <algorithm>
#include <limits>
#include <set>

#include "ops/families.h"
#include "ops/infer_util.h"
#include "ops/shape_ops.h"

namespace kiln::ops {

Result<std::optional<std::vector<int64_t>>> KnownInputInts(const InferContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return std::optional<std::vector<int64_t>>();
  const Tensor* t = ctx.input_value(i);
  if (!t || !t->defined()) return std::optional<std::vector<int64_t>>();
  KILN_ASSIGN_OR_RETURN(auto v, TensorInts(ctx.node(), *t, what));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

std::optional<int64_t> KnownInputLength(const InferContext& ctx, size_t i) {
  if (const Tensor* t = ctx.input_value(i); t && t->defined()) return t->numel();
  const ir::Dims* d = ctx.input_dims(i);
  if (!d || d->size() != 1 || !(*d)[0].known()) return std::nullopt;
  return (*d)[0].value;
}

// ---------------------------------------------------------------- Concat

Result<ConcatAttrs> ParseConcat(const ir::Node& node, int64_t opset) {
  ConcatAttrs a;
  if (opset >= 4 && !node.FindAttr("axis")) return node.Invalid("attribute 'axis' is required");
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 1));
  return a;
}

namespace {

Status InferConcat(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ConcatAttrs a, ParseConcat(ctx.node(), ctx.opset()));
  if (ctx.num_inputs() == 0) return ctx.Error("needs at least one input");
  DType dt = DType::kUndefined;
  std::optional<ir::Dims> out;
  int64_t axis = 0;
  bool axis_known = true;
  int64_t axis_sum = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
    const DType t = ctx.input_dtype(i);
    if (t != DType::kUndefined) {
      if (dt != DType::kUndefined && t != dt)
        return ctx.Error("input " + std::to_string(i) + " has dtype " + DTypeName(t) + ", input 0 has " + DTypeName(dt));
      dt = t;
    }
    const ir::Dims* d = ctx.input_dims(i);
    if (!d) {
      axis_known = false;
      continue;
    }
    if (!out) {
      if (d->empty()) return ctx.Error("cannot concatenate scalars (input " + std::to_string(i) + " has rank 0)");
      KILN_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx, a.axis, static_cast<int64_t>(d->size())));
      out = *d;
    } else if (d->size() != out->size()) {
      return ctx.Error("input " + std::to_string(i) + " has rank " + std::to_string(d->size()) + ", expected " +
                       std::to_string(out->size()));
    }
    for (size_t k = 0; k < d->size(); ++k) {
      const ir::Dim& x = (*d)[k];
      if (static_cast<int64_t>(k) == axis) {
        if (!x.known()) axis_known = false;
        else if (__builtin_add_overflow(axis_sum, x.value, &axis_sum))
          return ctx.Error("the sum of the inputs' dims on axis " + std::to_string(axis) + " overflows int64");
        continue;
      }
      ir::Dim& o = (*out)[k];
      if (x.known() && o.known() && x.value != o.value)
        return ctx.Error("input " + std::to_string(i) + " has shape " + ir::DimsToString(*d) + ", incompatible with " +
                         ir::DimsToString(*out) + " outside axis " + std::to_string(axis));
      if (!o.known() && x.known()) o = x;
    }
  }
  if (out) (*out)[static_cast<size_t>(axis)] = axis_known ? ir::Dim::Known(axis_sum) : ir::Dim{};
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------- Split

Result<SplitAttrs> ParseSplit(const ir::Node& node, int64_t opset) {
  SplitAttrs a;
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 0));
  if (opset < 13 && node.FindAttr("split")) {
    KILN_ASSIGN_OR_RETURN(auto s, node.GetInts("split"));
    a.split = std::move(s);
  }
  if (opset >= 18 && node.FindAttr("num_outputs")) {
    KILN_ASSIGN_OR_RETURN(int64_t n, node.GetInt("num_outputs", 0));
    if (n < 1) return node.Invalid("attribute 'num_outputs' must be positive, got " + std::to_string(n));
    a.num_outputs = n;
  }
  return a;
}

Result<std::vector<int64_t>> SplitSizes(const ir::Node& node, const SplitAttrs& a,
                                        const std::optional<std::vector<int64_t>>& split, int64_t dim, size_t outputs) {
  const std::string dim_s = std::to_string(dim);
  if (split) {
    if (a.num_outputs) return node.Invalid("input 'split' and attribute 'num_outputs' cannot both be given");
    if (split->size() != outputs)
      return node.Invalid("split " + ShapeToString(*split) + " has " + std::to_string(split->size()) + " parts for " +
                          std::to_string(outputs) + " outputs");
    int64_t sum = 0;
    for (int64_t s : *split) {
      if (s < 0) return node.Invalid("split " + ShapeToString(*split) + " has a negative part");
      sum += s;
    }
    if (sum != dim) return node.Invalid("split " + ShapeToString(*split) + " sums to " + std::to_string(sum) + ", axis has size " + dim_s);
    return *split;
  }
  if (outputs == 0) return node.Invalid("has no outputs");
  const int64_t n = static_cast<int64_t>(outputs);
  if (a.num_outputs) {
    // Opset 18: ceil(dim / n) per part, the last part takes what is left.
    if (*a.num_outputs != n)
      return node.Invalid("attribute 'num_outputs' is " + std::to_string(*a.num_outputs) + " but the node has " +
                          std::to_string(n) + " outputs");
    const int64_t chunk = (dim + n - 1) / n;
    const int64_t last = dim - chunk * (n - 1);
    if (last < 0)
      return node.Invalid("cannot split an axis of size " + dim_s + " into " + std::to_string(n) + " parts of size " + std::to_string(chunk));
    std::vector<int64_t> sizes(outputs, chunk);
    sizes.back() = last;
    return sizes;
  }
  if (dim % n != 0) return node.Invalid("axis of size " + dim_s + " does not split into " + std::to_string(n) + " equal parts");
  return std::vector<int64_t>(outputs, dim / n);
}

namespace {

Status InferSplit(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(SplitAttrs a, ParseSplit(ctx.node(), ctx.opset()));
  // Split-1 took `split` as an optional second input too; 2-12 only as attribute.
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, ctx.opset() >= 13 || ctx.opset() == 1 ? 2 : 1));
  const DType dt = ctx.input_dtype(0);
  const size_t nout = ctx.num_outputs();
  std::optional<std::vector<int64_t>> split = a.split;
  bool split_unknown = false;
  if (ctx.has_input(1)) {
    KILN_ASSIGN_OR_RETURN(split, KnownInputInts(ctx, 1, "input 'split'"));
    split_unknown = !split;
    if (split && split->empty()) split = a.split;  // an empty split input means none
  }
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    for (size_t i = 0; i < nout; ++i) ctx.set_output(i, dt, std::nullopt);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a.axis, static_cast<int64_t>(in->size())));
  const ir::Dim& d = (*in)[static_cast<size_t>(axis)];
  std::vector<ir::Dim> parts(nout);
  if (split && !d.known()) {
    if (split->size() != nout)
      return ctx.Error("split " + ShapeToString(*split) + " has " + std::to_string(split->size()) + " parts for " +
                       std::to_string(nout) + " outputs");
    for (size_t i = 0; i < nout; ++i) parts[i] = ir::Dim::Known((*split)[i]);
  } else if (!split_unknown && d.known()) {
    KILN_ASSIGN_OR_RETURN(auto sizes, SplitSizes(ctx.node(), a, split, d.value, nout));
    for (size_t i = 0; i < nout; ++i) parts[i] = ir::Dim::Known(sizes[i]);
  }
  for (size_t i = 0; i < nout; ++i) {
    ir::Dims o = *in;
    o[static_cast<size_t>(axis)] = parts[i];
    ctx.set_output(i, dt, o);
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<int64_t>> SplitSizesOf(const ir::Node& node, const SplitAttrs& a, const Tensor* split_input, int64_t dim,
                                          size_t outputs) {
  std::optional<std::vector<int64_t>> split = a.split;
  if (split_input) {
    if (!split_input->defined()) return node.Invalid("input 'split' is not a tensor");
    KILN_ASSIGN_OR_RETURN(auto v, TensorInts(node, *split_input, "input 'split'"));
    if (!v.empty()) split = std::move(v);
  }
  return SplitSizes(node, a, split, dim, outputs);
}

// ---------------------------------------------------------------- Slice

Result<SliceAttrs> ParseSlice(const ir::Node& node, int64_t opset) {
  SliceAttrs a;
  if (opset >= 10) return a;
  if (!node.FindAttr("starts") || !node.FindAttr("ends")) return node.Invalid("attributes 'starts' and 'ends' are required");
  KILN_ASSIGN_OR_RETURN(a.starts, node.GetInts("starts"));
  KILN_ASSIGN_OR_RETURN(a.ends, node.GetInts("ends"));
  if (node.FindAttr("axes")) {
    KILN_ASSIGN_OR_RETURN(auto ax, node.GetInts("axes"));
    a.axes = std::move(ax);
  }
  return a;
}

SliceAxis ResolveSliceAxis(int64_t start, int64_t end, int64_t step, int64_t dim) {
  SliceAxis r;
  r.step = step;
  if (dim <= 0) return r;
  if (step > 0) {
    // Positive steps clamp both ends to [0, dim].
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.start = start;
    r.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    // Negative steps clamp start to [0, dim-1] and end to [-1, dim-1]: an end
    // of INT_MIN (or -dim-1) runs through index 0.
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    const int64_t mag = step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
    r.start = start;
    r.count = start > end ? (start - end - 1) / mag + 1 : 0;
  }
  return r;
}

Result<SliceSpec> MakeSliceSpec(const ir::Node& node, std::vector<int64_t> starts, std::vector<int64_t> ends,
                                std::optional<std::vector<int64_t>> axes, std::optional<std::vector<int64_t>> steps,
                                int64_t rank) {
  SliceSpec s;
  const size_t n = starts.size();
  if (ends.size() != n)
    return node.Invalid("starts has " + std::to_string(n) + " values, ends has " + std::to_string(ends.size()));
  if (axes && axes->size() != n) return node.Invalid("axes has " + std::to_string(axes->size()) + " values, starts has " + std::to_string(n));
  if (steps && steps->size() != n) return node.Invalid("steps has " + std::to_string(steps->size()) + " values, starts has " + std::to_string(n));
  if (!axes) {
    if (static_cast<int64_t>(n) > rank) return node.Invalid("starts has " + std::to_string(n) + " values for an input of rank " + std::to_string(rank));
    axes = std::vector<int64_t>();
    for (size_t k = 0; k < n; ++k) axes->push_back(static_cast<int64_t>(k));
  }
  std::set<int64_t> seen;
  for (int64_t ax : *axes) {
    KILN_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(node, ax, rank));
    if (!seen.insert(a).second) return node.Invalid("axis " + std::to_string(ax) + " is repeated in axes");
    s.axes.push_back(a);
  }
  if (steps) {
    for (int64_t st : *steps)
      if (st == 0) return node.Invalid("steps must not be 0");
    s.steps = std::move(*steps);
  } else {
    s.steps.assign(n, 1);
  }
  s.starts = std::move(starts);
  s.ends = std::move(ends);
  return s;
}

Result<SliceSpec> SliceSpecOf(const ir::Node& node, int64_t opset, const SliceAttrs& a, const std::array<const Tensor*, 4>& inputs,
                              int64_t rank) {
  if (opset < 10) return MakeSliceSpec(node, a.starts, a.ends, a.axes, std::nullopt, rank);
  std::array<std::optional<std::vector<int64_t>>, 4> v;
  const char* names[4] = {"input 'starts'", "input 'ends'", "input 'axes'", "input 'steps'"};
  for (size_t i = 0; i < 4; ++i) {
    if (!inputs[i]) continue;
    if (!inputs[i]->defined()) return node.Invalid(std::string(names[i]) + " is not a tensor");
    KILN_ASSIGN_OR_RETURN(auto ints, TensorInts(node, *inputs[i], names[i]));
    v[i] = std::move(ints);
  }
  if (!v[0] || !v[1]) return node.Invalid("inputs 'starts' and 'ends' are required");
  return MakeSliceSpec(node, std::move(*v[0]), std::move(*v[1]), std::move(v[2]), std::move(v[3]), rank);
}

SliceView ViewOfSlice(const SliceSpec& spec, const Tensor& x) {
  SliceView v{x.shape(), x.strides(), x.offset(), false};
  for (size_t k = 0; k < spec.axes.size(); ++k) {
    const size_t ax = static_cast<size_t>(spec.axes[k]);
    const SliceAxis r = ResolveSliceAxis(spec.starts[k], spec.ends[k], spec.steps[k], x.shape()[ax]);
    v.shape[ax] = r.count;
    if (r.count == 0) continue;
    v.offset += r.start * x.strides()[ax];
    // A single element needs no step (and a huge step must not overflow).
    v.strides[ax] = r.count == 1 ? x.strides()[ax] : x.strides()[ax] * r.step;
  }
  for (int64_t d : v.shape) v.empty = v.empty || d == 0;
  return v;
}

namespace {

Status InferSlice(InferContext& ctx) {
  const bool attr_form = ctx.opset() < 10;
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(attr_form ? 1 : 3, attr_form ? 1 : 5));
  KILN_ASSIGN_OR_RETURN(SliceAttrs a, ParseSlice(ctx.node(), ctx.opset()));
  const DType dt = ctx.input_dtype(0);
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  const int64_t rank = static_cast<int64_t>(in->size());
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  bool axes_unknown = false, steps_unknown = false;
  if (attr_form) {
    starts = a.starts;
    ends = a.ends;
    axes = a.axes;
  } else {
    KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt32, DType::kInt64}));
    KILN_RETURN_IF_ERROR(CheckDType(ctx, 2, {DType::kInt32, DType::kInt64}));
    KILN_ASSIGN_OR_RETURN(starts, KnownInputInts(ctx, 1, "input 'starts'"));
    KILN_ASSIGN_OR_RETURN(ends, KnownInputInts(ctx, 2, "input 'ends'"));
    KILN_ASSIGN_OR_RETURN(axes, KnownInputInts(ctx, 3, "input 'axes'"));
    KILN_ASSIGN_OR_RETURN(steps, KnownInputInts(ctx, 4, "input 'steps'"));
    axes_unknown = ctx.has_input(3) && !axes;
    steps_unknown = ctx.has_input(4) && !steps;
  }
  ir::Dims out = *in;
  if (!starts || !ends || axes_unknown || steps_unknown) {
    // Some dims change, which ones depends on values known only at run time.
    if (axes) {
      for (int64_t ax : *axes) {
        KILN_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(ctx, ax, rank));
        out[static_cast<size_t>(n)] = ir::Dim{};
      }
    } else {
      out = UnknownDims(in->size());
    }
    ctx.set_output(0, dt, out);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(SliceSpec s, MakeSliceSpec(ctx.node(), *starts, *ends, axes, steps, rank));
  for (size_t k = 0; k < s.axes.size(); ++k) {
    ir::Dim& d = out[static_cast<size_t>(s.axes[k])];
    if (d.known()) {
      d = ir::Dim::Known(ResolveSliceAxis(s.starts[k], s.ends[k], s.steps[k], d.value).count);
    } else if (!(s.steps[k] == 1 && s.starts[k] == 0 && s.ends[k] >= std::numeric_limits<int32_t>::max())) {
      d = ir::Dim{};  // [0:INT_MAX] keeps an unknown dim (and its symbol)
    }
  }
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------- Transpose

Result<TransposeAttrs> ParseTranspose(const ir::Node& node, int64_t) {
  TransposeAttrs a;
  if (node.FindAttr("perm")) {
    KILN_ASSIGN_OR_RETURN(auto p, node.GetInts("perm"));
    a.perm = std::move(p);
  }
  return a;
}

Result<std::vector<int64_t>> TransposePerm(const ir::Node& node, const TransposeAttrs& a, int64_t rank) {
  std::vector<int64_t> perm;
  if (!a.perm) {
    for (int64_t k = rank - 1; k >= 0; --k) perm.push_back(k);
    return perm;
  }
  perm = *a.perm;
  if (static_cast<int64_t>(perm.size()) != rank)
    return node.Invalid("perm " + ShapeToString(perm) + " has " + std::to_string(perm.size()) + " axes for an input of rank " +
                        std::to_string(rank));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& p : perm) {
    if (p < -rank || p >= rank || seen[static_cast<size_t>(p < 0 ? p + rank : p)])
      return node.Invalid("perm " + ShapeToString(*a.perm) + " is not a permutation of 0.." + std::to_string(rank - 1));
    if (p < 0) p += rank;
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

namespace {

Status InferTranspose(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_ASSIGN_OR_RETURN(TransposeAttrs a, ParseTranspose(ctx.node(), ctx.opset()));
  const DType dt = ctx.input_dtype(0);
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    if (a.perm) ctx.set_output(0, dt, UnknownDims(a.perm->size()));
    else ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(auto perm, TransposePerm(ctx.node(), a, static_cast<int64_t>(in->size())));
  ir::Dims out;
  for (int64_t p : perm) out.push_back((*in)[static_cast<size_t>(p)]);
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

// ---------------------------------------------------------------- Tile

Status InferTile(InferContext& ctx) {
  const DType dt = ctx.input_dtype(0);
  const ir::Dims* in = ctx.input_dims(0);
  if (ctx.opset() < 6) {
    // Tile-1: a scalar count `tiles` of copies along a scalar `axis`.
    KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, 3));
    KILN_ASSIGN_OR_RETURN(auto tiles, KnownInputInts(ctx, 1, "input 'tiles'"));
    KILN_ASSIGN_OR_RETURN(auto axis, KnownInputInts(ctx, 2, "input 'axis'"));
    if (!in) {
      ctx.set_output(0, dt, std::nullopt);
      return Status::Ok();
    }
    ir::Dims out = *in;
    if (!axis) {
      ctx.set_output(0, dt, UnknownDims(in->size()));
      return Status::Ok();
    }
    if (axis->size() != 1 || (tiles && tiles->size() != 1)) return ctx.Error("inputs 'tiles' and 'axis' must be scalars");
    KILN_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(ctx, (*axis)[0], static_cast<int64_t>(in->size())));
    ir::Dim& d = out[static_cast<size_t>(ax)];
    if (tiles && (*tiles)[0] < 0) return ctx.Error("input 'tiles' must not be negative");
    if (tiles && d.known()) {
      KILN_ASSIGN_OR_RETURN(int64_t v, CheckedDim(ctx, d.value, (*tiles)[0]));
      d = ir::Dim::Known(v);
    } else {
      d = ir::Dim{};
    }
    ctx.set_output(0, dt, out);
    return Status::Ok();
  }
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
  KILN_ASSIGN_OR_RETURN(auto reps, KnownInputInts(ctx, 1, "input 'repeats'"));
  if (!in) {
    auto n = KnownInputLength(ctx, 1);
    if (n) ctx.set_output(0, dt, UnknownDims(static_cast<size_t>(*n)));
    else ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  if (!reps) {
    ctx.set_output(0, dt, UnknownDims(in->size()));
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(Shape s, TileShape(ctx.node(), *in, *reps));
  ir::Dims out = *in;
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t r = (*reps)[k];
    if (r == 0) out[k] = ir::Dim::Known(0);
    else if (out[k].known()) out[k] = ir::Dim::Known(s[k]);  // TileShape checked the product
    else if (r != 1) out[k] = ir::Dim{};
  }
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

}  // namespace

Result<Shape> TileShape(const ir::Node& node, const ir::Dims& in, const std::vector<int64_t>& reps) {
  if (reps.size() != in.size())
    return node.Invalid("repeats " + ShapeToString(reps) + " has " + std::to_string(reps.size()) + " values for an input of rank " +
                        std::to_string(in.size()));
  Shape s;
  for (size_t k = 0; k < reps.size(); ++k) {
    if (reps[k] < 0) return node.Invalid("repeats " + ShapeToString(reps) + " has a negative value");
    int64_t v = 0;
    if (in[k].known() && __builtin_mul_overflow(in[k].value, reps[k], &v)) return node.Invalid("tiled shape overflows int64");
    s.push_back(in[k].known() ? v : -1);
  }
  return s;
}

void RegisterDataMovementOps(OpRegistry& r) {
  r.Register({"", "Concat", 1, 1000, InferConcat});
  r.Register({"", "Split", 1, 1000, InferSplit});
  r.Register({"", "Slice", 1, 1000, InferSlice});
  r.Register({"", "Transpose", 1, 1000, InferTranspose});
  r.Register({"", "Tile", 1, 1000, InferTile});
  RegisterDataMovementMoreOps(r);
}

}  // namespace kiln::ops
