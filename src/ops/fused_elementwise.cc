// FusedElementwise (com.kiln opset 1, see fused.h): its steps, read from the
// attributes once for the pass, the reference composition and the cpu
// kernel, and its shape inference (the broadcast of its inputs).
#include <string>

#include "ops/families.h"
#include "ops/fused.h"
#include "ops/infer_util.h"
#include "support/check.h"

namespace kiln::ops {
namespace {

struct StepOp {
  const char* name;
  int arity;
  int num_params;  // alpha, beta as ai.onnx attributes
};
constexpr StepOp kStepOps[] = {
    {"Add", 2, 0},  {"Sub", 2, 0},     {"Mul", 2, 0},       {"Div", 2, 0},  {"Max", 2, 0},       {"Min", 2, 0},
    {"Relu", 1, 0}, {"Sigmoid", 1, 0}, {"Tanh", 1, 0},      {"Exp", 1, 0},  {"Neg", 1, 0},       {"Abs", 1, 0},
    {"Sqrt", 1, 0}, {"HardSwish", 1, 0}, {"LeakyRelu", 1, 1}, {"HardSigmoid", 1, 2},
};

const StepOp* FindStepOp(const std::string& op) {
  for (const auto& s : kStepOps)
    if (op == s.name) return &s;
  return nullptr;
}

// Every step broadcasts its operands (numpy rules) and every input reaches
// Y through the steps, so Y's shape is the broadcast of all inputs and its
// dtype theirs. Cheap on purpose: a node whose input dims are known only at
// run time is inferred again at every run, so the steps are not read here
// (every provider's kernel reads and checks them once, at session creation,
// failing the session on a malformed node).
Status InferElementwise(InferContext& ctx) {
  DType dtype = DType::kUndefined;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const DType d = ctx.input_dtype(i);
    if (d == DType::kUndefined) continue;
    if (d != DType::kFloat32 && d != DType::kFloat64 && d != DType::kFloat16 && d != DType::kBFloat16)
      return ctx.Error("input " + std::to_string(i) + " has dtype " + DTypeName(d) + ", expected a floating point type");
    if (dtype != DType::kUndefined && d != dtype)
      return ctx.Error("input " + std::to_string(i) + " has dtype " + DTypeName(d) + ", input 0 " + DTypeName(dtype));
    dtype = d;
  }
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Dims> dims, BroadcastInputs(ctx));
  ctx.set_output(0, dtype, std::move(dims));
  return Status::Ok();
}

}  // namespace

int ElementwiseStepArity(const std::string& op) {
  const StepOp* s = FindStepOp(op);
  return s ? s->arity : 0;
}

Result<std::vector<ElementwiseStep>> ParseElementwiseSteps(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> ops, node.GetStrings("steps"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> operands, node.GetInts("step_inputs"));
  KILN_ASSIGN_OR_RETURN(std::vector<float> params, node.GetFloats("step_params"));
  if (ops.empty()) return node.Invalid("has no steps");
  if (params.size() != 2 * ops.size())
    return node.Invalid("step_params has " + std::to_string(params.size()) + " values, expected 2 per step (" +
                        std::to_string(2 * ops.size()) + ")");
  if (node.outputs.size() != 1 || !node.HasOutput(0)) return node.Invalid("takes exactly one output");
  std::vector<ElementwiseStep> steps(ops.size());
  std::vector<bool> read(ops.size(), false);
  size_t next = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    const StepOp* op = FindStepOp(ops[k]);
    const std::string where = "step " + std::to_string(k) + " (" + ops[k] + ")";
    if (!op) return node.Invalid(where + " is not an op FusedElementwise runs");
    if (next + static_cast<size_t>(op->arity) > operands.size())
      return node.Invalid("step_inputs has " + std::to_string(operands.size()) + " values, too few for the steps");
    ElementwiseStep& s = steps[k];
    s.op = ops[k];
    s.alpha = params[2 * k];
    s.beta = params[2 * k + 1];
    for (int i = 0; i < op->arity; ++i) {
      const int64_t o = operands[next++];
      if (o >= 0 && (static_cast<size_t>(o) >= node.inputs.size() || !node.HasInput(static_cast<size_t>(o))))
        return node.Invalid(where + " reads input " + std::to_string(o) + ", which the node does not have");
      if (o < 0 && static_cast<uint64_t>(-(o + 1)) >= k)
        return node.Invalid(where + " reads step " + std::to_string(-(o + 1)) + ", which is not an earlier step");
      if (o < 0) read[static_cast<size_t>(-(o + 1))] = true;
      s.operands.push_back(o);
    }
  }
  if (next != operands.size())
    return node.Invalid("step_inputs has " + std::to_string(operands.size()) + " values, the steps read " + std::to_string(next));
  for (size_t k = 0; k + 1 < steps.size(); ++k)
    if (!read[k]) return node.Invalid("the result of step " + std::to_string(k) + " is never read");
  // Every input must reach Y (the inference takes Y's shape as their broadcast).
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    bool used = false;
    for (const ElementwiseStep& s : steps)
      for (int64_t o : s.operands) used = used || o == static_cast<int64_t>(i);
    if (!used) return node.Invalid("input " + std::to_string(i) + " is read by no step");
  }
  return steps;
}

std::vector<ir::Node> ElementwiseStepNodes(const ir::Node& node, const std::vector<ElementwiseStep>& steps) {
  const std::string base = node.name.empty() ? node.outputs[0] : node.name;
  auto result = [&](size_t k) { return k + 1 == steps.size() ? node.outputs[0] : base + "/step" + std::to_string(k); };
  std::vector<ir::Node> nodes;
  for (size_t k = 0; k < steps.size(); ++k) {
    ir::Node n;
    n.name = base + "/step" + std::to_string(k);
    n.op_type = steps[k].op;
    for (int64_t o : steps[k].operands)
      n.inputs.push_back(o >= 0 ? node.inputs[static_cast<size_t>(o)] : result(static_cast<size_t>(-(o + 1))));
    n.outputs = {result(k)};
    const StepOp* op = FindStepOp(steps[k].op);
    if (op && op->num_params >= 1) n.attrs["alpha"] = ir::Attribute::Float("alpha", steps[k].alpha);
    if (op && op->num_params >= 2) n.attrs["beta"] = ir::Attribute::Float("beta", steps[k].beta);
    nodes.push_back(std::move(n));
  }
  return nodes;
}

void RegisterFusedElementwise(OpRegistry& r) {
  // The composition instantiates each step at this opset.
  for (const auto& s : kStepOps) KILN_CHECK(r.Find("", s.name, kElementwiseStepOpset));
  r.Register({kKilnDomain, "FusedElementwise", 1, 1, InferElementwise});
}

}  // namespace kiln::ops
