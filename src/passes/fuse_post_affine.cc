// fuse_post_affine: a scalar Mul and/or Add after a fused node's activation
// becomes the node's post_affine: Y = scale * act(...) + shift. PaddleOCR's
// "learnable affine" blocks put one after every HardSwish; as separate nodes
// each is a pass over the whole tensor, as a oneDNN eltwise_linear post-op
// it is free.
//
//   FusedConv/FusedConvTranspose/FusedGemm/FusedMatMul -> Mul(s) [-> Add(t)]   ->  Fused...  post_affine [s*scale, s*shift + t]
//   FusedConv/FusedConvTranspose/FusedGemm/FusedMatMul -> Add(t)               ->  Fused...  post_affine [scale, shift + t]
//   (Sub(t) as Add(-t); the constant may be either operand of Mul and Add)
//
// Preconditions: each rewired value feeds only the next node and is no graph
// output; the constant holds one float32 element and does not raise the
// rank of the output (so the output's shape is unchanged); float32 output.
// Invariants: the fused node keeps its name and takes the output name of the
// last node of the pattern.
#include "ops/fused.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {
namespace {

bool IsFused(const ir::Node& n) {
  return n.domain == ops::kKilnDomain && (n.op_type == "FusedConv" || n.op_type == "FusedConvTranspose" ||
                                          n.op_type == "FusedGemm" || n.op_type == "FusedMatMul");
}

// The scalar constant of a binary node whose other operand is `v`, when the
// node is `op` and the constant broadcasts without changing v's shape.
std::optional<float> ScalarOperand(const ir::Node& n, const char* op, const std::string& v, const GraphIndex& index,
                                   const TypeMap& types, bool constant_second_only) {
  if (n.op_type != op || !IsDefaultDomain(n) || n.inputs.size() != 2 || !n.HasOutput(0)) return std::nullopt;
  const bool first = n.inputs[0] == v;
  if (!first && n.inputs[1] != v) return std::nullopt;
  if (!first && constant_second_only) return std::nullopt;  // c - x is not an affine of x with scale 1
  const std::string& c = first ? n.inputs[1] : n.inputs[0];
  if (c == v) return std::nullopt;
  const Tensor* t = index.Constant(c);
  if (!t || t->dtype() != DType::kFloat32 || t->numel() != 1) return std::nullopt;
  auto vd = DimsOf(types, v);
  if (!vd || t->rank() > static_cast<int>(vd->size())) return std::nullopt;
  return static_cast<float>(t->GetAsDouble(0));
}

bool FeedsOnly(const GraphIndex& index, const std::string& v, size_t node) {
  const auto& uses = index.Consumers(v);
  return uses.size() == 1 && uses[0].node == node && index.OnlyFeeds(v, node) && !index.IsGraphOutput(v);
}

}  // namespace

Result<bool> FusePostAffine(ir::Graph& g, PassContext& ctx) {
  const TypeMap types = InferTypes(ctx.model());
  std::vector<std::string> notes;
  KILN_ASSIGN_OR_RETURN(int n, RewriteAll(g, [&](ir::Graph& gr, const GraphIndex& index, size_t i) -> Result<bool> {
    const ir::Node& f = gr.nodes[i];
    if (!IsFused(f) || f.outputs.size() != 1 || !f.HasOutput(0)) return false;
    const std::string y = f.outputs[0];
    if (DTypeOf(types, y) != DType::kFloat32) return false;
    KILN_ASSIGN_OR_RETURN(ops::ActivationAttrs act, ops::ParseActivation(f));
    std::vector<size_t> pattern;
    std::string out = y, what;
    // Up to one Mul and then one Add/Sub, in that order.
    for (int step = 0; step < 2; ++step) {
      const auto& uses = index.Consumers(out);
      if (uses.size() != 1 || !FeedsOnly(index, out, uses[0].node)) break;
      const size_t k = uses[0].node;
      const ir::Node& next = gr.nodes[k];
      if (step == 0) {
        if (auto s = ScalarOperand(next, "Mul", out, index, types, false)) {
          act.post_scale *= *s;
          act.post_shift *= *s;
          what += " * " + std::to_string(*s);
          pattern.push_back(k);
          out = next.outputs[0];
          continue;
        }
      }
      if (auto t = ScalarOperand(next, "Add", out, index, types, false)) {
        act.post_shift += *t;
        what += " + " + std::to_string(*t);
      } else if (auto t2 = ScalarOperand(next, "Sub", out, index, types, true)) {
        act.post_shift -= *t2;
        what += " - " + std::to_string(*t2);
      } else {
        break;
      }
      pattern.push_back(k);
      out = next.outputs[0];
      break;
    }
    if (pattern.empty()) return false;
    ir::Node fused = f;
    fused.attrs.erase("activation");
    fused.attrs.erase("activation_params");
    fused.attrs.erase("post_affine");
    for (auto& a : ops::ActivationToAttributes(act)) fused.attrs[a.name] = a;
    fused.outputs = {out};
    notes.push_back(f.name + what + " -> post_affine");
    // The fused node moves to the last node's place (its consumers come after it).
    std::vector<bool> dead(gr.nodes.size(), false);
    dead[i] = true;
    gr.value_info.erase(y);
    for (size_t k = 0; k + 1 < pattern.size(); ++k) {
      dead[pattern[k]] = true;
      gr.value_info.erase(gr.nodes[pattern[k]].outputs[0]);
    }
    gr.nodes[pattern.back()] = std::move(fused);
    EraseNodes(gr, dead);
    return true;
  }));
  for (const auto& note : notes) ctx.Note("fuse_post_affine", note);
  return n > 0;
}

}  // namespace kiln::passes
