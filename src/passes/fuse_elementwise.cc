// fuse_elementwise: a tree of elementwise nodes whose intermediate values
// have one reader each becomes one FusedElementwise (ops/fused.h), so the
// intermediates never reach memory. PP-OCR det's attention blocks compute
// x + x * s (s per channel), then add an upsampled map: three passes over a
// 160x160 map, each reading and writing it, where one pass does.
//
//   Mul(x, s) -> Add(x, .) -> Add(., r)   ->  FusedElementwise(x, s, r)
//       steps [Mul, Add, Add], step_inputs [0, 1,  0, -1,  -2, 2]
//
// The ops are those FusedElementwise runs (ElementwiseStepArity > 0).
// Preconditions: every node of the tree has a float32 output of the root's
// shape (as far as the load-time dims tell: dynamic dims are allowed); each
// intermediate feeds exactly one slot of the node above it and is no graph
// output; the default domain at opset 7 or later (numpy
// broadcasting); at most kMaxInputs distinct inputs and kMaxSteps steps
// (what the cpu kernel runs in one pass: a tree that would exceed them
// keeps its lower part unfused); no node of ai.onnx.preview.training in the
// graph (Gradient reads the elementwise nodes themselves). Runs last among
// the fusions, so the patterns they know (a Conv's activation, residual
// Add, post_affine) are theirs.
// KILN_FUSE_ELEMENTWISE=0 turns the pass off (A/B timing; PassSwitchedOff,
// so the plan cache keys on it).
// Invariants: the fused node takes the root's name and output and sits
// where the root was; the steps are in the order of the original nodes'
// evaluation (operands first), each with the original op's attributes.
#include <algorithm>
#include <functional>

#include "ops/fused.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {
namespace {

constexpr size_t kMaxInputs = 6;  // what the cpu loop takes (providers/cpu/elementwise_loop.h)
constexpr size_t kMaxSteps = 8;

bool Supported(const ir::Node& n, const TypeMap& types) {
  if (!IsDefaultDomain(n) || n.outputs.size() != 1 || !n.HasOutput(0)) return false;
  const int arity = ops::ElementwiseStepArity(n.op_type);
  if (arity == 0 || n.inputs.size() != static_cast<size_t>(arity)) return false;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!n.HasInput(i)) return false;
  return DTypeOf(types, n.outputs[0]) == DType::kFloat32 && DimsOf(types, n.outputs[0]).has_value();
}

// Whether dims `v` may be smaller than `out` (which would then broadcast):
// not the same rank, a known dim that differs, or a 1 against an unknown.
// An unknown dim of v is taken to be out's (a model whose dynamic dim turns
// out to broadcast still computes right: every step of the fused node runs
// at the output's shape, see ops/fused.h; it only recomputes that step).
bool MaySmaller(const ir::Dims& v, const ir::Dims& out) {
  if (v.size() != out.size()) return true;
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k].known() && out[k].known() && v[k].value != out[k].value) return true;
    if (v[k].known() && v[k].value == 1 && !out[k].known()) return true;
  }
  return false;
}

// Whether v (an output of a supported node) may disappear into `reader`:
// read by it alone, and of its output's shape (a smaller v, a per-channel
// scale say, is computed once rather than at every pixel when left apart).
bool Absorbable(const GraphIndex& index, const TypeMap& types, const std::string& v, size_t reader, const ir::Node& reader_node) {
  const auto& uses = index.Consumers(v);
  if (uses.size() != 1 || uses[0].node != reader || !index.OnlyFeeds(v, reader) || index.IsGraphOutput(v)) return false;
  auto vd = DimsOf(types, v);
  auto od = DimsOf(types, reader_node.outputs[0]);
  return vd && od && !MaySmaller(*vd, *od);
}

struct Tree {
  std::vector<std::string> inputs;
  std::vector<ops::ElementwiseStep> steps;
  std::vector<size_t> nodes;  // absorbed, root last
};

}  // namespace

