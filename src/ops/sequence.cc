// Sequence ops (opset 11+) and Optional ops (opset 15+): attributes and
// shape/type inference. A sequence's runtime type carries only its element
// dtype (not the element shapes), so ops that read elements (SequenceAt,
// ConcatFromSequence) infer dims only when the element type says so.
#include "ops/sequence.h"

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

ir::TypeInfo SequenceType(ir::TypeInfo elem) {
  ir::TypeInfo t;
  t.kind = ir::TypeInfo::Kind::kSequence;
  t.elem = std::make_shared<ir::TypeInfo>(std::move(elem));
  return t;
}

ir::TypeInfo OptionalType(ir::TypeInfo elem) {
  ir::TypeInfo t;
  t.kind = ir::TypeInfo::Kind::kOptional;
  t.elem = std::make_shared<ir::TypeInfo>(std::move(elem));
  return t;
}

ir::TypeInfo SequenceElemType(const ir::TypeInfo& seq) {
  if (seq.kind == ir::TypeInfo::Kind::kSequence && seq.elem) return *seq.elem;
  return {};
}

namespace {

// Keeps only what holds for any value of type t: its kind and dtypes.
ir::TypeInfo Loosen(const ir::TypeInfo& t) {
  ir::TypeInfo r;
  r.kind = t.kind;
  r.dtype = t.dtype;
  if (t.elem) r.elem = std::make_shared<ir::TypeInfo>(Loosen(*t.elem));
  return r;
}

}  // namespace

ir::TypeInfo MergeTypes(const ir::TypeInfo& a, const ir::TypeInfo& b) {
  using K = ir::TypeInfo::Kind;
  if (a.kind == K::kUnknown) return Loosen(b);
  if (b.kind == K::kUnknown) return Loosen(a);
  if (a.kind != b.kind) return {};
  ir::TypeInfo r;
  r.kind = a.kind;
  if (a.kind == K::kTensor) {
    r.dtype = a.dtype != DType::kUndefined ? a.dtype : b.dtype;
    if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
      ir::Dims d(a.shape->size());
      for (size_t k = 0; k < d.size(); ++k)
        if ((*a.shape)[k] == (*b.shape)[k]) d[k] = (*a.shape)[k];
      r.shape = d;
    }
    return r;
  }
  ir::TypeInfo ea = a.elem ? *a.elem : ir::TypeInfo{}, eb = b.elem ? *b.elem : ir::TypeInfo{};
  r.elem = std::make_shared<ir::TypeInfo>(MergeTypes(ea, eb));
  return r;
}

Result<SplitToSequenceAttrs> ParseSplitToSequence(const ir::Node& node, int64_t opset) {
  SplitToSequenceAttrs a;
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 0));
  KILN_ASSIGN_OR_RETURN(int64_t k, node.GetInt("keepdims", 1));
  if (k != 0 && k != 1) return node.Invalid("keepdims must be 0 or 1, got " + std::to_string(k));
  a.keepdims = k == 1;
  return a;
}

Result<ConcatFromSequenceAttrs> ParseConcatFromSequence(const ir::Node& node, int64_t opset) {
  ConcatFromSequenceAttrs a;
  if (!node.FindAttr("axis")) return node.Invalid("attribute 'axis' is required");
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 0));
  KILN_ASSIGN_OR_RETURN(int64_t n, node.GetInt("new_axis", 0));
  if (n != 0 && n != 1) return node.Invalid("new_axis must be 0 or 1, got " + std::to_string(n));
  a.new_axis = n == 1;
  return a;
}

Result<DType> ParseSequenceEmptyDType(const ir::Node& node, int64_t opset) {
  KILN_ASSIGN_OR_RETURN(int64_t dt, node.GetInt("dtype", static_cast<int64_t>(DType::kFloat32)));
  if (!DTypeIsKnown(static_cast<int>(dt)) || dt == 0) return node.Invalid("unsupported dtype " + std::to_string(dt));
  return static_cast<DType>(dt);
}

