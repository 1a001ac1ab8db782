// Elementwise ops with several inputs: arithmetic, comparisons, logic, Pow,
// Mod, BitShift, PRelu, Where and the variadic Sum/Mean/Max/Min.
#include <string>

#include "ops/elementwise.h"
#include "ops/infer_util.h"

namespace kiln::ops {

Result<BinaryAttrs> ParseBinary(const ir::Node& node, int64_t opset) {
  BinaryAttrs a;
  const std::string& op = node.op_type;
  const bool has_legacy = op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "And" ||
                          op == "Or" || op == "Xor" || op == "Equal" || op == "Greater" || op == "Less";
  // Opset 7 replaced `broadcast`/`axis` by numpy broadcasting.
  if (has_legacy && opset < 7) {
    a.legacy = true;
    KILN_ASSIGN_OR_RETURN(int64_t b, node.GetInt("broadcast", 0));
    a.legacy_broadcast = b != 0;
    if (node.FindAttr("axis")) {
      KILN_ASSIGN_OR_RETURN(int64_t ax, node.GetInt("axis", 0));
      a.axis = ax;
    }
  }
  if (op == "Mod") {
    KILN_ASSIGN_OR_RETURN(int64_t f, node.GetInt("fmod", 0));
    if (f != 0 && f != 1) return node.Invalid("attribute 'fmod' must be 0 or 1, got " + std::to_string(f));
    a.fmod = f == 1;
  }
  if (op == "BitShift") {
    if (!node.FindAttr("direction")) return node.Invalid("missing required attribute 'direction'");
    KILN_ASSIGN_OR_RETURN(std::string d, node.GetString("direction", ""));
    if (d == "LEFT") a.shift_left = true;
    else if (d == "RIGHT") a.shift_left = false;
    else return node.Invalid("attribute 'direction' must be LEFT or RIGHT, got '" + d + "'");
  }
  return a;
}

namespace {

// Offset of B's first dim inside A's dims under the legacy rules.
Result<int64_t> LegacyOffset(const ir::Node& node, const BinaryAttrs& a, int64_t rank_a, int64_t rank_b) {
  if (rank_b > rank_a)
    return node.Invalid("legacy broadcast: input B has rank " + std::to_string(rank_b) + ", more than A's rank " +
                        std::to_string(rank_a));
  int64_t off = rank_a - rank_b;
  if (a.axis) {
    KILN_ASSIGN_OR_RETURN(off, NormalizeAxis(node, *a.axis, rank_a == 0 ? 1 : rank_a));
  }
  if (off + rank_b > rank_a)
    return node.Invalid("legacy broadcast: B of rank " + std::to_string(rank_b) + " at axis " + std::to_string(off) +
                        " does not fit A's rank " + std::to_string(rank_a));
  return off;
}

}  // namespace

Result<ir::Dims> LegacyBroadcastDims(const ir::Node& node, const BinaryAttrs& a, const ir::Dims& ad,
                                     const ir::Dims& bd) {
  if (!a.legacy) return bd;
  if (!a.legacy_broadcast) {
    // broadcast=0: the shapes must be equal.
    bool bad = ad.size() != bd.size();
    for (size_t k = 0; !bad && k < ad.size(); ++k) bad = ad[k].known() && bd[k].known() && ad[k].value != bd[k].value;
    if (bad)
      return node.Invalid("shapes " + ir::DimsToString(ad) + " and " + ir::DimsToString(bd) +
                          " differ and attribute 'broadcast' is 0 (opset < 7)");
    return bd;
  }
  KILN_ASSIGN_OR_RETURN(int64_t off, LegacyOffset(node, a, static_cast<int64_t>(ad.size()), static_cast<int64_t>(bd.size())));
  ir::Dims out(ad.size(), ir::Dim::Known(1));
  for (size_t k = 0; k < bd.size(); ++k) {
    const ir::Dim& b = bd[k];
    const ir::Dim& x = ad[static_cast<size_t>(off) + k];
    if (b.known() && x.known() && b.value != 1 && b.value != x.value)
      return node.Invalid("legacy broadcast: B's shape " + ir::DimsToString(bd) + " does not match A's shape " +
                          ir::DimsToString(ad) + " at axis " + std::to_string(off));
    out[static_cast<size_t>(off) + k] = b;
  }
  return out;
}

Result<Shape> LegacyBroadcastShape(const ir::Node& node, const BinaryAttrs& a, const Shape& as, const Shape& bs) {
  KILN_ASSIGN_OR_RETURN(ir::Dims d, LegacyBroadcastDims(node, a, ir::DimsFromShape(as), ir::DimsFromShape(bs)));
  Shape s;
  for (const ir::Dim& x : d) s.push_back(x.value);
  return s;
}

Result<ir::Dims> PReluSlopeDims(const ir::Node& node, int64_t opset, const ir::Dims& x, const ir::Dims& slope) {
  if (opset >= 7) return slope;
  int64_t n = 1;
  bool known = true;
  for (const ir::Dim& d : slope) {
    if (!d.known()) known = false;
    else n *= d.value;
  }
  if (known && n == 1) return ir::Dims{};  // one shared slope
  if (slope.size() == 1 && x.size() >= 2) {
    if (slope[0].known() && x[1].known() && slope[0].value != x[1].value)
      return node.Invalid("slope of " + std::to_string(slope[0].value) + " elements does not match the " +
                          std::to_string(x[1].value) + " channels of X (opset < 7)");
    ir::Dims out(x.size() - 1, ir::Dim::Known(1));
    out[0] = slope[0];
    return out;
  }
  return slope;
}

Result<Shape> PReluSlopeShape(const ir::Node& node, int64_t opset, const Shape& x, const Shape& slope) {
  KILN_ASSIGN_OR_RETURN(ir::Dims d, PReluSlopeDims(node, opset, ir::DimsFromShape(x), ir::DimsFromShape(slope)));
  Shape s;
  for (const ir::Dim& v : d) s.push_back(v.value);
  return s;
}

namespace {

struct BinarySpec {
  DTypeClass a_class;
  DTypeClass b_class;
  bool same_dtype;
  bool bool_out;
};

Status InferBinary(InferContext& ctx, const BinarySpec& spec) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("expects 2 inputs");
  KILN_ASSIGN_OR_RETURN(BinaryAttrs attrs, ParseBinary(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckInputClass(ctx, 0, spec.a_class));
  KILN_RETURN_IF_ERROR(CheckInputClass(ctx, 1, spec.b_class));
  if (spec.same_dtype) KILN_RETURN_IF_ERROR(CheckSameDType(ctx, 0, 1));
  const std::string& op = ctx.node().op_type;
  if (op == "Mod" && !attrs.fmod && DTypeIsFloat(ctx.input_dtype(0)))
    return ctx.Error("attribute 'fmod' must be 1 for floating-point inputs");
  std::optional<ir::Dims> dims;
  const ir::Dims* a = ctx.input_dims(0);
  const ir::Dims* b = ctx.input_dims(1);
  if (attrs.legacy) {
    if (a && b) {
      KILN_ASSIGN_OR_RETURN(ir::Dims bb, LegacyBroadcastDims(ctx.node(), attrs, *a, *b));
      (void)bb;
    }
    if (a) dims = *a;  // legacy broadcasting never changes A's shape
  } else if (a && b) {
    auto r = BroadcastDims(*a, *b);
    if (!r.ok()) return ctx.Error(r.status().message());
    dims = std::move(r).value();
  }
  DType out = spec.bool_out ? DType::kBool : ctx.input_dtype(0);
  SetOutputDims(ctx, 0, out, dims);
  return Status::Ok();
}

InferFn Binary(BinarySpec spec) {
  return [spec](InferContext& ctx) { return InferBinary(ctx, spec); };
}

Status InferPRelu(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  if (!ctx.has_input(1)) return ctx.Error("expects 2 inputs");
  KILN_RETURN_IF_ERROR(CheckInputClass(ctx, 0, ctx.opset() >= 9 ? DTypeClass::kNumeric : DTypeClass::kFloat));
  KILN_RETURN_IF_ERROR(CheckSameDType(ctx, 0, 1));
  const ir::Dims* x = ctx.input_dims(0);
  const ir::Dims* s = ctx.input_dims(1);
  if (x && s) {
    KILN_ASSIGN_OR_RETURN(ir::Dims sd, PReluSlopeDims(ctx.node(), ctx.opset(), *x, *s));
    // The slope broadcasts unidirectionally to X: the result keeps X's shape.
    auto r = BroadcastDims(*x, sd);
    if (!r.ok()) return ctx.Error("slope " + r.status().message());
    if (r->size() != x->size()) return ctx.Error("slope has rank " + std::to_string(s->size()) + ", more than X's");
    for (size_t k = 0; k < x->size(); ++k) {
      const ir::Dim& xd = (*x)[k];
      const ir::Dim& rd = (*r)[k];
      if (xd.known() && rd.known() && xd.value != rd.value)
        return ctx.Error("slope shape " + ir::DimsToString(*s) + " does not broadcast to X's shape " + ir::DimsToString(*x));
    }
  }
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

Status InferWhere(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, 3));
  for (size_t i = 0; i < 3; ++i)
    if (!ctx.has_input(i)) return ctx.Error("expects 3 inputs");
  KILN_RETURN_IF_ERROR(CheckInputClass(ctx, 0, DTypeClass::kBool));
  KILN_RETURN_IF_ERROR(CheckInputClass(ctx, 1, DTypeClass::kAny));
  KILN_RETURN_IF_ERROR(CheckSameDType(ctx, 1, 2));
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Dims> dims, BroadcastInputs(ctx));
  SetOutputDims(ctx, 0, ctx.input_dtype(1), dims);
  return Status::Ok();
}

