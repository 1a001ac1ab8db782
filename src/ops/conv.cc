// Conv family: Conv, ConvTranspose, ConvInteger, QLinearConv. Attributes,
// the window geometry shared with the pools (pool.cc), and shape inference.
#include "ops/conv.h"

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {
namespace {

std::string JoinInts(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

Result<SpatialAttrs> ParseSpatial(const ir::Node& node) {
  SpatialAttrs a;
  KILN_ASSIGN_OR_RETURN(std::string ap, node.GetString("auto_pad", "NOTSET"));
  if (ap == "NOTSET" || ap.empty()) a.auto_pad = AutoPad::kNotSet;
  else if (ap == "SAME_UPPER") a.auto_pad = AutoPad::kSameUpper;
  else if (ap == "SAME_LOWER") a.auto_pad = AutoPad::kSameLower;
  else if (ap == "VALID") a.auto_pad = AutoPad::kValid;
  else return node.Invalid("unknown auto_pad '" + ap + "'");
  KILN_ASSIGN_OR_RETURN(a.kernel_shape, node.GetInts("kernel_shape"));
  KILN_ASSIGN_OR_RETURN(a.strides, node.GetInts("strides"));
  KILN_ASSIGN_OR_RETURN(a.dilations, node.GetInts("dilations"));
  KILN_ASSIGN_OR_RETURN(a.pads, node.GetInts("pads"));
  return a;
}

Status ResolveSpatial(const ir::Node& node, SpatialAttrs& a, size_t n) {
  if (a.kernel_shape.size() != n)
    return node.Invalid("kernel_shape " + JoinInts(a.kernel_shape) + " must have " + std::to_string(n) + " values");
  if (a.strides.empty()) a.strides.assign(n, 1);
  if (a.dilations.empty()) a.dilations.assign(n, 1);
  // auto_pad other than NOTSET computes the pads; explicit ones are ignored.
  if (a.pads.empty() || a.auto_pad != AutoPad::kNotSet) a.pads.assign(2 * n, 0);
  if (a.strides.size() != n) return node.Invalid("strides " + JoinInts(a.strides) + " must have " + std::to_string(n) + " values");
  if (a.dilations.size() != n)
    return node.Invalid("dilations " + JoinInts(a.dilations) + " must have " + std::to_string(n) + " values");
  if (a.pads.size() != 2 * n) return node.Invalid("pads " + JoinInts(a.pads) + " must have " + std::to_string(2 * n) + " values");
  for (size_t i = 0; i < n; ++i) {
    if (a.kernel_shape[i] < 1) return node.Invalid("kernel_shape " + JoinInts(a.kernel_shape) + " must be positive");
    if (a.strides[i] < 1) return node.Invalid("strides " + JoinInts(a.strides) + " must be positive");
    if (a.dilations[i] < 1) return node.Invalid("dilations " + JoinInts(a.dilations) + " must be positive");
  }
  for (int64_t p : a.pads)
    if (p < 0) return node.Invalid("pads " + JoinInts(a.pads) + " must not be negative");
  return Status::Ok();
}

Result<AxisGeometry> ForwardAxis(const ir::Node& node, const SpatialAttrs& a, size_t axis, int64_t in, bool ceil_mode) {
  const size_t n = a.kernel_shape.size();
  const int64_t s = a.strides[axis];
  const int64_t eff_k = (a.kernel_shape[axis] - 1) * a.dilations[axis] + 1;
  AxisGeometry g;
  if (a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower) {
    if (in < 0) { g.pad_begin = g.pad_end = -1; return g; }
    g.out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (g.out - 1) * s + eff_k - in);
    // SAME_UPPER puts the odd extra pad at the end, SAME_LOWER at the beginning.
    g.pad_begin = a.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
    g.pad_end = total - g.pad_begin;
    return g;
  }
  if (a.auto_pad == AutoPad::kNotSet) {
    g.pad_begin = a.pads[axis];
    g.pad_end = a.pads[axis + n];
  }
  if (in < 0) return g;
  const int64_t span = in + g.pad_begin + g.pad_end - eff_k;
  if (span < 0)
    return node.Invalid("spatial axis " + std::to_string(axis) + ": input size " + std::to_string(in) + " with pads " +
                        std::to_string(g.pad_begin) + "+" + std::to_string(g.pad_end) + " is smaller than the dilated kernel " +
                        std::to_string(eff_k));
  if (!ceil_mode) {
    g.out = span / s + 1;
  } else {
    g.out = (span + s - 1) / s + 1;
    if ((g.out - 1) * s >= in + g.pad_begin) --g.out;
  }
  return g;
}

ir::Dim SymbolicWindowDim(const ir::Dim& in, const SpatialAttrs& a, size_t axis, bool ceil_mode) {
  if (in.known() || in.param.empty()) return ir::Dim{};
  const size_t n = a.kernel_shape.size();
  const int64_t s = a.strides[axis];
  if (a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower) {
    if (s == 1) return in;  // ceil(P / 1)
    ir::Dim d;
    d.param = "ceil(" + in.param + "/" + std::to_string(s) + ")";
    return d;
  }
  // out = floor((P + c) / s) + 1 with c = pads - dilated kernel.
  const int64_t eff_k = (a.kernel_shape[axis] - 1) * a.dilations[axis] + 1;
  const int64_t pads = a.auto_pad == AutoPad::kNotSet ? a.pads[axis] + a.pads[axis + n] : 0;
  const int64_t c = pads - eff_k;
  if (s == 1 && c == -1) return in;
  if (ceil_mode && s > 1) return ir::Dim{};
  ir::Dim d;
  d.param = "floor((" + in.param + (c < 0 ? "" : "+") + std::to_string(c) + ")/" + std::to_string(s) + ")+1";
  return d;
}

Result<std::vector<AxisGeometry>> ForwardGeometry(const ir::Node& node, const SpatialAttrs& a,
                                                  const std::vector<int64_t>& in_spatial, bool ceil_mode) {
  std::vector<AxisGeometry> out;
  for (size_t i = 0; i < in_spatial.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(AxisGeometry g, ForwardAxis(node, a, i, in_spatial[i], ceil_mode));
    out.push_back(g);
  }
  return out;
}

Result<ConvAttrs> ParseConv(const ir::Node& node, int64_t opset) {
  ConvAttrs a;
  KILN_ASSIGN_OR_RETURN(a.sp, ParseSpatial(node));
  KILN_ASSIGN_OR_RETURN(a.group, node.GetInt("group", 1));
  if (a.group < 1) return node.Invalid("group " + std::to_string(a.group) + " must be positive");
  return a;
}

Result<ConvTransposeAttrs> ParseConvTranspose(const ir::Node& node, int64_t opset) {
  ConvTransposeAttrs a;
  KILN_ASSIGN_OR_RETURN(a.sp, ParseSpatial(node));
  KILN_ASSIGN_OR_RETURN(a.group, node.GetInt("group", 1));
  if (a.group < 1) return node.Invalid("group " + std::to_string(a.group) + " must be positive");
  KILN_ASSIGN_OR_RETURN(a.output_padding, node.GetInts("output_padding"));
  KILN_ASSIGN_OR_RETURN(a.output_shape, node.GetInts("output_shape"));
  return a;
}

Result<AxisGeometry> TransposeAxis(const ir::Node& node, const ConvTransposeAttrs& a, size_t axis, int64_t in) {
  const size_t n = a.sp.kernel_shape.size();
  const int64_t s = a.sp.strides[axis];
  const int64_t eff_k = (a.sp.kernel_shape[axis] - 1) * a.sp.dilations[axis] + 1;
  const int64_t op = a.output_padding.empty() ? 0 : a.output_padding[axis];
  AxisGeometry g;
  const bool same = a.sp.auto_pad == AutoPad::kSameUpper || a.sp.auto_pad == AutoPad::kSameLower;
  if (!a.output_shape.empty() || same) {
    // The output size is given: output_shape (spatial dims; some exporters
    // write the full shape), or in * stride for SAME_*.
    int64_t target = -1;
    if (!a.output_shape.empty()) target = a.output_shape.size() == n ? a.output_shape[axis] : a.output_shape[axis + 2];
    else if (in >= 0) target = in * s;
    if (target < 0 && !a.output_shape.empty())
      return node.Invalid("output_shape " + JoinInts(a.output_shape) + " must not be negative");
    g.out = target;
    if (in < 0) { g.pad_begin = g.pad_end = -1; return g; }
    // Opset 11 spec: total_padding = stride*(in-1) + output_padding + eff_k - out;
    // SAME_UPPER: begin = total/2, otherwise begin = total - total/2. The
    // division floors (a larger output_shape makes total negative: the extra
    // cells go at the end, as the backend test convtranspose_output_shape shows).
    const int64_t total = s * (in - 1) + op + eff_k - target;
    if (a.sp.auto_pad == AutoPad::kSameUpper) {
      g.pad_begin = FloorDiv(total, 2);
      g.pad_end = total - g.pad_begin;
    } else {
      g.pad_end = FloorDiv(total, 2);
      g.pad_begin = total - g.pad_end;
    }
    return g;
  }
  if (a.sp.auto_pad == AutoPad::kNotSet) {
    g.pad_begin = a.sp.pads[axis];
    g.pad_end = a.sp.pads[axis + n];
  }
  if (in < 0) return g;
  g.out = s * (in - 1) + op + eff_k - g.pad_begin - g.pad_end;
  if (g.out < 0)
    return node.Invalid("spatial axis " + std::to_string(axis) + ": pads " + std::to_string(g.pad_begin) + "+" +
                        std::to_string(g.pad_end) + " crop more than the whole output");
  return g;
}

namespace {

int64_t DimOr(const ir::Dims* d, size_t i) { return d && i < d->size() && (*d)[i].known() ? (*d)[i].value : -1; }

// Shared inference of Conv, ConvInteger and QLinearConv: X [N,C,D1..Dn],
// W [M,C/group,k1..kn] -> [N,M,O1..On].
Status InferForwardConv(InferContext& ctx, size_t x_idx, size_t w_idx, DType out_dtype) {
  KILN_ASSIGN_OR_RETURN(ConvAttrs a, ParseConv(ctx.node(), ctx.opset()));
  const ir::Dims* xd = ctx.input_dims(x_idx);
  const ir::Dims* wd = ctx.input_dims(w_idx);
  size_t rank = xd ? xd->size() : wd ? wd->size() : 0;
  if (rank == 0 && !a.sp.kernel_shape.empty()) rank = a.sp.kernel_shape.size() + 2;
  if (rank == 0) { ctx.set_output(0, out_dtype, std::nullopt); return Status::Ok(); }
  if (rank < 3) return ctx.Error("input X must have rank >= 3 (N, C, spatial...), got rank " + std::to_string(rank));
  if (xd && wd && xd->size() != wd->size())
    return ctx.Error("X has rank " + std::to_string(xd->size()) + " but W has rank " + std::to_string(wd->size()));
  const size_t n = rank - 2;
  const int64_t c = DimOr(xd, 1), wc = DimOr(wd, 1), m = DimOr(wd, 0);
  if (c >= 0 && wc >= 0 && c != wc * a.group)
    return ctx.Error("X has " + std::to_string(c) + " channels but W expects " + std::to_string(wc) + " x group " +
                     std::to_string(a.group));
  if (m >= 0 && m % a.group != 0)
    return ctx.Error("W has " + std::to_string(m) + " output channels, not a multiple of group " + std::to_string(a.group));
  if (a.sp.kernel_shape.empty()) {
    for (size_t i = 0; i < n; ++i) a.sp.kernel_shape.push_back(DimOr(wd, i + 2));
  } else if (a.sp.kernel_shape.size() == n) {
    for (size_t i = 0; i < n; ++i) {
      int64_t k = DimOr(wd, i + 2);
      if (k >= 0 && k != a.sp.kernel_shape[i])
        return ctx.Error("kernel_shape " + JoinInts(a.sp.kernel_shape) + " disagrees with W " + ir::DimsToString(*wd));
    }
  }
  ir::Dims out(rank);
  if (xd) out[0] = (*xd)[0];
  if (wd) out[1] = (*wd)[0];
  const bool kernel_known = std::all_of(a.sp.kernel_shape.begin(), a.sp.kernel_shape.end(), [](int64_t k) { return k >= 0; });
  if (kernel_known) {
    KILN_RETURN_IF_ERROR(ResolveSpatial(ctx.node(), a.sp, n));
    for (size_t i = 0; i < n; ++i) {
      KILN_ASSIGN_OR_RETURN(AxisGeometry g, ForwardAxis(ctx.node(), a.sp, i, DimOr(xd, i + 2), false));
      if (g.out >= 0) {
        out[i + 2] = ir::Dim::Known(g.out);
      } else if (xd && i + 2 < xd->size()) {
        out[i + 2] = SymbolicWindowDim((*xd)[i + 2], a.sp, i, false);
      }
    }
  }
  ctx.set_output(0, out_dtype, out);
  return Status::Ok();
}

Status InferConv(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}));
  if (ctx.has_input(2)) {
    const ir::Dims* b = ctx.input_dims(2);
    const ir::Dims* wd = ctx.input_dims(1);
    if (b && b->size() != 1) return ctx.Error("bias B must be 1-D, got " + ir::DimsToString(*b));
    if (b && wd && (*b)[0].known() && (*wd)[0].known() && (*b)[0].value != (*wd)[0].value)
      return ctx.Error("bias B has " + std::to_string((*b)[0].value) + " values, W has " + std::to_string((*wd)[0].value) +
                       " output channels");
  }
  return InferForwardConv(ctx, 0, 1, ctx.input_dtype(0));
}

