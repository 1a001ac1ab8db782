// Indexing ops: attributes and shape inference of Gather, GatherElements,
// GatherND, Scatter, ScatterElements, ScatterND, OneHot, NonZero, Unique.
// Index values are checked by the kernels (inference only sees them at run
// time), so inference checks ranks and static dims only.
#include "ops/indexing.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "ops/families.h"
#include "ops/infer_util.h"
#include "support/dtype_dispatch.h"

namespace kiln::ops {

Result<GatherAttrs> ParseGather(const ir::Node& node, int64_t opset) {
  GatherAttrs a;
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 0));
  return a;
}

Result<GatherNDAttrs> ParseGatherND(const ir::Node& node, int64_t opset) {
  GatherNDAttrs a;
  KILN_ASSIGN_OR_RETURN(a.batch_dims, node.GetInt("batch_dims", 0));
  if (a.batch_dims < 0) return node.Invalid("batch_dims " + std::to_string(a.batch_dims) + " must be >= 0");
  return a;
}

const char* ScatterReductionName(ScatterReduction r) {
  switch (r) {
    case ScatterReduction::kNone: return "none";
    case ScatterReduction::kAdd: return "add";
    case ScatterReduction::kMul: return "mul";
    case ScatterReduction::kMax: return "max";
    case ScatterReduction::kMin: return "min";
  }
  return "?";
}

Result<ScatterAttrs> ParseScatter(const ir::Node& node, int64_t opset) {
  ScatterAttrs a;
  if (node.op_type != "ScatterND") {
    KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 0));
  }
  KILN_ASSIGN_OR_RETURN(std::string red, node.GetString("reduction", "none"));
  if (red == "none") a.reduction = ScatterReduction::kNone;
  else if (red == "add") a.reduction = ScatterReduction::kAdd;
  else if (red == "mul") a.reduction = ScatterReduction::kMul;
  else if (red == "max") a.reduction = ScatterReduction::kMax;
  else if (red == "min") a.reduction = ScatterReduction::kMin;
  else return node.Invalid("unknown reduction '" + red + "' (expected none, add, mul, max or min)");
  if (node.op_type == "Scatter" && a.reduction != ScatterReduction::kNone)
    return node.Invalid("Scatter has no reduction attribute (use ScatterElements, opset 16+)");
  return a;
}

Result<OneHotAttrs> ParseOneHot(const ir::Node& node, int64_t opset) {
  OneHotAttrs a;
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", -1));
  return a;
}

Result<UniqueAttrs> ParseUnique(const ir::Node& node, int64_t opset) {
  UniqueAttrs a;
  if (node.FindAttr("axis")) {
    KILN_ASSIGN_OR_RETURN(int64_t ax, node.GetInt("axis", 0));
    a.axis = ax;
  }
  KILN_ASSIGN_OR_RETURN(int64_t s, node.GetInt("sorted", 1));
  a.sorted = s != 0;
  return a;
}

namespace {

// Strict weak order on elements with NaN last and NaNs equivalent.
template <typename T>
bool ElemLess(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return ElemLess(static_cast<float>(a), static_cast<float>(b));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  } else {
    return a < b;
  }
}

}  // namespace

Result<int64_t> CountUnique(const Tensor& x, std::optional<int64_t> axis) {
  int64_t count = 0;
  KILN_RETURN_IF_ERROR(VisitAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    int64_t outer = 1, n = x.numel(), inner = 1;
    if (axis) {
      n = x.dim(static_cast<int>(*axis));
      for (int k = 0; k < *axis; ++k) outer *= x.dim(k);
      for (int k = static_cast<int>(*axis) + 1; k < x.rank(); ++k) inner *= x.dim(k);
    }
    // Slice i is the elements x[o, i, j] in (o, j) row-major order.
    auto less = [&](int64_t a, int64_t b) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
          const T& va = p[(o * n + a) * inner + j];
          const T& vb = p[(o * n + b) * inner + j];
          if (ElemLess(va, vb)) return true;
          if (ElemLess(vb, va)) return false;
        }
      return false;
    };
    std::set<int64_t, decltype(less)> seen(less);
    for (int64_t i = 0; i < n; ++i) seen.insert(i);
    count = static_cast<int64_t>(seen.size());
  }));
  return count;
}