// Sum, Mean, Max, Min: one or more inputs of one dtype, broadcast together
// (Sum-8/Max-8/...; opsets 6-7 required equal shapes, a special case).
InferFn Variadic(bool numeric_from_12) {
  return [numeric_from_12](InferContext& ctx) -> Status {
    if (ctx.num_inputs() < 1) return ctx.Error("expects at least 1 input");
    DTypeClass cls = numeric_from_12 && ctx.opset() >= 12 ? DTypeClass::kNumeric : DTypeClass::kFloat;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      if (!ctx.has_input(i)) return ctx.Error("input " + std::to_string(i) + " is missing");
      KILN_RETURN_IF_ERROR(CheckInputClass(ctx, i, cls));
      KILN_RETURN_IF_ERROR(CheckSameDType(ctx, 0, i));
    }
    KILN_ASSIGN_OR_RETURN(std::optional<ir::Dims> dims, BroadcastInputs(ctx));
    SetOutputDims(ctx, 0, ctx.input_dtype(0), dims);
    return Status::Ok();
  };
}

}  // namespace

void RegisterElementwiseBinaryOps(OpRegistry& r) {
  using C = DTypeClass;
  const BinarySpec arith{C::kNumeric, C::kNumeric, true, false};
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) r.Register({"", op, 1, 1000, Binary(arith)});
  // Pow-12: base int32/int64/float types, exponent any numeric type, output
  // the base's type. Before 12 both had one float type.
  r.Register({"", "Pow", 1, 11, Binary({C::kFloat, C::kFloat, true, false})});
  r.Register({"", "Pow", 12, 1000, Binary({C::kNumeric, C::kNumeric, false, false})});
  r.Register({"", "Mod", 10, 1000, Binary(arith)});
  r.Register({"", "BitShift", 11, 1000, Binary({C::kUnsigned, C::kUnsigned, true, false})});
  for (const char* op : {"And", "Or", "Xor"}) r.Register({"", op, 1, 1000, Binary({C::kBool, C::kBool, true, true})});
  r.Register({"", "Equal", 1, 1000, Binary({C::kAny, C::kAny, true, true})});
  for (const char* op : {"Greater", "Less"}) r.Register({"", op, 1, 1000, Binary({C::kNumeric, C::kNumeric, true, true})});
  for (const char* op : {"GreaterOrEqual", "LessOrEqual"})
    r.Register({"", op, 12, 1000, Binary({C::kNumeric, C::kNumeric, true, true})});
  r.Register({"", "PRelu", 1, 1000, InferPRelu});
  r.Register({"", "Where", 9, 1000, InferWhere});
  r.Register({"", "Sum", 1, 1000, Variadic(false)});
  r.Register({"", "Mean", 1, 1000, Variadic(false)});
  r.Register({"", "Max", 1, 1000, Variadic(true)});
  r.Register({"", "Min", 1, 1000, Variadic(true)});
}

}  // namespace kiln::ops
