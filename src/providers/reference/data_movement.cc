// Reference kernels of data movement ops, part 1: Concat, Split, Slice,
// Transpose, Tile. Transpose and Slice return strided views of their input
// (Tensor::Permuted / Tensor::View share storage); the executor makes a
// view contiguous before the next kernel reads it. Part 2 is in
// data_movement_more.cc.
#include "ops/data_movement.h"
#include "ops/infer_util.h"
#include "ops/shape_ops.h"
#include "providers/reference/data_movement_util.h"
#include "providers/reference/families.h"

namespace kiln::reference {

void RegisterDataMovementMoreKernels(runtime::KernelRegistry& r);  // data_movement_more.cc

namespace {

Result<std::optional<std::vector<int64_t>>> OptionalInts(runtime::KernelContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return std::optional<std::vector<int64_t>>();
  if (!ctx.input(i).defined()) return ctx.Error(std::string(what) + " is not a tensor");
  KILN_ASSIGN_OR_RETURN(auto v, ops::TensorInts(ctx.node(), ctx.input(i), what));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

// Concat: each input's [outer, dim_i * inner] block goes to its column range.
Status Concat(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::ConcatAttrs a, ops::ParseConcat(n, ctx.opset()));
  const Tensor& x0 = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(n, a.axis, x0.rank()));
  Shape out_shape = x0.shape();
  out_shape[static_cast<size_t>(axis)] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& x = ctx.input(i);
    if (!x.defined() || x.rank() != x0.rank() || x.dtype() != x0.dtype()) return ctx.Error("input " + std::to_string(i) + " does not match input 0");
    for (int k = 0; k < x.rank(); ++k)
      if (k != axis && x.dim(k) != x0.dim(k))
        return ctx.Error("input " + std::to_string(i) + " has shape " + ShapeToString(x.shape()) + ", input 0 has " + ShapeToString(x0.shape()));
    out_shape[static_cast<size_t>(axis)] += x.dim(static_cast<int>(axis));
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x0.dtype(), out_shape));
  const size_t ax = static_cast<size_t>(axis);
  const int64_t outer = DimProduct(out_shape, 0, ax), inner = DimProduct(out_shape, ax + 1, out_shape.size());
  const int64_t out_row = out_shape[ax] * inner;
  int64_t col = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& x = ctx.input(i);
    const int64_t row = x.dim(static_cast<int>(axis)) * inner;
    for (int64_t o = 0; o < outer; ++o) CopyElements(x, o * row, out, o * out_row + col, row);
    col += row;
  }
  return Status::Ok();
}

Status Split(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::SplitAttrs a, ops::ParseSplit(n, ctx.opset()));
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(n, a.axis, x.rank()));
  const size_t ax = static_cast<size_t>(axis);
  KILN_ASSIGN_OR_RETURN(auto sizes, ops::SplitSizesOf(n, a, ctx.has_input(1) ? &ctx.input(1) : nullptr, x.shape()[ax], ctx.num_outputs()));
  const int64_t outer = DimProduct(x.shape(), 0, ax), inner = DimProduct(x.shape(), ax + 1, x.shape().size());
  const int64_t in_row = x.shape()[ax] * inner;
  int64_t col = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape s = x.shape();
    s[ax] = sizes[i];
    const int64_t row = sizes[i] * inner;
    if (ctx.has_output(i)) {
      KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(i, x.dtype(), s));
      for (int64_t o = 0; o < outer; ++o) CopyElements(x, o * in_row + col, out, o * row, row);
    }
    col += row;
  }
  return Status::Ok();
}

// Slice: a view whose stride on each sliced axis is multiplied by its step
// (negative steps walk backwards from the clamped start).
Status Slice(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::SliceAttrs a, ops::ParseSlice(n, ctx.opset()));
  const Tensor& x = ctx.input(0);
  std::array<const Tensor*, 4> bounds{};
  for (size_t i = 1; i <= 4; ++i) bounds[i - 1] = ctx.has_input(i) ? &ctx.input(i) : nullptr;
  KILN_ASSIGN_OR_RETURN(ops::SliceSpec spec, ops::SliceSpecOf(n, ctx.opset(), a, bounds, x.rank()));
  const ops::SliceView v = ops::ViewOfSlice(spec, x);
  if (v.empty) return ctx.AllocOutput(0, x.dtype(), v.shape).status();
  return ctx.SetOutput(0, Datum(x.View(v.shape, v.strides, v.offset)));
}

Status Transpose(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::TransposeAttrs a, ops::ParseTranspose(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(auto perm, ops::TransposePerm(ctx.node(), a, x.rank()));
  return ctx.SetOutput(0, Datum(x.Permuted(perm)));
}

// Tile: out[i] = x[i mod dims] on every axis.
Status Tile(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> reps;
  if (ctx.opset() < 6) {
    // Tile-1: `tiles` copies along `axis` (both scalars).
    KILN_ASSIGN_OR_RETURN(auto tiles, OptionalInts(ctx, 1, "input 'tiles'"));
    KILN_ASSIGN_OR_RETURN(auto axis, OptionalInts(ctx, 2, "input 'axis'"));
    if (!tiles || !axis || tiles->size() != 1 || axis->size() != 1) return ctx.Error("inputs 'tiles' and 'axis' must be scalars");
    KILN_ASSIGN_OR_RETURN(int64_t ax, ops::NormalizeAxis(n, (*axis)[0], x.rank()));
    reps.assign(static_cast<size_t>(x.rank()), 1);
    reps[static_cast<size_t>(ax)] = (*tiles)[0];
  } else {
    KILN_ASSIGN_OR_RETURN(auto r, OptionalInts(ctx, 1, "input 'repeats'"));
    if (!r) return ctx.Error("input 'repeats' is required");
    reps = std::move(*r);
  }
  KILN_ASSIGN_OR_RETURN(Shape s, ops::TileShape(n, ir::DimsFromShape(x.shape()), reps));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), s));
  const std::vector<int64_t> st = ContiguousStrides(x.shape());
  return GatherByIndex(x, out, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t k = 0; k < idx.size(); ++k) off += (idx[k] % x.shape()[k]) * st[k];
    return off;
  });
}

}  // namespace

void RegisterDataMovementKernels(runtime::KernelRegistry& r) {
  r.Register("", "Concat", Concat);
  r.Register("", "Split", Split);
  r.Register("", "Slice", Slice);
  r.Register("", "Transpose", Transpose);
  r.Register("", "Tile", Tile);
  RegisterDataMovementMoreKernels(r);
}

}  // namespace kiln::reference
