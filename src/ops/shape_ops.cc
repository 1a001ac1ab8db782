// Shape-only ops: Identity, Reshape, Flatten, Squeeze, Unsqueeze, Shape,
// Size, Expand. Their output shapes feed the Shape->Gather->Concat->Reshape
// chains of models with dynamic dims, so inference is exact whenever the
// values it needs are known and keeps symbolic dims where it can.
#include "ops/shape_ops.h"

#include <algorithm>
#include <set>

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

Result<std::vector<int64_t>> TensorInts(const ir::Node& node, const Tensor& t, const char* what) {
  if (!DTypeIsSignedInt(t.dtype()) && !DTypeIsUnsignedInt(t.dtype()))
    return node.Invalid(std::string(what) + " must be an integer tensor, got " + t.Describe());
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    const Tensor c = t.Contiguous();
    const int64_t* p = c.data<int64_t>();
    for (size_t k = 0; k < out.size(); ++k) out[k] = p[k];
  } else {
    for (size_t k = 0; k < out.size(); ++k) out[k] = static_cast<int64_t>(t.GetAsDouble(static_cast<int64_t>(k)));
  }
  return out;
}

namespace {

// a*b with an error instead of overflow (dims come from models).
Result<int64_t> MulDims(const ir::Node& node, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return node.Invalid("element count overflows int64");
  return r;
}

// Product of dims[begin, end): unknown when some dim is unknown (and none is 0).
Result<ir::Dim> DimsProduct(const ir::Node& node, const ir::Dims& d, size_t begin, size_t end) {
  int64_t p = 1;
  bool unknown = false;
  for (size_t k = begin; k < end; ++k) {
    if (!d[k].known()) { unknown = true; continue; }
    if (d[k].value == 0) return ir::Dim::Known(0);
    KILN_ASSIGN_OR_RETURN(p, MulDims(node, p, d[k].value));
  }
  if (unknown) return ir::Dim{};
  return ir::Dim::Known(p);
}

// Integer vector from input i when its value is known.
Result<std::optional<std::vector<int64_t>>> KnownInts(const InferContext& ctx, size_t i, const char* what) {
  const Tensor* t = ctx.input_value(i);
  if (!t || !t->defined()) return std::optional<std::vector<int64_t>>();
  KILN_ASSIGN_OR_RETURN(auto v, TensorInts(ctx.node(), *t, what));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

// Length of a 1-D input whose value is unknown, when its dims say it.
std::optional<int64_t> Known1DLength(const InferContext& ctx, size_t i) {
  const ir::Dims* d = ctx.input_dims(i);
  if (!d || d->size() != 1 || !(*d)[0].known()) return std::nullopt;
  return (*d)[0].value;
}

Status InferIdentity(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

Status InferReshape(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ReshapeAttrs a, ParseReshape(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, a.shape ? 1 : 2));
  const DType dt = ctx.input_dtype(0);
  std::optional<std::vector<int64_t>> shape = a.shape;
  if (!shape) {
    KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
    KILN_ASSIGN_OR_RETURN(shape, KnownInts(ctx, 1, "input 'shape'"));
  }
  if (!shape) {
    auto n = Known1DLength(ctx, 1);
    if (n) ctx.set_output(0, dt, UnknownDims(static_cast<size_t>(*n)));
    else ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    // Rank of the input unknown: the explicit dims are still exact.
    ir::Dims out;
    for (int64_t v : *shape) out.push_back(v > 0 || (v == 0 && a.allowzero) ? ir::Dim::Known(v) : ir::Dim{});
    ctx.set_output(0, dt, out);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(ir::Dims out, ReshapeDims(ctx.node(), *in, *shape, a.allowzero));
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

Status InferFlatten(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_ASSIGN_OR_RETURN(FlattenAttrs a, ParseFlatten(ctx.node(), ctx.opset()));
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    ctx.set_output(0, ctx.input_dtype(0), UnknownDims(2));
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(ir::Dims out, FlattenDims(ctx.node(), *in, a.axis, ctx.opset()));
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::Ok();
}

Status InferSqueeze(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(AxesAttrs a, ParseSqueeze(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, ctx.opset() >= 13 ? 2 : 1));
  const DType dt = ctx.input_dtype(0);
  std::optional<std::vector<int64_t>> axes = a.axes;
  if (ctx.opset() >= 13 && ctx.has_input(1)) {
    KILN_ASSIGN_OR_RETURN(axes, KnownInts(ctx, 1, "input 'axes'"));
    if (!axes) {
      // Axes unknown until run time: only the rank may be known.
      const ir::Dims* in = ctx.input_dims(0);
      auto n = Known1DLength(ctx, 1);
      if (in && n && *n <= static_cast<int64_t>(in->size())) ctx.set_output(0, dt, UnknownDims(in->size() - static_cast<size_t>(*n)));
      else ctx.set_output(0, dt, std::nullopt);
      return Status::Ok();
    }
  }
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(auto out, SqueezeDims(ctx.node(), *in, axes));
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

Status InferUnsqueeze(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(AxesAttrs a, ParseUnsqueeze(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(ctx.opset() >= 13 ? 2 : 1, ctx.opset() >= 13 ? 2 : 1));
  const DType dt = ctx.input_dtype(0);
  std::optional<std::vector<int64_t>> axes = a.axes;
  const ir::Dims* in = ctx.input_dims(0);
  if (ctx.opset() >= 13) {
    KILN_ASSIGN_OR_RETURN(axes, KnownInts(ctx, 1, "input 'axes'"));
    if (!axes) {
      auto n = Known1DLength(ctx, 1);
      if (in && n) ctx.set_output(0, dt, UnknownDims(in->size() + static_cast<size_t>(*n)));
      else ctx.set_output(0, dt, std::nullopt);
      return Status::Ok();
    }
  }
  if (!axes) return ctx.Error("attribute 'axes' is required");
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(ir::Dims out, UnsqueezeDims(ctx.node(), *in, *axes));
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

Status InferShape(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_ASSIGN_OR_RETURN(ShapeAttrs a, ParseShape(ctx.node(), ctx.opset()));
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    ctx.set_output(0, DType::kInt64, UnknownDims(1));
    return Status::Ok();
  }
  auto [b, e] = ShapeRange(a, static_cast<int64_t>(in->size()));
  ctx.set_output(0, DType::kInt64, Shape{e - b});
  return Status::Ok();
}

Status InferSize(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  ctx.set_output(0, DType::kInt64, Shape{});
  return Status::Ok();
}

Status InferExpand(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
  const DType dt = ctx.input_dtype(0);
  const ir::Dims* in = ctx.input_dims(0);
  if (const ir::Dims* sd = ctx.input_dims(1); sd && sd->size() != 1)
    return ctx.Error("input 'shape' must be 1-D, got rank " + std::to_string(sd->size()));
  KILN_ASSIGN_OR_RETURN(auto shape, KnownInts(ctx, 1, "input 'shape'"));
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  if (!shape) {
    // Unknown target: a known input dim other than 1 survives any valid broadcast.
    auto n = Known1DLength(ctx, 1);
    if (!n) {
      ctx.set_output(0, dt, std::nullopt);
      return Status::Ok();
    }
    auto b = BroadcastDims(*in, UnknownDims(static_cast<size_t>(*n)));
    if (!b.ok()) return ctx.Error(b.status().message());
    ctx.set_output(0, dt, *b);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(ir::Dims out, ExpandDims(ctx.node(), *in, *shape));
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

}  // namespace

Result<ReshapeAttrs> ParseReshape(const ir::Node& node, int64_t opset) {
  ReshapeAttrs a;
  if (opset >= 14) {
    KILN_ASSIGN_OR_RETURN(int64_t z, node.GetInt("allowzero", 0));
    a.allowzero = z != 0;
  }
  if (opset < 5) {
    // Reshape-1: the target shape is an attribute.
    if (!node.FindAttr("shape")) return node.Invalid("attribute 'shape' is required before opset 5");
    KILN_ASSIGN_OR_RETURN(auto s, node.GetInts("shape"));
    a.shape = std::move(s);
  }
  return a;
}

Result<ir::Dims> ReshapeDims(const ir::Node& node, const ir::Dims& in, const std::vector<int64_t>& shape, bool allowzero) {
  ir::Dims out(shape.size());
  std::vector<bool> copied(shape.size(), false);
  int64_t infer = -1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t v = shape[i];
    if (v == -1) {
      if (infer >= 0) return node.Invalid("shape " + ShapeToString(shape) + " has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (v < -1) {
      return node.Invalid("shape " + ShapeToString(shape) + " has invalid dim " + std::to_string(v));
    } else if (v == 0 && !allowzero) {
      if (i >= in.size())
        return node.Invalid("shape " + ShapeToString(shape) + " copies dim " + std::to_string(i) + " (0) of an input of rank " +
                            std::to_string(in.size()));
      out[i] = in[i];
      copied[i] = true;
    } else {
      out[i] = ir::Dim::Known(v);
      has_zero = has_zero || v == 0;
    }
  }
  if (allowzero && has_zero && infer >= 0)
    return node.Invalid("shape " + ShapeToString(shape) + " has both 0 and -1 with allowzero=1");

  KILN_ASSIGN_OR_RETURN(ir::Dim in_count, DimsProduct(node, in, 0, in.size()));
  if (infer < 0) {
    KILN_ASSIGN_OR_RETURN(ir::Dim out_count, DimsProduct(node, out, 0, out.size()));
    if (in_count.known() && out_count.known() && in_count.value != out_count.value)
      return node.Invalid("cannot reshape " + ir::DimsToString(in) + " to " + ShapeToString(shape));
    return out;
  }
  // -1: the element count of the input over that of the other output dims.
  // Unknown dims must cancel: a copied dim (0) or the same symbol on both sides.
  std::vector<bool> in_used(in.size(), false);
  int64_t known_in = 1, known_out = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k].known()) {
      KILN_ASSIGN_OR_RETURN(known_in, MulDims(node, known_in, in[k].value));
    }
  }
  bool cancel = true;
  for (size_t j = 0; j < out.size(); ++j) {
    if (static_cast<int64_t>(j) == infer) continue;
    if (out[j].known()) {
      KILN_ASSIGN_OR_RETURN(known_out, MulDims(node, known_out, out[j].value));
      continue;
    }
    if (copied[j] && !in_used[j]) {
      in_used[j] = true;
      continue;
    }
    bool found = false;
    for (size_t k = 0; k < in.size() && !found; ++k) {
      if (!in_used[k] && !in[k].known() && !in[k].param.empty() && in[k].param == out[j].param) {
        in_used[k] = true;
        found = true;
      }
    }
    if (!found) cancel = false;
  }
  for (size_t k = 0; k < in.size(); ++k)
    if (!in[k].known() && !in_used[k]) cancel = false;
  if (!cancel) return out;  // out[infer] stays unknown
  if (known_out == 0) return node.Invalid("cannot infer the -1 of shape " + ShapeToString(shape) + " for input " + ir::DimsToString(in) + ": the other dims have no elements");
  if (known_in % known_out != 0)
    return node.Invalid("cannot reshape " + ir::DimsToString(in) + " to " + ShapeToString(shape));
  out[static_cast<size_t>(infer)] = ir::Dim::Known(known_in / known_out);
  return out;
}

Result<FlattenAttrs> ParseFlatten(const ir::Node& node, int64_t) {
  FlattenAttrs a;
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 1));
  return a;
}

Result<ir::Dims> FlattenDims(const ir::Node& node, const ir::Dims& in, int64_t axis, int64_t opset) {
  const int64_t r = static_cast<int64_t>(in.size());
  // Negative axes are allowed from opset 11; axis == rank is valid (output [N, 1]).
  const int64_t lo = opset >= 11 ? -r : 0;
  if (axis < lo || axis > r)
    return node.Invalid("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  KILN_ASSIGN_OR_RETURN(ir::Dim a, DimsProduct(node, in, 0, static_cast<size_t>(axis)));
  KILN_ASSIGN_OR_RETURN(ir::Dim b, DimsProduct(node, in, static_cast<size_t>(axis), in.size()));
  // A single dim keeps its symbol ([N,3,4] axis 1 -> [N,12]).
  if (axis == 1 && !in[0].known()) a = in[0];
  if (axis == r - 1 && !in[static_cast<size_t>(axis)].known()) b = in[static_cast<size_t>(axis)];
  return ir::Dims{a, b};
}

namespace {
Result<AxesAttrs> ParseAxesAttr(const ir::Node& node, int64_t opset) {
  AxesAttrs a;
  if (opset < 13 && node.FindAttr("axes")) {
    KILN_ASSIGN_OR_RETURN(auto v, node.GetInts("axes"));
    a.axes = std::move(v);
  }
  return a;
}

// Normalized, duplicate-free axes against `rank`.
Result<std::vector<int64_t>> NormalizeAxes(const ir::Node& node, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t ax : axes) {
    KILN_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, ax, rank));
    if (!seen.insert(n).second) return node.Invalid("axis " + std::to_string(ax) + " is repeated in axes");
    out.push_back(n);
  }
  return out;
}
}  // namespace

