// Pool ops: MaxPool, AveragePool, LpPool, the Global* forms and MaxUnpool.
// Attributes and shape inference; the window geometry is Conv's (conv.cc).
#include "ops/pool.h"

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

Result<PoolAttrs> ParsePool(const ir::Node& node, int64_t opset) {
  PoolAttrs a;
  KILN_ASSIGN_OR_RETURN(a.sp, ParseSpatial(node));
  KILN_ASSIGN_OR_RETURN(int64_t ceil_mode, node.GetInt("ceil_mode", 0));
  KILN_ASSIGN_OR_RETURN(int64_t cip, node.GetInt("count_include_pad", 0));
  KILN_ASSIGN_OR_RETURN(a.storage_order, node.GetInt("storage_order", 0));
  a.ceil_mode = ceil_mode != 0;
  a.count_include_pad = cip != 0;
  if (a.storage_order != 0 && a.storage_order != 1)
    return node.Invalid("storage_order " + std::to_string(a.storage_order) + " must be 0 or 1");
  // LpPool/GlobalLpPool opset 1 had a float p; opset 2 made it an int.
  const ir::Attribute* p = node.FindAttr("p");
  if (p && p->type == ir::Attribute::Type::kFloat) a.p = p->f;
  else if (p) {
    KILN_ASSIGN_OR_RETURN(int64_t pi, node.GetInt("p", 2));
    a.p = static_cast<double>(pi);
  }
  if (!(a.p > 0)) return node.Invalid("p " + std::to_string(a.p) + " must be positive");
  return a;
}

Result<std::vector<AxisGeometry>> PoolGeometry(const ir::Node& node, PoolAttrs& a, const std::vector<int64_t>& in_spatial) {
  if (a.sp.kernel_shape.empty()) return node.Invalid("attribute kernel_shape is required");
  KILN_RETURN_IF_ERROR(ResolveSpatial(node, a.sp, in_spatial.size()));
  std::vector<AxisGeometry> out;
  for (size_t i = 0; i < in_spatial.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(AxisGeometry g, ForwardAxis(node, a.sp, i, in_spatial[i], a.ceil_mode));
    // A pad as large as the dilated kernel makes windows of padding only,
    // with no value to take the max or mean of.
    const int64_t eff_k = (a.sp.kernel_shape[i] - 1) * a.sp.dilations[i] + 1;
    if (g.pad_begin >= eff_k || g.pad_end >= eff_k)
      return node.Invalid("pads must be smaller than the (dilated) kernel on axis " + std::to_string(i));
    out.push_back(g);
  }
  return out;
}

namespace {

const std::initializer_list<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};

// X [N,C,D1..Dn] -> rank n+2 with the batch and channel dims kept.
Result<const ir::Dims*> PoolInput(InferContext& ctx) {
  const ir::Dims* xd = ctx.input_dims(0);
  if (xd && xd->size() < 3) return ctx.Error("input X must have rank >= 3 (N, C, spatial...), got " + ir::DimsToString(*xd));
  return xd;
}

