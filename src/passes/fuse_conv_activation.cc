// fuse_conv_activation: Conv / Gemm / MatMul, an optional bias Add, and an
// optional activation (activation_match.h) become one node:
//   Conv   + act                           -> FusedConv(X, W, B)        act
//   ConvTranspose + act                    -> FusedConvTranspose(X, W, B) act
//   Gemm (no C) + Add(c)                   -> Gemm with C = c, beta = 1
//   Gemm   [+ bias] + act                  -> FusedGemm(A, B, C)        act
//   MatMul + Add(bias) [+ act]             -> FusedMatMul(A, B, Bias)   act
//   MatMul + act                           -> FusedMatMul(A, B)         act
//
// A Conv's (ConvTranspose's) bias Add is folded into B before (fold_conv_affine.cc).
// Preconditions: float32 throughout (what the fused kernels take); each
// intermediate value feeds only the next node of the pattern and is no graph
// output; a bias never changes the product's shape (its dims, known, are 1
// or the product's); the model imports com.kiln 1 or not at all (the pass
// adds the import).
// Invariants: the fused node takes the name of the Conv/Gemm/MatMul and the
// output name of the pattern's last node, and sits where that node was.
#include <algorithm>

#include "passes/activation_match.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {
namespace {

struct Bias {
  size_t add = 0;          // the Add node
  std::string operand;     // its other input
  std::string output;      // its output
};

// The Add that adds something to `y` (its only reader).
std::optional<Bias> MatchAdd(const ir::Graph& g, const GraphIndex& index, const std::string& y) {
  const auto& uses = index.Consumers(y);
  if (uses.size() != 1 || !index.OnlyFeeds(y, uses[0].node)) return std::nullopt;
  const ir::Node& add = g.nodes[uses[0].node];
  if (add.op_type != "Add" || !IsDefaultDomain(add) || add.inputs.size() != 2 || !add.HasOutput(0)) return std::nullopt;
  const std::string other = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
  if (other.empty() || other == y) return std::nullopt;
  return Bias{uses[0].node, other, add.outputs[0]};
}

// `operand` broadcasts to y's shape without growing it: rank at most y's,
// each dim known and 1 or equal to y's (known) dim.
bool BroadcastsInto(const TypeMap& types, const std::string& operand, const std::string& y) {
  auto od = DimsOf(types, operand);
  auto yd = DimsOf(types, y);
  if (!od || !yd || od->size() > yd->size() || DTypeOf(types, operand) != DType::kFloat32) return false;
  for (size_t k = 0; k < od->size(); ++k) {
    const ir::Dim& o = (*od)[k];
    const ir::Dim& t = (*yd)[k + yd->size() - od->size()];
    if (!o.known() || (o.value != 1 && (!t.known() || t.value != o.value))) return false;
  }
  return true;
}

std::string ActivationName(const ops::ActivationAttrs& a) {
  auto attrs = ops::ActivationToAttributes(a);
  return attrs.empty() ? "" : attrs[0].s;
}

}  // namespace

Result<bool> FuseConvActivation(ir::Graph& g, PassContext& ctx) {
  const TypeMap types = InferTypes(ctx.model());
  std::vector<std::string> notes;
  KILN_ASSIGN_OR_RETURN(int n, RewriteAll(g, [&](ir::Graph& gr, const GraphIndex& index, size_t i) -> Result<bool> {
    const ir::Node& anchor = gr.nodes[i];
    const std::string& op = anchor.op_type;
    const bool conv_like = op == "Conv" || op == "ConvTranspose";
    if ((!conv_like && op != "Gemm" && op != "MatMul") || !IsDefaultDomain(anchor) || anchor.outputs.size() != 1 ||
        !anchor.HasOutput(0) || anchor.inputs.size() < 2)
      return false;
    const std::string y = anchor.outputs[0];
    if (DTypeOf(types, y) != DType::kFloat32 || DTypeOf(types, anchor.inputs[0]) != DType::kFloat32) return false;
    ir::Node fused = anchor;
    std::vector<size_t> pattern = {i};
    std::string value = y, what = anchor.name;

    // The bias Add of a Gemm without C or of a MatMul (a Conv's per-channel
    // Add was folded into its B by fold_conv_affine, which runs first).
    if (auto bias = conv_like ? std::nullopt : MatchAdd(gr, index, y)) {
      if ((op == "MatMul" || !anchor.HasInput(2)) && BroadcastsInto(types, bias->operand, y)) {
        if (op == "Gemm") {
          fused.inputs.resize(3);
          fused.inputs[2] = bias->operand;
          fused.attrs["beta"] = ir::Attribute::Float("beta", 1.0f);  // C was absent: its beta meant nothing
        } else {
          fused.inputs.resize(2);
          fused.inputs.push_back(bias->operand);
        }
        pattern.push_back(bias->add);
        value = bias->output;
        what += " + Add";
      }
    }

    auto act = MatchActivation(gr, index, types, ctx, value);
    const bool has_bias = pattern.size() > 1;
    // A Gemm with only a bias stays a Gemm; everything else needs the fused op.
    const bool needs_fused = act.has_value() || (op == "MatMul" && has_bias);
    if (!needs_fused && !has_bias) return false;
    if (needs_fused) {
      if (!ctx.ImportKilnDomain()) return false;
      fused.op_type = "Fused" + op;
      fused.domain = ops::kKilnDomain;
    }
    if (act) {
      for (auto& a : ops::ActivationToAttributes(act->act)) fused.attrs[a.name] = a;
      pattern.insert(pattern.end(), act->nodes.begin(), act->nodes.end());
      value = act->output;
      what += " + " + act->ops + " -> " + fused.op_type + "(" + ActivationName(act->act) + ")";
    } else {
      what += " -> " + fused.op_type;
    }
    fused.outputs = {value};
    notes.push_back(what);
    const size_t last = *std::max_element(pattern.begin(), pattern.end());
    std::vector<bool> dead(gr.nodes.size(), false);
    for (size_t k : pattern) dead[k] = true;
    for (size_t k : pattern)
      if (k != last) gr.value_info.erase(gr.nodes[k].outputs[0]);
    gr.nodes[last] = std::move(fused);
    dead[last] = false;
    EraseNodes(gr, dead);
    return true;
  }));
  for (const auto& note : notes) ctx.Note("fuse_conv_activation", note);
  return n > 0;
}

}  // namespace kiln::passes