Result<AxesAttrs> ParseSqueeze(const ir::Node& node, int64_t opset) { return ParseAxesAttr(node, opset); }
Result<AxesAttrs> ParseUnsqueeze(const ir::Node& node, int64_t opset) { return ParseAxesAttr(node, opset); }

Result<std::optional<ir::Dims>> SqueezeDims(const ir::Node& node, const ir::Dims& in,
                                            const std::optional<std::vector<int64_t>>& axes) {
  ir::Dims out;
  if (!axes) {
    for (const ir::Dim& d : in) {
      if (!d.known()) return std::optional<ir::Dims>();  // might be 1
      if (d.value != 1) out.push_back(d);
    }
    return std::optional<ir::Dims>(out);
  }
  KILN_ASSIGN_OR_RETURN(auto norm, NormalizeAxes(node, *axes, static_cast<int64_t>(in.size())));
  std::vector<bool> drop(in.size(), false);
  for (int64_t ax : norm) {
    const ir::Dim& d = in[static_cast<size_t>(ax)];
    if (d.known() && d.value != 1)
      return node.Invalid("cannot squeeze axis " + std::to_string(ax) + " of size " + std::to_string(d.value) + " (input " +
                          ir::DimsToString(in) + ")");
    drop[static_cast<size_t>(ax)] = true;
  }
  for (size_t k = 0; k < in.size(); ++k)
    if (!drop[k]) out.push_back(in[k]);
  return std::optional<ir::Dims>(out);
}