Status InferWindowPool(InferContext& ctx, bool is_max) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  if (is_max) {
    // MaxPool opset 12 added int8 and uint8.
    KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8, DType::kUint8}));
  } else {
    KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  }
  KILN_ASSIGN_OR_RETURN(PoolAttrs a, ParsePool(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(const ir::Dims* xd, PoolInput(ctx));
  const DType dt = ctx.input_dtype(0);
  std::optional<ir::Dims> out;
  if (!xd && !a.sp.kernel_shape.empty()) out = UnknownDims(a.sp.kernel_shape.size() + 2);
  if (xd) {
    std::vector<int64_t> in;
    for (size_t i = 2; i < xd->size(); ++i) in.push_back((*xd)[i].known() ? (*xd)[i].value : -1);
    KILN_ASSIGN_OR_RETURN(std::vector<AxisGeometry> geo, PoolGeometry(ctx.node(), a, in));
    out = ir::Dims{(*xd)[0], (*xd)[1]};
    for (size_t i = 0; i < geo.size(); ++i)
      out->push_back(geo[i].out >= 0 ? ir::Dim::Known(geo[i].out) : SymbolicWindowDim((*xd)[i + 2], a.sp, i, a.ceil_mode));
  } else if (a.sp.kernel_shape.empty()) {
    return ctx.Error("attribute kernel_shape is required");
  }
  ctx.set_output(0, dt, out);
  if (is_max && ctx.num_outputs() > 1) ctx.set_output(1, DType::kInt64, out);
  return Status::Ok();
}

Status InferMaxPool(InferContext& ctx) { return InferWindowPool(ctx, true); }
Status InferAveragePool(InferContext& ctx) { return InferWindowPool(ctx, false); }
Status InferLpPool(InferContext& ctx) { return InferWindowPool(ctx, false); }

// Global pools: [N,C,D1..Dn] -> [N,C,1..1].
Status InferGlobalPool(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  KILN_ASSIGN_OR_RETURN(PoolAttrs a, ParsePool(ctx.node(), ctx.opset()));
  (void)a;
  KILN_ASSIGN_OR_RETURN(const ir::Dims* xd, PoolInput(ctx));
  std::optional<ir::Dims> out;
  if (xd) {
    out = *xd;
    for (size_t i = 2; i < out->size(); ++i) (*out)[i] = ir::Dim::Known(1);
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::Ok();
}

// MaxUnpool (opset 9, 11): X and indices I of a MaxPool; the output shape is
// the optional input output_shape, else (in-1)*stride + kernel - pads.
Status InferMaxUnpool(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
  KILN_ASSIGN_OR_RETURN(PoolAttrs a, ParsePool(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(const ir::Dims* xd, PoolInput(ctx));
  const DType dt = ctx.input_dtype(0);
  if (a.sp.kernel_shape.empty()) return ctx.Error("attribute kernel_shape is required");
  const size_t rank = a.sp.kernel_shape.size() + 2;
  if (xd && xd->size() != rank)
    return ctx.Error("kernel_shape has " + std::to_string(rank - 2) + " values but X is " + ir::DimsToString(*xd));
  const ir::Dims* id = ctx.input_dims(1);
  if (xd && id && id->size() != xd->size()) return ctx.Error("indices I " + ir::DimsToString(*id) + " must have the shape of X");
  KILN_RETURN_IF_ERROR(ResolveSpatial(ctx.node(), a.sp, rank - 2));
  if (ctx.has_input(2)) {
    const ir::Dims* sd = ctx.input_dims(2);
    if (sd && (sd->size() != 1 || ((*sd)[0].known() && static_cast<size_t>((*sd)[0].value) != rank)))
      return ctx.Error("output_shape must be 1-D with " + std::to_string(rank) + " values");
    auto shape = ctx.input_ints(2);
    if (!shape) { ctx.set_output(0, dt, UnknownDims(rank)); return Status::Ok(); }
    if (shape->size() != rank) return ctx.Error("output_shape must have " + std::to_string(rank) + " values");
    for (int64_t v : *shape)
      if (v < 0) return ctx.Error("output_shape must not be negative");
    ctx.set_output(0, dt, Shape(*shape));
    return Status::Ok();
  }
  ir::Dims out = UnknownDims(rank);
  if (xd) {
    out[0] = (*xd)[0];
    out[1] = (*xd)[1];
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (!(*xd)[i + 2].known()) continue;
      KILN_ASSIGN_OR_RETURN(int64_t full, CheckedDim(ctx, (*xd)[i + 2].value - 1, a.sp.strides[i], a.sp.kernel_shape[i]));
      int64_t v = 0;
      if (__builtin_sub_overflow(full, a.sp.pads[i], &v) || __builtin_sub_overflow(v, a.sp.pads[i + rank - 2], &v))
        return ctx.Error("pads make spatial axis " + std::to_string(i) + " overflow int64");
      if (v < 0) return ctx.Error("pads make spatial axis " + std::to_string(i) + " negative");
      out[i + 2] = ir::Dim::Known(v);
    }
  }
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

}  // namespace

void RegisterPoolOps(OpRegistry& r) {
  r.Register({"", "MaxPool", 1, 1000, InferMaxPool});
  r.Register({"", "AveragePool", 1, 1000, InferAveragePool});
  r.Register({"", "LpPool", 1, 1000, InferLpPool});
  r.Register({"", "GlobalMaxPool", 1, 1000, InferGlobalPool});
  r.Register({"", "GlobalAveragePool", 1, 1000, InferGlobalPool});
  r.Register({"", "GlobalLpPool", 1, 1000, InferGlobalPool});
  r.Register({"", "MaxUnpool", 9, 1000, InferMaxUnpool});
}

}  // namespace kiln::ops
