// Reduction family: attributes and shape inference of Reduce*, ArgMax/ArgMin,
// TopK, Softmax/LogSoftmax/Hardmax and CumSum.
#include "ops/reduction.h"

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

std::optional<ReduceKind> ReduceKindOf(const std::string& op) {
  static const std::pair<const char*, ReduceKind> kNames[] = {
      {"ReduceSum", ReduceKind::kSum},       {"ReduceMean", ReduceKind::kMean},
      {"ReduceMax", ReduceKind::kMax},       {"ReduceMin", ReduceKind::kMin},
      {"ReduceProd", ReduceKind::kProd},     {"ReduceL1", ReduceKind::kL1},
      {"ReduceL2", ReduceKind::kL2},         {"ReduceLogSum", ReduceKind::kLogSum},
      {"ReduceLogSumExp", ReduceKind::kLogSumExp}, {"ReduceSumSquare", ReduceKind::kSumSquare}};
  for (const auto& [n, k] : kNames)
    if (op == n) return k;
  return std::nullopt;
}

int64_t ReduceAxesInputOpset(ReduceKind kind) { return kind == ReduceKind::kSum ? 13 : 18; }

Result<ReduceAttrs> ParseReduce(const ir::Node& node, int64_t opset) {
  ReduceAttrs a;
  auto kind = ReduceKindOf(node.op_type);
  if (!kind) return node.Invalid("is not a Reduce* op");
  a.kind = *kind;
  KILN_ASSIGN_OR_RETURN(int64_t keep, node.GetInt("keepdims", 1));
  a.keepdims = keep != 0;
  a.axes_from_input = opset >= ReduceAxesInputOpset(a.kind);
  if (a.axes_from_input) {
    KILN_ASSIGN_OR_RETURN(int64_t noop, node.GetInt("noop_with_empty_axes", 0));
    a.noop_with_empty_axes = noop != 0;
    if (node.FindAttr("axes"))
      return node.Invalid("attribute 'axes' is an input from opset " + std::to_string(ReduceAxesInputOpset(a.kind)));
  } else {
    KILN_ASSIGN_OR_RETURN(a.axes_attr, node.GetInts("axes"));
  }
  return a;
}

Result<ReducePlan> PlanReduce(const ir::Node& node, const ReduceAttrs& a, const std::vector<int64_t>& axes,
                              int64_t rank) {
  ReducePlan p;
  p.reduced.assign(static_cast<size_t>(rank), false);
  if (axes.empty()) {
    // noop_with_empty_axes (opset 13/18): empty axes leave the input as is;
    // otherwise (and before) empty axes reduce every axis.
    if (a.noop_with_empty_axes) p.identity = true;
    else std::fill(p.reduced.begin(), p.reduced.end(), true);
    return p;
  }
  for (int64_t ax : axes) {
    KILN_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(node, ax, rank));
    if (p.reduced[static_cast<size_t>(n)]) return node.Invalid("axis " + std::to_string(ax) + " is repeated in axes");
    p.reduced[static_cast<size_t>(n)] = true;
  }
  return p;
}