namespace {

const std::initializer_list<DType> kIndexTypes = {DType::kInt32, DType::kInt64};

// Gather: data.shape[:axis] + indices.shape + data.shape[axis+1:].
Status InferGather(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, kIndexTypes));
  KILN_ASSIGN_OR_RETURN(GatherAttrs a, ParseGather(ctx.node(), ctx.opset()));
  const ir::Dims* data = ctx.input_dims(0);
  const ir::Dims* idx = ctx.input_dims(1);
  if (!data || !idx) {
    ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
    return Status::Ok();
  }
  if (data->empty()) return ctx.Error("input 0 (data) must have rank >= 1, got a scalar");
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a.axis, static_cast<int64_t>(data->size())));
  ir::Dims out(data->begin(), data->begin() + axis);
  out.insert(out.end(), idx->begin(), idx->end());
  out.insert(out.end(), data->begin() + axis + 1, data->end());
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::Ok();
}

// GatherElements: output has the indices' shape; ranks must agree.
Status InferGatherElements(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, kIndexTypes));
  KILN_ASSIGN_OR_RETURN(GatherAttrs a, ParseGather(ctx.node(), ctx.opset()));
  const ir::Dims* data = ctx.input_dims(0);
  const ir::Dims* idx = ctx.input_dims(1);
  if (data && idx) {
    if (data->empty()) return ctx.Error("input 0 (data) must have rank >= 1, got a scalar");
    if (data->size() != idx->size())
      return ctx.Error("indices rank " + std::to_string(idx->size()) + " differs from data rank " + std::to_string(data->size()));
    KILN_RETURN_IF_ERROR(NormalizeAxis(ctx, a.axis, static_cast<int64_t>(data->size())).status());
  }
  ctx.set_output(0, ctx.input_dtype(0), idx ? std::optional<ir::Dims>(*idx) : std::nullopt);
  return Status::Ok();
}

// GatherND: indices.shape[:-1] + data.shape[batch_dims + indices.shape[-1]:].
Status InferGatherND(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
  KILN_ASSIGN_OR_RETURN(GatherNDAttrs a, ParseGatherND(ctx.node(), ctx.opset()));
  const ir::Dims* data = ctx.input_dims(0);
  const ir::Dims* idx = ctx.input_dims(1);
  const DType dt = ctx.input_dtype(0);
  if (!data || !idx) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  const int64_t r = static_cast<int64_t>(data->size()), q = static_cast<int64_t>(idx->size()), b = a.batch_dims;
  if (r < 1 || q < 1) return ctx.Error("data and indices must have rank >= 1");
  if (b >= std::min(r, q)) return ctx.Error("batch_dims " + std::to_string(b) + " must be less than both ranks");
  for (int64_t k = 0; k < b; ++k)
    if ((*data)[k].known() && (*idx)[k].known() && (*data)[k].value != (*idx)[k].value)
      return ctx.Error("batch dim " + std::to_string(k) + " differs between data " + ir::DimsToString(*data) +
                       " and indices " + ir::DimsToString(*idx));
  const ir::Dim& last = idx->back();
  if (!last.known()) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  const int64_t m = last.value;
  if (m < 1 || m > r - b)
    return ctx.Error("indices.shape[-1] = " + std::to_string(m) + " must be in [1, " + std::to_string(r - b) + "]");
  ir::Dims out(idx->begin(), idx->end() - 1);
  out.insert(out.end(), data->begin() + b + m, data->end());
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

// Scatter / ScatterElements: output is data; indices and updates share a shape.
Status InferScatterElements(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, 3));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, kIndexTypes));
  KILN_ASSIGN_OR_RETURN(ScatterAttrs a, ParseScatter(ctx.node(), ctx.opset()));
  if (a.reduction != ScatterReduction::kNone && ctx.input_dtype(0) == DType::kString)
    return ctx.Error(std::string("reduction '") + ScatterReductionName(a.reduction) + "' is not defined for strings");
  const ir::Dims* data = ctx.input_dims(0);
  const ir::Dims* idx = ctx.input_dims(1);
  const ir::Dims* upd = ctx.input_dims(2);
  if (ctx.input_dtype(2) != DType::kUndefined && ctx.input_dtype(0) != DType::kUndefined &&
      ctx.input_dtype(2) != ctx.input_dtype(0))
    return ctx.Error(std::string("updates dtype ") + DTypeName(ctx.input_dtype(2)) + " differs from data dtype " +
                     DTypeName(ctx.input_dtype(0)));
  if (data && idx) {
    if (data->empty()) return ctx.Error("input 0 (data) must have rank >= 1, got a scalar");
    if (data->size() != idx->size())
      return ctx.Error("indices rank " + std::to_string(idx->size()) + " differs from data rank " + std::to_string(data->size()));
    KILN_RETURN_IF_ERROR(NormalizeAxis(ctx, a.axis, static_cast<int64_t>(data->size())).status());
  }
  if (idx && upd) {
    bool bad = idx->size() != upd->size();
    for (size_t k = 0; !bad && k < idx->size(); ++k)
      bad = (*idx)[k].known() && (*upd)[k].known() && (*idx)[k].value != (*upd)[k].value;
    if (bad) return ctx.Error("updates shape " + ir::DimsToString(*upd) + " differs from indices shape " + ir::DimsToString(*idx));
  }
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