Result<ir::Dims> UnsqueezeDims(const ir::Node& node, const ir::Dims& in, const std::vector<int64_t>& axes) {
  const int64_t out_rank = static_cast<int64_t>(in.size() + axes.size());
  KILN_ASSIGN_OR_RETURN(auto norm, NormalizeAxes(node, axes, out_rank));
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t ax : norm) inserted[static_cast<size_t>(ax)] = true;
  ir::Dims out;
  size_t src = 0;
  for (int64_t k = 0; k < out_rank; ++k) out.push_back(inserted[static_cast<size_t>(k)] ? ir::Dim::Known(1) : in[src++]);
  return out;
}

Result<ShapeAttrs> ParseShape(const ir::Node& node, int64_t opset) {
  ShapeAttrs a;
  if (opset >= 15) {
    KILN_ASSIGN_OR_RETURN(a.start, node.GetInt("start", 0));
    if (node.FindAttr("end")) {
      KILN_ASSIGN_OR_RETURN(int64_t e, node.GetInt("end", 0));
      a.end = e;
    }
  }
  return a;
}

std::pair<int64_t, int64_t> ShapeRange(const ShapeAttrs& a, int64_t rank) {
  // Opset 15: negative start/end count from the back; both clamp to [0, rank].
  auto clamp = [rank](int64_t v) {
    if (v < 0) v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  const int64_t b = clamp(a.start);
  const int64_t e = a.end ? clamp(*a.end) : rank;
  return {b, std::max(b, e)};
}

Result<ir::Dims> ExpandDims(const ir::Node& node, const ir::Dims& in, const std::vector<int64_t>& shape) {
  for (int64_t v : shape)
    if (v < 0) return node.Invalid("shape " + ShapeToString(shape) + " has a negative dim");
  auto b = BroadcastDims(in, ir::DimsFromShape(shape));
  if (!b.ok()) return node.Invalid("cannot expand " + ir::DimsToString(in) + " to " + ShapeToString(shape) + ": " + b.status().message());
  return std::move(b).value();
}

void RegisterShapeOps(OpRegistry& r) {
  r.Register({"", "Identity", 1, 1000, InferIdentity});
  r.Register({"", "Reshape", 1, 1000, InferReshape});
  r.Register({"", "Flatten", 1, 1000, InferFlatten});
  r.Register({"", "Squeeze", 1, 1000, InferSqueeze});
  r.Register({"", "Unsqueeze", 1, 1000, InferUnsqueeze});
  r.Register({"", "Shape", 1, 1000, InferShape});
  r.Register({"", "Size", 1, 1000, InferSize});
  r.Register({"", "Expand", 8, 1000, InferExpand});
}

}  // namespace kiln::ops