Status InferConvInteger(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 4));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kUint8, DType::kInt8}));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kUint8, DType::kInt8}));
  return InferForwardConv(ctx, 0, 1, DType::kInt32);
}

Status InferQLinearConv(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(8, 9));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kUint8, DType::kInt8}));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 3, {DType::kUint8, DType::kInt8}));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 7, {DType::kUint8, DType::kInt8}));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 8, {DType::kInt32}));
  DType out = ctx.input_dtype(7) != DType::kUndefined ? ctx.input_dtype(7) : ctx.input_dtype(0);
  return InferForwardConv(ctx, 0, 3, out);
}

// X [N,C,D1..Dn], W [C,M/group,k1..kn] -> [N,M,O1..On].
Status InferConvTranspose(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}));
  KILN_ASSIGN_OR_RETURN(ConvTransposeAttrs a, ParseConvTranspose(ctx.node(), ctx.opset()));
  const DType dt = ctx.input_dtype(0);
  const ir::Dims* xd = ctx.input_dims(0);
  const ir::Dims* wd = ctx.input_dims(1);
  size_t rank = xd ? xd->size() : wd ? wd->size() : 0;
  if (rank == 0) { ctx.set_output(0, dt, std::nullopt); return Status::Ok(); }
  if (rank < 3) return ctx.Error("input X must have rank >= 3 (N, C, spatial...), got rank " + std::to_string(rank));
  if (xd && wd && xd->size() != wd->size())
    return ctx.Error("X has rank " + std::to_string(xd->size()) + " but W has rank " + std::to_string(wd->size()));
  const size_t n = rank - 2;
  const int64_t c = DimOr(xd, 1), wc = DimOr(wd, 0), wm = DimOr(wd, 1);
  if (c >= 0 && wc >= 0 && c != wc) return ctx.Error("X has " + std::to_string(c) + " channels but W has " + std::to_string(wc));
  if (c >= 0 && c % a.group != 0)
    return ctx.Error("X has " + std::to_string(c) + " channels, not a multiple of group " + std::to_string(a.group));
  if (!a.output_padding.empty() && a.output_padding.size() != n)
    return ctx.Error("output_padding " + JoinInts(a.output_padding) + " must have " + std::to_string(n) + " values");
  if (!a.output_shape.empty() && a.output_shape.size() != n && a.output_shape.size() != n + 2)
    return ctx.Error("output_shape " + JoinInts(a.output_shape) + " must have " + std::to_string(n) + " values");
  if (ctx.has_input(2)) {
    const ir::Dims* b = ctx.input_dims(2);
    if (b && b->size() != 1) return ctx.Error("bias B must be 1-D, got " + ir::DimsToString(*b));
    if (b && wm >= 0 && (*b)[0].known() && (*b)[0].value != wm * a.group)
      return ctx.Error("bias B has " + std::to_string((*b)[0].value) + " values, expected " + std::to_string(wm * a.group));
  }
  if (a.sp.kernel_shape.empty()) {
    for (size_t i = 0; i < n; ++i) a.sp.kernel_shape.push_back(DimOr(wd, i + 2));
  }
  ir::Dims out(rank);
  if (xd) out[0] = (*xd)[0];
  if (wm >= 0) out[1] = ir::Dim::Known(wm * a.group);
  const bool kernel_known = std::all_of(a.sp.kernel_shape.begin(), a.sp.kernel_shape.end(), [](int64_t k) { return k >= 0; });
  if (kernel_known) {
    KILN_RETURN_IF_ERROR(ResolveSpatial(ctx.node(), a.sp, n));
    for (size_t i = 0; i < n; ++i) {
      if (!a.output_padding.empty() && (a.output_padding[i] < 0 || a.output_padding[i] >= std::max(a.sp.strides[i], a.sp.dilations[i])))
        return ctx.Error("output_padding " + JoinInts(a.output_padding) + " must be in [0, max(stride, dilation))");
      KILN_ASSIGN_OR_RETURN(AxisGeometry g, TransposeAxis(ctx.node(), a, i, DimOr(xd, i + 2)));
      if (g.out >= 0) out[i + 2] = ir::Dim::Known(g.out);
    }
  }
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

}  // namespace

void RegisterConvOps(OpRegistry& r) {
  r.Register({"", "Conv", 1, 1000, InferConv});
  r.Register({"", "ConvTranspose", 1, 1000, InferConvTranspose});
  r.Register({"", "ConvInteger", 10, 1000, InferConvInteger});
  r.Register({"", "QLinearConv", 10, 1000, InferQLinearConv});
}

}  // namespace kiln::ops
