// fuse_residual_add: a convolution whose result is added to another value
// (the residual connection of ResNet-like blocks), optionally followed by an
// activation, becomes one FusedConv that adds the other value as Z before
// the activation: Y = act(Conv(X, W, B) + Z). The cpu provider writes the
// sum in place, as a post-op of the convolution.
//
//   Conv / FusedConv(no act, no Z) + Add(z) [+ act]  ->  FusedConv(X, W, B, z)  act
//
// Preconditions: the convolution's output feeds only the Add and is no graph
// output; the convolution's output and z provably have the same shape (Z
// does not broadcast): static, or dynamic dims of the same name
// (graph_util.h); float32; the activation pattern obeys activation_match.h.
// Runs after fuse_conv_activation, which takes a Conv's activation when no
// Add sits in between.
// Invariants: the fused node takes the convolution's name and the output
// name of the pattern's last node, and sits where that node was.
#include <algorithm>

#include "passes/activation_match.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {

Result<bool> FuseResidualAdd(ir::Graph& g, PassContext& ctx) {
  const TypeMap types = InferTypes(ctx.model());
  std::vector<std::string> notes;
  KILN_ASSIGN_OR_RETURN(int n, RewriteAll(g, [&](ir::Graph& gr, const GraphIndex& index, size_t i) -> Result<bool> {
    const ir::Node& conv = gr.nodes[i];
    const bool plain = conv.op_type == "Conv" && IsDefaultDomain(conv);
    const bool fused = conv.op_type == "FusedConv" && conv.domain == ops::kKilnDomain;
    if (!(plain || fused) || conv.outputs.size() != 1 || !conv.HasOutput(0) || conv.inputs.size() < 2) return false;
    if (fused) {
      auto act = ops::ParseActivation(conv);
      // A post_affine applies after Z would be added: not the same sum.
      if (!act.ok() || act->kind != ops::Activation::kNone || act->has_post_affine() || conv.HasInput(3)) return false;
    }
    const std::string y = conv.outputs[0];
    const auto& uses = index.Consumers(y);
    if (uses.size() != 1 || !index.OnlyFeeds(y, uses[0].node)) return false;
    const size_t ai = uses[0].node;
    const ir::Node& add = gr.nodes[ai];
    if (add.op_type != "Add" || !IsDefaultDomain(add) || add.inputs.size() != 2 || !add.HasOutput(0)) return false;
    const std::string z = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
    if (z.empty() || z == y) return false;
    if (!ProvablySameShape(types, y, z) || DTypeOf(types, y) != DType::kFloat32 || DTypeOf(types, z) != DType::kFloat32) return false;
    if (!ctx.ImportKilnDomain()) return false;

    ir::Node f = conv;
    f.op_type = "FusedConv";
    f.domain = ops::kKilnDomain;
    f.attrs.erase("activation");
    f.attrs.erase("activation_params");
    f.inputs.resize(4);
    f.inputs[3] = z;
    std::vector<size_t> pattern = {i, ai};
    std::string out = add.outputs[0], what = conv.name + " + Add(" + z + ")";
    if (auto act = MatchActivation(gr, index, types, ctx, out)) {
      for (auto& a : ops::ActivationToAttributes(act->act)) f.attrs[a.name] = a;
      pattern.insert(pattern.end(), act->nodes.begin(), act->nodes.end());
      out = act->output;
      what += " + " + act->ops;
    }
    f.outputs = {out};
    notes.push_back(what + " -> FusedConv");
    const size_t last = *std::max_element(pattern.begin(), pattern.end());
    std::vector<bool> dead(gr.nodes.size(), false);
    for (size_t k : pattern) {
      dead[k] = k != last;
      if (k != last) gr.value_info.erase(gr.nodes[k].outputs[0]);
    }
    gr.nodes[last] = std::move(f);
    EraseNodes(gr, dead);
    return true;
  }));
  for (const auto& note : notes) ctx.Note("fuse_residual_add", note);
  return n > 0;
}

}  // namespace kiln::passes
