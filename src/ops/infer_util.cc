#include "ops/infer_util.h"

#include <algorithm>

namespace kiln::ops {

Result<ir::Dims> BroadcastDims(const ir::Dims& a, const ir::Dims& b) {
  const size_t r = std::max(a.size(), b.size());
  ir::Dims out(r);
  for (size_t k = 0; k < r; ++k) {
    const ir::Dim* da = k + a.size() >= r ? &a[k + a.size() - r] : nullptr;
    const ir::Dim* db = k + b.size() >= r ? &b[k + b.size() - r] : nullptr;
    if (!da) { out[k] = *db; continue; }
    if (!db) { out[k] = *da; continue; }
    if (da->known() && db->known()) {
      if (da->value == db->value || db->value == 1) out[k] = *da;
      else if (da->value == 1) out[k] = *db;
      else return InvalidModel("shapes " + ir::DimsToString(a) + " and " + ir::DimsToString(b) + " cannot be broadcast");
    } else if (da->known() && da->value != 1) {
      out[k] = *da;
    } else if (db->known() && db->value != 1) {
      out[k] = *db;
    } else if (da->known()) {
      out[k] = *db;  // 1 vs unknown
    } else if (db->known()) {
      out[k] = *da;
    } else {
      out[k] = (!da->param.empty() && da->param == db->param) ? *da : ir::Dim{};
    }
  }
  return out;
}

Result<std::optional<ir::Dims>> BroadcastInputs(const InferContext& ctx, size_t first, size_t last) {
  std::optional<ir::Dims> acc;
  bool first_seen = false;
  for (size_t i = first; i < ctx.num_inputs() && i <= last; ++i) {
    if (!ctx.has_input(i)) continue;
    const ir::Dims* d = ctx.input_dims(i);
    if (!d) return std::optional<ir::Dims>();
    if (!first_seen) { acc = *d; first_seen = true; continue; }
    auto b = BroadcastDims(*acc, *d);
    if (!b.ok()) return ctx.Error(b.status().message());
    acc = std::move(b).value();
  }
  return acc;
}

Result<int64_t> NormalizeAxis(const ir::Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return node.Invalid("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}
Result<int64_t> NormalizeAxis(const InferContext& ctx, int64_t axis, int64_t rank) {
  return NormalizeAxis(ctx.node(), axis, rank);
}

void PropagateInput(InferContext& ctx, size_t input, size_t output) { ctx.set_output(output, ctx.input_type(input)); }

void SetOutputDims(InferContext& ctx, size_t output, DType dtype, std::optional<ir::Dims> dims) {
  ctx.set_output(output, ir::TypeInfo::Tensor(dtype, std::move(dims)));
}

std::optional<Shape> ToShape(const ir::Dims& d) {
  Shape s;
  for (const ir::Dim& x : d) {
    if (!x.known()) return std::nullopt;
    s.push_back(x.value);
  }
  return s;
}

std::optional<Shape> KnownShape(const InferContext& ctx, size_t i) {
  const ir::Dims* d = ctx.input_dims(i);
  if (!d) return std::nullopt;
  return ToShape(*d);
}

Result<int64_t> CheckedDim(const InferContext& ctx, int64_t a, int64_t b, int64_t c) {
  int64_t v = 0;
  if (__builtin_mul_overflow(a, b, &v) || __builtin_add_overflow(v, c, &v))
    return ctx.Error("output dim " + std::to_string(a) + " * " + std::to_string(b) + " + " + std::to_string(c) + " overflows int64");
  return v;
}

ir::Dims UnknownDims(size_t rank) { return ir::Dims(rank); }

Status CheckDType(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed) {
  DType t = ctx.input_dtype(i);
  if (t == DType::kUndefined || !ctx.has_input(i)) return Status::Ok();
  for (DType a : allowed)
    if (a == t) return Status::Ok();
  return ctx.Error("input " + std::to_string(i) + " ('" + ctx.node().inputs[i] + "') has unsupported dtype " + DTypeName(t));
}

}  // namespace kiln::ops