namespace {

using K = ir::TypeInfo::Kind;

Status RequireSequence(const InferContext& ctx, size_t i) {
  const ir::TypeInfo& t = ctx.input_type(i);
  if (t.kind != K::kUnknown && t.kind != K::kSequence)
    return ctx.Error("input " + std::to_string(i) + " must be a sequence, got " + t.ToString());
  return Status::Ok();
}

Status RequireTensor(const InferContext& ctx, size_t i) {
  const ir::TypeInfo& t = ctx.input_type(i);
  if (t.kind != K::kUnknown && t.kind != K::kTensor)
    return ctx.Error("input " + std::to_string(i) + " must be a tensor, got " + t.ToString());
  return Status::Ok();
}

// Position inputs are int32/int64 scalars (SequenceAt/Insert/Erase).
Status CheckPosition(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return Status::Ok();
  KILN_RETURN_IF_ERROR(RequireTensor(ctx, i));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, i, {DType::kInt32, DType::kInt64}));
  const ir::Dims* d = ctx.input_dims(i);
  if (d && !d->empty() && !(d->size() == 1 && (*d)[0].known() && (*d)[0].value == 1))
    return ctx.Error("position (input " + std::to_string(i) + ") must be a scalar, got shape " + ir::DimsToString(*d));
  return Status::Ok();
}

Status InferSequenceEmpty(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(0, 0));
  KILN_ASSIGN_OR_RETURN(DType dt, ParseSequenceEmptyDType(ctx.node(), ctx.opset()));
  ctx.set_output(0, SequenceType(ir::TypeInfo::Tensor(dt)));
  return Status::Ok();
}

Status InferSequenceConstruct(InferContext& ctx) {
  if (ctx.num_inputs() < 1) return ctx.Error("needs at least one input");
  ir::TypeInfo elem;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
    KILN_RETURN_IF_ERROR(RequireTensor(ctx, i));
    const ir::TypeInfo& t = ctx.input_type(i);
    if (i > 0 && elem.dtype != DType::kUndefined && t.dtype != DType::kUndefined && t.dtype != elem.dtype)
      return ctx.Error("all inputs must have one dtype: input 0 is " + std::string(DTypeName(elem.dtype)) + ", input " +
                       std::to_string(i) + " is " + DTypeName(t.dtype));
    elem = i == 0 ? t : MergeTypes(elem, t);
  }
  ctx.set_output(0, SequenceType(elem));
  return Status::Ok();
}

Status InferSequenceAt(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  KILN_RETURN_IF_ERROR(CheckPosition(ctx, 1));
  ir::TypeInfo e = SequenceElemType(ctx.input_type(0));
  if (e.kind == K::kTensor) ctx.set_output(0, e);
  return Status::Ok();
}

Status InferSequenceInsert(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
  KILN_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  KILN_RETURN_IF_ERROR(RequireTensor(ctx, 1));
  KILN_RETURN_IF_ERROR(CheckPosition(ctx, 2));
  ir::TypeInfo e = SequenceElemType(ctx.input_type(0));
  const ir::TypeInfo& t = ctx.input_type(1);
  if (e.dtype != DType::kUndefined && t.dtype != DType::kUndefined && e.dtype != t.dtype)
    return ctx.Error("tensor dtype " + std::string(DTypeName(t.dtype)) + " differs from the sequence's element dtype " +
                     DTypeName(e.dtype));
  // An empty sequence's element type says nothing about shapes: the result's
  // elements are described by the inserted tensor alone only when we know nothing else.
  ctx.set_output(0, SequenceType(e.kind == K::kUnknown || e.dtype == DType::kUndefined ? Loosen(t) : MergeTypes(e, t)));
  return Status::Ok();
}

Status InferSequenceErase(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 2));
  KILN_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  KILN_RETURN_IF_ERROR(CheckPosition(ctx, 1));
  ctx.set_output(0, ctx.input_type(0).kind == K::kSequence ? ctx.input_type(0) : SequenceType({}));
  return Status::Ok();
}

Status InferSequenceLength(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  ctx.set_output(0, DType::kInt64, ir::Dims{});
  return Status::Ok();
}

