// Data movement ops, part 2: Pad, DepthToSpace, SpaceToDepth,
// ReverseSequence, Trilu, Compress (attributes and shape inference).
#include <set>

#include "ops/data_movement.h"
#include "ops/infer_util.h"
#include "ops/shape_ops.h"

namespace kiln::ops {

// ---------------------------------------------------------------- Pad

Result<PadAttrs> ParsePad(const ir::Node& node, int64_t opset) {
  PadAttrs a;
  KILN_ASSIGN_OR_RETURN(std::string mode, node.GetString("mode", "constant"));
  if (mode == "constant") a.mode = PadMode::kConstant;
  else if (mode == "reflect") a.mode = PadMode::kReflect;
  else if (mode == "edge") a.mode = PadMode::kEdge;
  else if (mode == "wrap") a.mode = PadMode::kWrap;  // opset 19
  else return node.Invalid("unknown mode '" + mode + "'");
  if (opset < 11) {
    // Pad-1 calls the attribute `paddings`, Pad-2 `pads`; both hold [begins..., ends...].
    const char* name = opset < 2 ? "paddings" : "pads";
    if (!node.FindAttr(name)) return node.Invalid(std::string("attribute '") + name + "' is required");
    KILN_ASSIGN_OR_RETURN(auto p, node.GetInts(name));
    a.pads = std::move(p);
    KILN_ASSIGN_OR_RETURN(a.value, node.GetFloat("value", 0.f));
  }
  return a;
}

Result<std::vector<int64_t>> FullPads(const ir::Node& node, const std::vector<int64_t>& pads,
                                      const std::optional<std::vector<int64_t>>& axes, int64_t rank) {
  if (!axes) {
    if (static_cast<int64_t>(pads.size()) != 2 * rank)
      return node.Invalid("pads " + ShapeToString(pads) + " has " + std::to_string(pads.size()) + " values, expected " +
                          std::to_string(2 * rank) + " for an input of rank " + std::to_string(rank));
    return pads;
  }
  // Opset 18: pads name only the listed axes.
  const size_t n = axes->size();
  if (pads.size() != 2 * n)
    return node.Invalid("pads " + ShapeToString(pads) + " has " + std::to_string(pads.size()) + " values, expected " +
                        std::to_string(2 * n) + " for " + std::to_string(n) + " axes");
  std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
  std::set<int64_t> seen;
  for (size_t i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t ax, NormalizeAxis(node, (*axes)[i], rank));
    if (!seen.insert(ax).second) return node.Invalid("axis " + std::to_string((*axes)[i]) + " is repeated in axes");
    full[static_cast<size_t>(ax)] = pads[i];
    full[static_cast<size_t>(rank + ax)] = pads[n + i];
  }
  return full;
}

int64_t PadSourceIndex(PadMode mode, int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kEdge:
      return i < 0 ? 0 : n - 1;
    case PadMode::kWrap: {
      const int64_t m = i % n;
      return m < 0 ? m + n : m;
    }
    case PadMode::kReflect: {
      // numpy 'reflect' (edge not repeated), periodic with period 2(n-1) for
      // pads wider than the axis.
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      int64_t m = i % period;
      if (m < 0) m += period;
      return m < n ? m : period - m;
    }
    case PadMode::kConstant:
      break;
  }
  return -1;
}