Shape ReducedShape(const ReducePlan& p, const Shape& in, bool keepdims) {
  if (p.identity) return in;
  Shape out;
  for (size_t k = 0; k < in.size(); ++k) {
    if (!p.reduced[k]) out.push_back(in[k]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

Result<ArgReduceAttrs> ParseArgReduce(const ir::Node& node, int64_t opset) {
  ArgReduceAttrs a;
  a.is_max = node.op_type == "ArgMax";
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 0));
  KILN_ASSIGN_OR_RETURN(int64_t keep, node.GetInt("keepdims", 1));
  a.keepdims = keep != 0;
  if (opset >= 12) {
    KILN_ASSIGN_OR_RETURN(int64_t last, node.GetInt("select_last_index", 0));
    a.select_last_index = last != 0;
  }
  return a;
}

Result<TopKAttrs> ParseTopK(const ir::Node& node, int64_t opset) {
  TopKAttrs a;
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", -1));
  if (opset < 10) {
    if (!node.FindAttr("k")) return node.Invalid("attribute 'k' is required before opset 10");
    KILN_ASSIGN_OR_RETURN(int64_t k, node.GetInt("k", 0));
    a.k_attr = k;
  }
  if (opset >= 11) {
    KILN_ASSIGN_OR_RETURN(int64_t largest, node.GetInt("largest", 1));
    KILN_ASSIGN_OR_RETURN(int64_t sorted, node.GetInt("sorted", 1));
    a.largest = largest != 0;
    a.sorted = sorted != 0;
  }
  return a;
}

Result<SoftmaxAttrs> ParseSoftmax(const ir::Node& node, int64_t opset) {
  SoftmaxAttrs a;
  if (node.op_type == "LogSoftmax") a.kind = SoftmaxKind::kLogSoftmax;
  else if (node.op_type == "Hardmax") a.kind = SoftmaxKind::kHardmax;
  a.coerce_2d = opset < 13;
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", a.coerce_2d ? 1 : -1));
  return a;
}

AxisSplit SplitAtAxis(const Shape& s, int64_t axis) {
  AxisSplit r;
  for (int64_t k = 0; k < static_cast<int64_t>(s.size()); ++k) {
    if (k < axis) r.outer *= s[static_cast<size_t>(k)];
    else if (k == axis) r.axis_dim = s[static_cast<size_t>(k)];
    else r.inner *= s[static_cast<size_t>(k)];
  }
  return r;
}

Result<AxisSplit> SoftmaxSplit(const ir::Node& node, const SoftmaxAttrs& a, const Shape& s) {
  const int64_t rank = static_cast<int64_t>(s.size());
  if (a.coerce_2d) {
    // Opset 1-12: axis may also equal rank (the 2-D view is then [N, 1]).
    int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
    if (axis < 0 || axis > rank)
      return node.Invalid("axis " + std::to_string(a.axis) + " is out of range for rank " + std::to_string(rank));
    AxisSplit r;
    for (int64_t k = 0; k < rank; ++k) {
      if (k < axis) r.outer *= s[static_cast<size_t>(k)];
      else r.axis_dim *= s[static_cast<size_t>(k)];
    }
    return r;
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, a.axis, rank));
  return SplitAtAxis(s, axis);
}

Result<CumSumAttrs> ParseCumSum(const ir::Node& node, int64_t) {
  CumSumAttrs a;
  KILN_ASSIGN_OR_RETURN(int64_t ex, node.GetInt("exclusive", 0));
  KILN_ASSIGN_OR_RETURN(int64_t rev, node.GetInt("reverse", 0));
  a.exclusive = ex != 0;
  a.reverse = rev != 0;
  return a;
}

namespace {

Status CheckNumeric(const InferContext& ctx, size_t i) {
  DType t = ctx.input_dtype(i);
  if (t == DType::kString || t == DType::kBool)
    return ctx.Error("input " + std::to_string(i) + " has unsupported dtype " + DTypeName(t));
  return Status::Ok();
}

Status InferReduce(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ReduceAttrs a, ParseReduce(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, a.axes_from_input ? 2 : 1));
  KILN_RETURN_IF_ERROR(CheckNumeric(ctx, 0));
  const DType dt = ctx.input_dtype(0);
  const ir::Dims* in = ctx.input_dims(0);
  std::vector<int64_t> axes = a.axes_attr;
  if (a.axes_from_input && ctx.has_input(1)) {
    auto v = ctx.input_ints(1);
    if (!v) {
      // Axes unknown until run time: with keepdims the rank stays, and only
      // dims of size 1 are certain.
      if (!in || !a.keepdims || a.noop_with_empty_axes) { SetOutputDims(ctx, 0, dt, std::nullopt); return Status::Ok(); }
      ir::Dims out(in->size());
      for (size_t k = 0; k < in->size(); ++k)
        if ((*in)[k].known() && (*in)[k].value == 1) out[k] = (*in)[k];
      SetOutputDims(ctx, 0, dt, out);
      return Status::Ok();
    }
    axes = *v;
  }
  if (!in) { SetOutputDims(ctx, 0, dt, std::nullopt); return Status::Ok(); }
  KILN_ASSIGN_OR_RETURN(ReducePlan p, PlanReduce(ctx.node(), a, axes, static_cast<int64_t>(in->size())));
  if (p.identity) { SetOutputDims(ctx, 0, dt, *in); return Status::Ok(); }
  ir::Dims out;
  for (size_t k = 0; k < in->size(); ++k) {
    if (!p.reduced[k]) out.push_back((*in)[k]);
    else if (a.keepdims) out.push_back(ir::Dim::Known(1));
  }
  SetOutputDims(ctx, 0, dt, out);
  return Status::Ok();
}