// ScatterND: updates.shape must be indices.shape[:-1] + data.shape[k:].
Status InferScatterND(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, 3));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
  KILN_ASSIGN_OR_RETURN(ScatterAttrs a, ParseScatter(ctx.node(), ctx.opset()));
  if (a.reduction != ScatterReduction::kNone && ctx.input_dtype(0) == DType::kString)
    return ctx.Error(std::string("reduction '") + ScatterReductionName(a.reduction) + "' is not defined for strings");
  const ir::Dims* data = ctx.input_dims(0);
  const ir::Dims* idx = ctx.input_dims(1);
  const ir::Dims* upd = ctx.input_dims(2);
  if (data && idx && upd) {
    if (data->empty() || idx->empty()) return ctx.Error("data and indices must have rank >= 1");
    const ir::Dim& last = idx->back();
    if (last.known()) {
      const int64_t k = last.value, r = static_cast<int64_t>(data->size());
      if (k < 1 || k > r) return ctx.Error("indices.shape[-1] = " + std::to_string(k) + " must be in [1, " + std::to_string(r) + "]");
      ir::Dims want(idx->begin(), idx->end() - 1);
      want.insert(want.end(), data->begin() + k, data->end());
      bool bad = want.size() != upd->size();
      for (size_t i = 0; !bad && i < want.size(); ++i)
        bad = want[i].known() && (*upd)[i].known() && want[i].value != (*upd)[i].value;
      if (bad) return ctx.Error("updates shape " + ir::DimsToString(*upd) + " must be " + ir::DimsToString(want));
    }
  }
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

// OneHot: indices shape with depth inserted at axis; dtype of values.
Status InferOneHot(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, 3));
  KILN_ASSIGN_OR_RETURN(OneHotAttrs a, ParseOneHot(ctx.node(), ctx.opset()));
  if (ctx.input_dtype(0) == DType::kString || ctx.input_dtype(1) == DType::kString)
    return ctx.Error("indices and depth must be numeric");
  const DType dt = ctx.input_dtype(2);
  if (const ir::Dims* v = ctx.input_dims(2)) {
    if (v->size() != 1 || ((*v)[0].known() && (*v)[0].value != 2))
      return ctx.Error("values must be a 1-D tensor of 2 elements [off, on], got " + ir::DimsToString(*v));
  }
  if (const ir::Dims* d = ctx.input_dims(1)) {
    if (d->size() > 1 || (d->size() == 1 && (*d)[0].known() && (*d)[0].value != 1))
      return ctx.Error("depth must be a scalar or a 1-element tensor, got " + ir::DimsToString(*d));
  }
  const ir::Dims* idx = ctx.input_dims(0);
  if (!idx) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  const int64_t out_rank = static_cast<int64_t>(idx->size()) + 1;
  if (a.axis < -out_rank || a.axis >= out_rank)
    return ctx.Error("axis " + std::to_string(a.axis) + " is out of range for output rank " + std::to_string(out_rank));
  const int64_t axis = a.axis < 0 ? a.axis + out_rank : a.axis;
  ir::Dim depth;
  if (const Tensor* dv = ctx.input_value(1); dv && dv->defined() && dv->numel() == 1) {
    const double d = dv->GetAsDouble(0);
    if (!(d >= 1) || d > 9.0e18) return ctx.Error("depth must be >= 1, got " + std::to_string(d));
    depth = ir::Dim::Known(static_cast<int64_t>(d));  // float depth is truncated like the spec's cast
  }
  ir::Dims out(idx->begin(), idx->end());
  out.insert(out.begin() + axis, depth);
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