Result<bool> FuseElementwise(ir::Graph& g, PassContext& ctx) {
  if (PassSwitchedOff(PassSwitch::kFuseElementwise) || ctx.OpsetFor("") < 7) return false;
  // A training Gradient node differentiates through the graph's own
  // elementwise nodes, by name: leave such a graph as it is.
  for (const ir::Node& n : g.nodes)
    if (n.domain == "ai.onnx.preview.training") return false;
  const TypeMap types = InferTypes(ctx.model());
  std::vector<std::string> notes;
  KILN_ASSIGN_OR_RETURN(int count, RewriteAll(g, [&](ir::Graph& gr, const GraphIndex& index, size_t root) -> Result<bool> {
    const ir::Node& r = gr.nodes[root];
    if (!Supported(r, types)) return false;
    // A node whose output the node above would absorb is not a root.
    const auto& uses = index.Consumers(r.outputs[0]);
    if (uses.size() == 1 && Supported(gr.nodes[uses[0].node], types) &&
        Absorbable(index, types, r.outputs[0], uses[0].node, gr.nodes[uses[0].node]))
      return false;

    Tree tree;
    // Adds node ni (operands first) and returns the reference to its result.
    std::function<Result<int64_t>(size_t)> visit = [&](size_t ni) -> Result<int64_t> {
      const ir::Node& n = gr.nodes[ni];
      ops::ElementwiseStep step;
      step.op = n.op_type;
      // The attributes with the spec's defaults (LeakyRelu alpha 0.01;
      // HardSigmoid alpha 0.2, beta 0.5), the same at every opset.
      if (n.op_type == "LeakyRelu") {
        KILN_ASSIGN_OR_RETURN(step.alpha, n.GetFloat("alpha", 0.01f));
      } else if (n.op_type == "HardSigmoid") {
        KILN_ASSIGN_OR_RETURN(step.alpha, n.GetFloat("alpha", 0.2f));
        KILN_ASSIGN_OR_RETURN(step.beta, n.GetFloat("beta", 0.5f));
      }
      for (const std::string& v : n.inputs) {
        auto p = index.Producer(v);
        if (p && Supported(gr.nodes[*p], types) && Absorbable(index, types, v, ni, n) && tree.steps.size() + 1 < kMaxSteps) {
          const Tree saved = tree;
          KILN_ASSIGN_OR_RETURN(int64_t ref, visit(*p));
          if (tree.inputs.size() <= kMaxInputs && tree.steps.size() + 1 <= kMaxSteps) {
            step.operands.push_back(ref);
            continue;
          }
          tree = saved;  // too big: v stays an input
        }
        auto it = std::find(tree.inputs.begin(), tree.inputs.end(), v);
        if (it == tree.inputs.end()) it = tree.inputs.insert(tree.inputs.end(), v);
        step.operands.push_back(it - tree.inputs.begin());
      }
      tree.steps.push_back(std::move(step));
      tree.nodes.push_back(ni);
      return -static_cast<int64_t>(tree.steps.size());
    };
    KILN_RETURN_IF_ERROR(visit(root).status());
    if (tree.steps.size() < 2 || tree.inputs.size() > kMaxInputs || !ctx.ImportKilnDomain()) return false;

    ir::Node f;
    f.name = r.name;
    f.op_type = "FusedElementwise";
    f.domain = ops::kKilnDomain;
    f.inputs = tree.inputs;
    f.outputs = r.outputs;
    std::vector<std::string> ops_list;
    std::vector<int64_t> operands;
    std::vector<float> params;
    std::string what;
    for (size_t k = 0; k < tree.steps.size(); ++k) {
      ops_list.push_back(tree.steps[k].op);
      operands.insert(operands.end(), tree.steps[k].operands.begin(), tree.steps[k].operands.end());
      params.push_back(tree.steps[k].alpha);
      params.push_back(tree.steps[k].beta);
      what += (k ? " + " : "") + gr.nodes[tree.nodes[k]].name + "(" + tree.steps[k].op + ")";
    }
    f.attrs["steps"] = ir::Attribute::Strings("steps", ops_list);
    f.attrs["step_inputs"] = ir::Attribute::Ints("step_inputs", operands);
    f.attrs["step_params"] = ir::Attribute::Floats("step_params", params);
    notes.push_back(what + " -> FusedElementwise");
    std::vector<bool> dead(gr.nodes.size(), false);
    for (size_t k = 0; k + 1 < tree.nodes.size(); ++k) {
      dead[tree.nodes[k]] = true;
      gr.value_info.erase(gr.nodes[tree.nodes[k]].outputs[0]);
    }
    gr.nodes[root] = std::move(f);
    EraseNodes(gr, dead);
    return true;
  }));
  for (const auto& note : notes) ctx.Note("fuse_elementwise", note);
  return count > 0;
}

}  // namespace kiln::passes