Status InferSplitToSequence(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 2));
  KILN_RETURN_IF_ERROR(RequireTensor(ctx, 0));
  KILN_ASSIGN_OR_RETURN(SplitToSequenceAttrs a, ParseSplitToSequence(ctx.node(), ctx.opset()));
  if (ctx.has_input(1)) {
    KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt32, DType::kInt64}));
    const ir::Dims* sd = ctx.input_dims(1);
    if (sd && sd->size() > 1) return ctx.Error("split must be a scalar or 1-D, got shape " + ir::DimsToString(*sd));
  }
  const ir::Dims* d = ctx.input_dims(0);
  ir::TypeInfo elem = ir::TypeInfo::Tensor(ctx.input_dtype(0));
  if (d) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a.axis, static_cast<int64_t>(d->size())));
    ir::Dims out = *d;
    out[static_cast<size_t>(axis)] = ir::Dim{};
    if (!ctx.has_input(1)) {
      if (a.keepdims) out[static_cast<size_t>(axis)] = ir::Dim::Known(1);
      else out.erase(out.begin() + axis);
    }
    elem.shape = out;
  }
  ctx.set_output(0, SequenceType(elem));
  return Status::Ok();
}

Status InferConcatFromSequence(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(RequireSequence(ctx, 0));
  KILN_ASSIGN_OR_RETURN(ConcatFromSequenceAttrs a, ParseConcatFromSequence(ctx.node(), ctx.opset()));
  ir::TypeInfo e = SequenceElemType(ctx.input_type(0));
  std::optional<ir::Dims> dims;
  if (e.kind == K::kTensor && e.shape) {
    const int64_t r = static_cast<int64_t>(e.shape->size());
    KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a.axis, a.new_axis ? r + 1 : r));
    ir::Dims d = *e.shape;
    // The concatenated axis depends on how many items the sequence holds.
    if (a.new_axis) d.insert(d.begin() + axis, ir::Dim{});
    else d[static_cast<size_t>(axis)] = ir::Dim{};
    dims = d;
  }
  ctx.set_output(0, e.dtype, dims);
  return Status::Ok();
}

// Optional(input) wraps a value; Optional() with attribute `type` is empty.
Status InferOptional(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(0, 1));
  if (ctx.has_input(0)) {
    ctx.set_output(0, OptionalType(ctx.input_type(0)));
    return Status::Ok();
  }
  const ir::Attribute* tp = ctx.node().FindAttr("type");
  if (!tp || tp->type != ir::Attribute::Type::kTypeProto)
    return ctx.Error("without an input, attribute 'type' (a TypeProto) is required");
  ctx.set_output(0, OptionalType(tp->tp));
  return Status::Ok();
}

// The value inside an optional. At run time an optional holding a value is
// that value itself (a tensor or a sequence); opset 18 also accepts plain
// tensors and sequences, which opset 15 already receives this way.
Status InferOptionalGetElement(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  const ir::TypeInfo& t = ctx.input_type(0);
  if (t.kind == K::kOptional) {
    if (t.elem) ctx.set_output(0, *t.elem);
  } else {
    ctx.set_output(0, t);
  }
  return Status::Ok();
}

// opset 15: one required input; opset 18: the input itself may be omitted
// (then the result is false).
Status InferOptionalHasElement(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(ctx.opset() >= 18 ? 0 : 1, 1));
  ctx.set_output(0, DType::kBool, ir::Dims{});
  return Status::Ok();
}

}  // namespace

void RegisterSequenceOps(OpRegistry& r) {
  r.Register({"", "SequenceEmpty", 11, 1000, InferSequenceEmpty});
  r.Register({"", "SequenceConstruct", 11, 1000, InferSequenceConstruct});
  r.Register({"", "SequenceAt", 11, 1000, InferSequenceAt});
  r.Register({"", "SequenceInsert", 11, 1000, InferSequenceInsert});
  r.Register({"", "SequenceErase", 11, 1000, InferSequenceErase});
  r.Register({"", "SequenceLength", 11, 1000, InferSequenceLength});
  r.Register({"", "SplitToSequence", 11, 1000, InferSplitToSequence});
  r.Register({"", "ConcatFromSequence", 11, 1000, InferConcatFromSequence});
  r.Register({"", "Optional", 15, 1000, InferOptional});
  r.Register({"", "OptionalGetElement", 15, 1000, InferOptionalGetElement});
  r.Register({"", "OptionalHasElement", 15, 1000, InferOptionalHasElement});
}

}  // namespace kiln::ops
