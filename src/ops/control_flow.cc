// Control-flow ops: If (1+), Loop (1+), Scan (8, 9+), SequenceMap (17+).
// Their output types come from the bodies' declared output types merged
// with what the node's inputs say; dims that depend on how the body runs
// (trip counts, shapes that change per iteration) stay unknown and the
// kernels allocate with explicit shapes.
#include "ops/control_flow.h"

#include "ops/families.h"
#include "ops/infer_util.h"
#include "ops/sequence.h"

namespace kiln::ops {
namespace {

using K = ir::TypeInfo::Kind;

Result<const ir::Graph*> GraphAttr(const ir::Node& node, const std::string& name) {
  const ir::Attribute* a = node.FindAttr(name);
  if (!a) return node.Invalid("attribute '" + name + "' (a graph) is required");
  if (a->type != ir::Attribute::Type::kGraph || !a->g)
    return node.Invalid("attribute '" + name + "' must be a graph, got " + AttributeTypeName(a->type));
  return a->g.get();
}

std::string Count(size_t n) { return std::to_string(n); }

}  // namespace

Result<IfAttrs> ParseIf(const ir::Node& node, int64_t opset) {
  IfAttrs a;
  KILN_ASSIGN_OR_RETURN(a.then_branch, GraphAttr(node, "then_branch"));
  KILN_ASSIGN_OR_RETURN(a.else_branch, GraphAttr(node, "else_branch"));
  const size_t n = node.outputs.size();
  if (a.then_branch->outputs.size() != n || a.else_branch->outputs.size() != n)
    return node.Invalid("has " + Count(n) + " outputs but then_branch has " + Count(a.then_branch->outputs.size()) +
                        " and else_branch " + Count(a.else_branch->outputs.size()));
  if (!a.then_branch->inputs.empty() || !a.else_branch->inputs.empty())
    return node.Invalid("If branches take no inputs");
  return a;
}

Result<LoopAttrs> ParseLoop(const ir::Node& node, int64_t opset) {
  LoopAttrs a;
  KILN_ASSIGN_OR_RETURN(a.body, GraphAttr(node, "body"));
  if (node.inputs.size() < 2) return node.Invalid("needs inputs M and cond (either may be empty names)");
  a.num_carried = node.inputs.size() - 2;
  if (node.outputs.size() < a.num_carried)
    return node.Invalid("has " + Count(a.num_carried) + " loop-carried inputs but only " + Count(node.outputs.size()) + " outputs");
  a.num_scan = node.outputs.size() - a.num_carried;
  if (a.body->inputs.size() != 2 + a.num_carried)
    return node.Invalid("body takes " + Count(a.body->inputs.size()) + " inputs, expected 2 + " + Count(a.num_carried) +
                        " (iteration number, condition, loop-carried values)");
  if (a.body->outputs.size() != 1 + a.num_carried + a.num_scan)
    return node.Invalid("body has " + Count(a.body->outputs.size()) + " outputs, expected 1 + " + Count(a.num_carried) + " + " +
                        Count(a.num_scan) + " (condition, loop-carried values, scan outputs)");
  return a;
}

Result<ScanAttrs> ParseScan(const ir::Node& node, int64_t opset) {
  ScanAttrs a;
  KILN_ASSIGN_OR_RETURN(a.body, GraphAttr(node, "body"));
  if (!node.FindAttr("num_scan_inputs")) return node.Invalid("attribute 'num_scan_inputs' is required");
  KILN_ASSIGN_OR_RETURN(int64_t m, node.GetInt("num_scan_inputs", 0));
  a.first_input = opset < 9 ? 1 : 0;  // opset 8's first input is sequence_lens
  if (m < 1 || static_cast<size_t>(m) + a.first_input > node.inputs.size())
    return node.Invalid("num_scan_inputs " + std::to_string(m) + " does not fit its " + Count(node.inputs.size()) + " inputs");
  a.num_scan_inputs = static_cast<size_t>(m);
  a.num_states = node.inputs.size() - a.first_input - a.num_scan_inputs;
  if (node.outputs.size() < a.num_states)
    return node.Invalid("has " + Count(a.num_states) + " state inputs but only " + Count(node.outputs.size()) + " outputs");
  a.num_scan_outputs = node.outputs.size() - a.num_states;
  if (a.body->inputs.size() != a.num_states + a.num_scan_inputs)
    return node.Invalid("body takes " + Count(a.body->inputs.size()) + " inputs, expected " + Count(a.num_states) + " states + " +
                        Count(a.num_scan_inputs) + " scan inputs");
  if (a.body->outputs.size() != a.num_states + a.num_scan_outputs)
    return node.Invalid("body has " + Count(a.body->outputs.size()) + " outputs, expected " + Count(a.num_states) + " states + " +
                        Count(a.num_scan_outputs) + " scan outputs");
  auto list = [&](const std::string& name, size_t n, std::vector<int64_t>* out, bool direction) -> Status {
    KILN_ASSIGN_OR_RETURN(*out, node.GetInts(name, std::vector<int64_t>(n, 0)));
    if (out->size() != n) return node.Invalid("attribute '" + name + "' has " + Count(out->size()) + " values, expected " + Count(n));
    if (direction)
      for (int64_t d : *out)
        if (d != 0 && d != 1) return node.Invalid("attribute '" + name + "' values must be 0 or 1, got " + std::to_string(d));
    return Status::Ok();
  };
  if (opset < 9) {
    // Opset 8: scan over dim 1 of every scan input; `directions` per input.
    a.input_axes.assign(a.num_scan_inputs, 1);
    a.output_axes.assign(a.num_scan_outputs, 1);
    a.output_directions.assign(a.num_scan_outputs, 0);
    KILN_RETURN_IF_ERROR(list("directions", a.num_scan_inputs, &a.input_directions, true));
  } else {
    KILN_RETURN_IF_ERROR(list("scan_input_axes", a.num_scan_inputs, &a.input_axes, false));
    KILN_RETURN_IF_ERROR(list("scan_input_directions", a.num_scan_inputs, &a.input_directions, true));
    KILN_RETURN_IF_ERROR(list("scan_output_axes", a.num_scan_outputs, &a.output_axes, false));
    KILN_RETURN_IF_ERROR(list("scan_output_directions", a.num_scan_outputs, &a.output_directions, true));
  }
  return a;
}

Result<SequenceMapAttrs> ParseSequenceMap(const ir::Node& node, int64_t opset) {
  SequenceMapAttrs a;
  KILN_ASSIGN_OR_RETURN(a.body, GraphAttr(node, "body"));
  if (node.inputs.empty() || node.inputs[0].empty()) return node.Invalid("input 0 (input_sequence) is required");
  if (a.body->inputs.size() != node.inputs.size())
    return node.Invalid("body takes " + Count(a.body->inputs.size()) + " inputs, the node has " + Count(node.inputs.size()));
  if (a.body->outputs.size() != node.outputs.size())
    return node.Invalid("body has " + Count(a.body->outputs.size()) + " outputs, the node has " + Count(node.outputs.size()));
  return a;
}

namespace {

// A bool (If/Loop cond) or int64 (Loop M) input holding one element.
Status CheckScalarInput(const InferContext& ctx, size_t i, DType dt, const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  const ir::TypeInfo& t = ctx.input_type(i);
  if (t.kind != K::kUnknown && t.kind != K::kTensor) return ctx.Error(std::string(what) + " must be a tensor, got " + t.ToString());
  if (t.dtype != DType::kUndefined && t.dtype != dt)
    return ctx.Error(std::string(what) + " must be " + DTypeName(dt) + ", got " + DTypeName(t.dtype));
  if (t.shape) {
    for (const ir::Dim& d : *t.shape)
      if (d.known() && d.value != 1)
        return ctx.Error(std::string(what) + " must hold one element, got shape " + ir::DimsToString(*t.shape));
  }
  return Status::Ok();
}

Status InferIf(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_ASSIGN_OR_RETURN(IfAttrs a, ParseIf(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckScalarInput(ctx, 0, DType::kBool, "cond"));
  const Tensor* cond = ctx.input_value(0);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const ir::TypeInfo& t = a.then_branch->outputs[i].type;
    const ir::TypeInfo& e = a.else_branch->outputs[i].type;
    // When cond is known (always at run time) only the branch taken matters.
    if (cond && cond->numel() == 1) ctx.set_output(i, cond->GetAsDouble(0) != 0 ? t : e);
    else ctx.set_output(i, MergeTypes(t, e));
  }
  return Status::Ok();
}

// Stacked scan output: `count` (unknown when < 0) inserted at `axis` of the
// per-iteration type.
ir::TypeInfo StackedType(const InferContext& ctx, const ir::TypeInfo& per_iter, int64_t axis, int64_t count, Status* st) {
  ir::TypeInfo t = ir::TypeInfo::Tensor(per_iter.kind == K::kTensor ? per_iter.dtype : DType::kUndefined);
  if (per_iter.kind != K::kTensor || !per_iter.shape) return t;
  ir::Dims d = *per_iter.shape;
  auto ax = NormalizeAxis(ctx, axis, static_cast<int64_t>(d.size()) + 1);
  if (!ax.ok()) { *st = ax.status(); return t; }
  d.insert(d.begin() + *ax, count >= 0 ? ir::Dim::Known(count) : ir::Dim{});
  t.shape = d;
  return t;
}

Status InferLoop(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(LoopAttrs a, ParseLoop(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckScalarInput(ctx, 0, DType::kInt64, "M"));
  KILN_RETURN_IF_ERROR(CheckScalarInput(ctx, 1, DType::kBool, "cond"));
  for (size_t i = 0; i < a.num_carried; ++i)
    ctx.set_output(i, MergeTypes(ctx.input_type(2 + i), a.body->outputs[1 + i].type));
  // The trip count is M exactly when no condition can stop the loop early.
  int64_t trips = -1;
  if (!ctx.has_input(1)) {
    auto m = ctx.input_ints(0);
    if (m && m->size() == 1) trips = std::max<int64_t>((*m)[0], 0);
  }
  Status st;
  for (size_t k = 0; k < a.num_scan; ++k)
    ctx.set_output(a.num_carried + k, StackedType(ctx, a.body->outputs[1 + a.num_carried + k].type, 0, trips, &st));
  return st;
}

Status InferScan(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ScanAttrs a, ParseScan(ctx.node(), ctx.opset()));
  const bool v8 = ctx.opset() < 9;
  // The scan length (and opset 8's batch size) from the scan inputs' dims.
  ir::Dim len, batch;
  for (size_t j = 0; j < a.num_scan_inputs; ++j) {
    const size_t in = a.first_input + a.num_states + j;
    const ir::Dims* d = ctx.input_dims(in);
    if (!d) continue;
    if (v8 && d->size() < 2) return ctx.Error("scan input " + Count(j) + " must have rank >= 2 (batch, sequence, ...)");
    KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a.input_axes[j], static_cast<int64_t>(d->size())));
    const ir::Dim& dj = (*d)[static_cast<size_t>(axis)];
    if (dj.known()) {
      if (len.known() && len.value != dj.value)
        return ctx.Error("scan inputs have different lengths " + std::to_string(len.value) + " and " + std::to_string(dj.value));
      len = dj;
    }
    if (v8 && (*d)[0].known()) batch = (*d)[0];
  }
  for (size_t i = 0; i < a.num_states; ++i) {
    ir::TypeInfo body_t = a.body->outputs[i].type;
    if (v8 && body_t.kind == K::kTensor && body_t.shape) body_t.shape->insert(body_t.shape->begin(), batch);
    else if (v8) body_t = MergeTypes(body_t, {});
    ctx.set_output(i, MergeTypes(ctx.input_type(a.first_input + i), body_t));
  }
  Status st;
  for (size_t k = 0; k < a.num_scan_outputs; ++k) {
    const ir::TypeInfo& body_t = a.body->outputs[a.num_states + k].type;
    ir::TypeInfo t = StackedType(ctx, body_t, v8 ? 0 : a.output_axes[k], len.known() ? len.value : -1, &st);
    if (v8 && t.shape) t.shape->insert(t.shape->begin(), batch);
    ctx.set_output(a.num_states + k, t);
  }
  return st;
}

Status InferSequenceMap(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(SequenceMapAttrs a, ParseSequenceMap(ctx.node(), ctx.opset()));
  const ir::TypeInfo& s = ctx.input_type(0);
  if (s.kind != K::kUnknown && s.kind != K::kSequence) return ctx.Error("input 0 must be a sequence, got " + s.ToString());
  for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, SequenceType(a.body->outputs[i].type));
  return Status::Ok();
}

}  // namespace

void RegisterControlFlowOps(OpRegistry& r) {
  r.Register({"", "If", 1, 1000, InferIf});
  r.Register({"", "Loop", 1, 1000, InferLoop});
  r.Register({"", "Scan", 8, 1000, InferScan});
  r.Register({"", "SequenceMap", 17, 1000, InferSequenceMap});
}

}  // namespace kiln::ops