namespace {

Status InferPad(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(PadAttrs a, ParsePad(ctx.node(), ctx.opset()));
  const bool attr_form = ctx.opset() < 11;
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(attr_form ? 1 : 2, attr_form ? 1 : (ctx.opset() >= 18 ? 4 : 3)));
  const DType dt = ctx.input_dtype(0);
  if (!attr_form) {
    KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
    const DType cv = ctx.input_dtype(2);
    if (ctx.has_input(2) && cv != DType::kUndefined && dt != DType::kUndefined && cv != dt)
      return ctx.Error(std::string("input 'constant_value' has dtype ") + DTypeName(cv) + ", data has " + DTypeName(dt));
  }
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  const int64_t rank = static_cast<int64_t>(in->size());
  std::optional<std::vector<int64_t>> pads = a.pads, axes;
  if (!attr_form) {
    KILN_ASSIGN_OR_RETURN(pads, KnownInputInts(ctx, 1, "input 'pads'"));
    KILN_ASSIGN_OR_RETURN(axes, KnownInputInts(ctx, 3, "input 'axes'"));
    if (!pads || (ctx.has_input(3) && !axes)) {
      ir::Dims out = *in;
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
  }
  KILN_ASSIGN_OR_RETURN(auto full, FullPads(ctx.node(), *pads, axes, rank));
  ir::Dims out = *in;
  for (int64_t k = 0; k < rank; ++k) {
    ir::Dim& d = out[static_cast<size_t>(k)];
    const int64_t b = full[static_cast<size_t>(k)], e = full[static_cast<size_t>(rank + k)];
    if (b == 0 && e == 0) continue;
    if (!d.known()) {
      d = ir::Dim{};
      continue;
    }
    int64_t v = 0;
    if (__builtin_add_overflow(d.value, b, &v) || __builtin_add_overflow(v, e, &v))
      return ctx.Error("pads " + ShapeToString(*pads) + " make axis " + std::to_string(k) + " overflow int64");
    if (v < 0)
      return ctx.Error("pads " + ShapeToString(*pads) + " crop axis " + std::to_string(k) + " of size " + std::to_string(d.value) +
                       " below zero");
    if (a.mode != PadMode::kConstant && d.value == 0 && v > 0)
      return ctx.Error("cannot pad the empty axis " + std::to_string(k) + " in a non-constant mode");
    d = ir::Dim::Known(v);
  }
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

}  // namespace

// ------------------------------------------------- DepthToSpace, SpaceToDepth

Result<DepthToSpaceAttrs> ParseDepthToSpace(const ir::Node& node, int64_t opset) {
  DepthToSpaceAttrs a;
  if (!node.FindAttr("blocksize")) return node.Invalid("attribute 'blocksize' is required");
  KILN_ASSIGN_OR_RETURN(a.blocksize, node.GetInt("blocksize", 0));
  if (a.blocksize < 1) return node.Invalid("attribute 'blocksize' must be positive, got " + std::to_string(a.blocksize));
  if (opset >= 11) {
    KILN_ASSIGN_OR_RETURN(std::string mode, node.GetString("mode", "DCR"));
    if (mode == "CRD") a.crd = true;
    else if (mode != "DCR") return node.Invalid("unknown mode '" + mode + "' (expected DCR or CRD)");
  }
  return a;
}

Result<SpaceToDepthAttrs> ParseSpaceToDepth(const ir::Node& node, int64_t) {
  SpaceToDepthAttrs a;
  if (!node.FindAttr("blocksize")) return node.Invalid("attribute 'blocksize' is required");
  KILN_ASSIGN_OR_RETURN(a.blocksize, node.GetInt("blocksize", 0));
  if (a.blocksize < 1) return node.Invalid("attribute 'blocksize' must be positive, got " + std::to_string(a.blocksize));
  return a;
}

namespace {

Result<const ir::Dims*> Rank4(const InferContext& ctx) {
  const ir::Dims* in = ctx.input_dims(0);
  if (in && in->size() != 4) return ctx.Error("input must have rank 4 (N,C,H,W), got " + ir::DimsToString(*in));
  return in;
}

Status InferDepthToSpace(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_ASSIGN_OR_RETURN(DepthToSpaceAttrs a, ParseDepthToSpace(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(const ir::Dims* in, Rank4(ctx));
  if (!in) {
    ctx.set_output(0, ctx.input_dtype(0), UnknownDims(4));
    return Status::Ok();
  }
  const int64_t b = a.blocksize;
  KILN_ASSIGN_OR_RETURN(const int64_t bb, CheckedDim(ctx, b, b));
  ir::Dims out = *in;
  const ir::Dim& c = (*in)[1];
  if (c.known() && c.value % bb != 0)
    return ctx.Error("channels " + std::to_string(c.value) + " are not a multiple of blocksize^2 = " + std::to_string(bb));
  out[1] = c.known() ? ir::Dim::Known(c.value / bb) : ir::Dim{};
  for (size_t k = 2; k < 4; ++k) {
    out[k] = ir::Dim{};
    if (!(*in)[k].known()) continue;
    KILN_ASSIGN_OR_RETURN(int64_t v, CheckedDim(ctx, (*in)[k].value, b));
    out[k] = ir::Dim::Known(v);
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::Ok();
}

Status InferSpaceToDepth(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_ASSIGN_OR_RETURN(SpaceToDepthAttrs a, ParseSpaceToDepth(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(const ir::Dims* in, Rank4(ctx));
  if (!in) {
    ctx.set_output(0, ctx.input_dtype(0), UnknownDims(4));
    return Status::Ok();
  }
  const int64_t b = a.blocksize;
  ir::Dims out = *in;
  out[1] = ir::Dim{};
  if ((*in)[1].known()) {
    KILN_ASSIGN_OR_RETURN(int64_t bb, CheckedDim(ctx, b, b));
    KILN_ASSIGN_OR_RETURN(int64_t v, CheckedDim(ctx, (*in)[1].value, bb));
    out[1] = ir::Dim::Known(v);
  }
  for (size_t k = 2; k < 4; ++k) {
    const ir::Dim& d = (*in)[k];
    if (d.known() && d.value % b != 0)
      return ctx.Error("spatial dim " + std::to_string(d.value) + " is not a multiple of blocksize " + std::to_string(b));
    out[k] = d.known() ? ir::Dim::Known(d.value / b) : ir::Dim{};
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------- ReverseSequence

Result<ReverseSequenceAttrs> ParseReverseSequence(const ir::Node& node, int64_t) {
  ReverseSequenceAttrs a;
  KILN_ASSIGN_OR_RETURN(a.time_axis, node.GetInt("time_axis", 0));
  KILN_ASSIGN_OR_RETURN(a.batch_axis, node.GetInt("batch_axis", 1));
  if ((a.time_axis != 0 && a.time_axis != 1) || (a.batch_axis != 0 && a.batch_axis != 1) || a.time_axis == a.batch_axis)
    return node.Invalid("time_axis (" + std::to_string(a.time_axis) + ") and batch_axis (" + std::to_string(a.batch_axis) +
                        ") must be 0 and 1 in some order");
  return a;
}

namespace {

Status InferReverseSequence(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_ASSIGN_OR_RETURN(ReverseSequenceAttrs a, ParseReverseSequence(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
  const ir::Dims* in = ctx.input_dims(0);
  const ir::Dims* lens = ctx.input_dims(1);
  if (in && in->size() < 2) return ctx.Error("input must have rank >= 2, got " + ir::DimsToString(*in));
  if (lens && lens->size() != 1) return ctx.Error("input 'sequence_lens' must be 1-D, got " + ir::DimsToString(*lens));
  if (in && lens) {
    const ir::Dim& b = (*in)[static_cast<size_t>(a.batch_axis)];
    if (b.known() && (*lens)[0].known() && b.value != (*lens)[0].value)
      return ctx.Error("sequence_lens has " + std::to_string((*lens)[0].value) + " values for a batch of " + std::to_string(b.value));
  }
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------- Trilu

Result<TriluAttrs> ParseTrilu(const ir::Node& node, int64_t) {
  TriluAttrs a;
  KILN_ASSIGN_OR_RETURN(int64_t u, node.GetInt("upper", 1));
  a.upper = u != 0;
  return a;
}

namespace {

Status InferTrilu(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 2));
  KILN_ASSIGN_OR_RETURN(TriluAttrs a, ParseTrilu(ctx.node(), ctx.opset()));
  (void)a;
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
  const ir::Dims* in = ctx.input_dims(0);
  if (in && in->size() < 2) return ctx.Error("input must have rank >= 2, got " + ir::DimsToString(*in));
  if (const ir::Dims* k = ctx.input_dims(1); k && !k->empty() && !(k->size() == 1 && (*k)[0].value == 1))
    return ctx.Error("input 'k' must be a scalar, got " + ir::DimsToString(*k));
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------- Compress

Result<CompressAttrs> ParseCompress(const ir::Node& node, int64_t) {
  CompressAttrs a;
  if (node.FindAttr("axis")) {
    KILN_ASSIGN_OR_RETURN(int64_t ax, node.GetInt("axis", 0));
    a.axis = ax;
  }
  return a;
}

namespace {

Status InferCompress(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_ASSIGN_OR_RETURN(CompressAttrs a, ParseCompress(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kBool}));
  const DType dt = ctx.input_dtype(0);
  if (const ir::Dims* c = ctx.input_dims(1); c && c->size() != 1)
    return ctx.Error("input 'condition' must be 1-D, got " + ir::DimsToString(*c));
  // The output length is the number of true values (data dependent).
  ir::Dim count;
  if (const Tensor* c = ctx.input_value(1); c && c->defined() && c->dtype() == DType::kBool) {
    int64_t n = 0;
    for (int64_t i = 0; i < c->numel(); ++i) n += c->GetAsDouble(i) != 0.0;
    count = ir::Dim::Known(n);
  }
  if (!a.axis) {
    ctx.set_output(0, dt, ir::Dims{count});
    return Status::Ok();
  }
  const ir::Dims* in = ctx.input_dims(0);
  if (!in) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, *a.axis, static_cast<int64_t>(in->size())));
  ir::Dims out = *in;
  out[static_cast<size_t>(axis)] = count;
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

}  // namespace

void RegisterDataMovementMoreOps(OpRegistry& r) {
  r.Register({"", "Pad", 1, 1000, InferPad});
  r.Register({"", "DepthToSpace", 1, 1000, InferDepthToSpace});
  r.Register({"", "SpaceToDepth", 1, 1000, InferSpaceToDepth});
  r.Register({"", "ReverseSequence", 10, 1000, InferReverseSequence});
  r.Register({"", "Trilu", 14, 1000, InferTrilu});
  r.Register({"", "Compress", 9, 1000, InferCompress});
}

}  // namespace kiln::ops