Status InferArgReduce(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckNumeric(ctx, 0));
  KILN_ASSIGN_OR_RETURN(ArgReduceAttrs a, ParseArgReduce(ctx.node(), ctx.opset()));
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) { SetOutputDims(ctx, 0, DType::kInt64, std::nullopt); return Status::Ok(); }
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a.axis, static_cast<int64_t>(in->size())));
  if ((*in)[static_cast<size_t>(axis)].known() && (*in)[static_cast<size_t>(axis)].value == 0)
    return ctx.Error("cannot take " + ctx.node().op_type + " over an empty axis");
  ir::Dims out;
  for (size_t k = 0; k < in->size(); ++k) {
    if (static_cast<int64_t>(k) != axis) out.push_back((*in)[k]);
    else if (a.keepdims) out.push_back(ir::Dim::Known(1));
  }
  SetOutputDims(ctx, 0, DType::kInt64, out);
  return Status::Ok();
}

Status InferTopK(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(TopKAttrs a, ParseTopK(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(a.k_attr ? ctx.CheckInputCount(1, 1) : ctx.CheckInputCount(2, 2));
  KILN_RETURN_IF_ERROR(CheckNumeric(ctx, 0));
  const DType dt = ctx.input_dtype(0);
  std::optional<int64_t> k = a.k_attr;
  if (!k) {
    auto v = ctx.input_ints(1);
    if (v) {
      if (v->size() != 1) return ctx.Error("input 'K' must hold exactly one value, got " + std::to_string(v->size()));
      k = (*v)[0];
    }
  }
  if (k && *k < 0) return ctx.Error("k must be non-negative, got " + std::to_string(*k));
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    SetOutputDims(ctx, 0, dt, std::nullopt);
    SetOutputDims(ctx, 1, DType::kInt64, std::nullopt);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a.axis, static_cast<int64_t>(in->size())));
  ir::Dims out = *in;
  const ir::Dim& d = (*in)[static_cast<size_t>(axis)];
  if (k && d.known() && *k > d.value)
    return ctx.Error("k = " + std::to_string(*k) + " exceeds the size " + std::to_string(d.value) + " of axis " +
                     std::to_string(axis));
  out[static_cast<size_t>(axis)] = k ? ir::Dim::Known(*k) : ir::Dim{};
  SetOutputDims(ctx, 0, dt, out);
  SetOutputDims(ctx, 1, DType::kInt64, out);
  return Status::Ok();
}

Status InferSoftmax(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  KILN_ASSIGN_OR_RETURN(SoftmaxAttrs a, ParseSoftmax(ctx.node(), ctx.opset()));
  if (const ir::Dims* in = ctx.input_dims(0)) {
    // Validates the axis; the dims themselves pass through unchanged.
    KILN_RETURN_IF_ERROR(SoftmaxSplit(ctx.node(), a, Shape(in->size(), 1)).status());
  }
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

Status InferCumSum(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_RETURN_IF_ERROR(CheckNumeric(ctx, 0));
  KILN_RETURN_IF_ERROR(ParseCumSum(ctx.node(), ctx.opset()).status());
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt32, DType::kInt64}));
  if (const ir::Dims* ad = ctx.input_dims(1)) {
    if (ad->size() > 1) return ctx.Error("input 'axis' must be a scalar or a 1-element tensor");
  }
  auto axis = ctx.input_ints(1);
  const ir::Dims* in = ctx.input_dims(0);
  if (axis) {
    if (axis->size() != 1) return ctx.Error("input 'axis' must hold exactly one value");
    if (in) KILN_RETURN_IF_ERROR(NormalizeAxis(ctx, (*axis)[0], static_cast<int64_t>(in->size())).status());
  }
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

}  // namespace

void RegisterReductionOps(OpRegistry& r) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    r.Register({"", op, 1, 1000, InferReduce});
  r.Register({"", "ArgMax", 1, 1000, InferArgReduce});
  r.Register({"", "ArgMin", 1, 1000, InferArgReduce});
  r.Register({"", "TopK", 1, 1000, InferTopK});
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) r.Register({"", op, 1, 1000, InferSoftmax});
  r.Register({"", "CumSum", 11, 1000, InferCumSum});
}

}  // namespace kiln::ops