// NonZero: int64 [rank, number of non-zero elements].
Status InferNonZero(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  const ir::Dims* x = ctx.input_dims(0);
  if (!x) {
    ctx.set_output(0, DType::kInt64, UnknownDims(2));
    return Status::Ok();
  }
  ir::Dim nnz;
  if (const Tensor* v = ctx.input_value(0); v && v->defined()) {
    int64_t n = 0;
    KILN_RETURN_IF_ERROR(VisitAll(v->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* p = v->data<T>();
      for (int64_t i = 0; i < v->numel(); ++i) {
        if constexpr (std::is_same_v<T, std::string>) n += p[i].empty() ? 0 : 1;
        else n += ToDouble(p[i]) != 0.0 ? 1 : 0;
      }
    }));
    nnz = ir::Dim::Known(n);
  }
  ctx.set_output(0, DType::kInt64, ir::Dims{ir::Dim::Known(static_cast<int64_t>(x->size())), nnz});
  return Status::Ok();
}

// Unique: Y (unique values or slices), indices, inverse_indices, counts.
Status InferUnique(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  if (ctx.num_outputs() < 1 || ctx.num_outputs() > 4)
    return ctx.Error("has " + std::to_string(ctx.num_outputs()) + " outputs, expected 1 to 4");
  KILN_ASSIGN_OR_RETURN(UniqueAttrs a, ParseUnique(ctx.node(), ctx.opset()));
  const DType dt = ctx.input_dtype(0);
  const ir::Dims* x = ctx.input_dims(0);
  std::optional<int64_t> axis;
  if (a.axis && x) {
    if (x->empty()) return ctx.Error("axis is given but input 0 is a scalar");
    KILN_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(ctx, *a.axis, static_cast<int64_t>(x->size())));
    axis = ax;
  }
  ir::Dim u;
  if (const Tensor* v = ctx.input_value(0); v && v->defined()) {
    KILN_ASSIGN_OR_RETURN(int64_t n, CountUnique(*v, axis));
    u = ir::Dim::Known(n);
  }
  // Y
  if (!x) ctx.set_output(0, dt, std::nullopt);
  else if (!a.axis) ctx.set_output(0, dt, ir::Dims{u});
  else {
    ir::Dims y = *x;
    y[static_cast<size_t>(*axis)] = u;
    ctx.set_output(0, dt, y);
  }
  ctx.set_output(1, DType::kInt64, ir::Dims{u});
  ir::Dim inv;
  if (x && !a.axis) {
    if (auto s = ToShape(*x)) {
      int64_t n = 1;
      for (int64_t d : *s) n *= d;
      inv = ir::Dim::Known(n);
    }
  } else if (x) {
    inv = (*x)[static_cast<size_t>(*axis)];
  }
  ctx.set_output(2, DType::kInt64, ir::Dims{inv});
  ctx.set_output(3, DType::kInt64, ir::Dims{u});
  return Status::Ok();
}

}  // namespace

void RegisterIndexingOps(OpRegistry& r) {
  // Gather 1/11/13: same meaning; 11 documents negative indices (accepted always).
  r.Register({"", "Gather", 1, 1000, InferGather});
  r.Register({"", "GatherElements", 11, 1000, InferGatherElements});
  r.Register({"", "GatherND", 11, 1000, InferGatherND});
  // Scatter 9-10, deprecated (removed) in opset 11 for ScatterElements.
  r.Register({"", "Scatter", 9, 10, InferScatterElements});
  r.Register({"", "ScatterElements", 11, 1000, InferScatterElements});
  r.Register({"", "ScatterND", 11, 1000, InferScatterND});
  r.Register({"", "OneHot", 9, 1000, InferOneHot});
  r.Register({"", "NonZero", 9, 1000, InferNonZero});
  r.Register({"", "Unique", 11, 1000, InferUnique});
}

}  // namespace kiln::ops
