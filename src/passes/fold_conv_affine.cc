// fold_conv_affine: a Conv or ConvTranspose followed by a multiplication or
// an addition with a constant that holds one value per output channel (or a
// single value) becomes one convolution with adjusted W and B:
//   Mul(y, s) / Div(y, 1/s)   ->  W' = W * s, B' = B * s
//   Add(y, t) / Sub(y, -t)    ->  B' = B + t
// Exporters write the bias of a bias-less Conv, or a learnable per-tensor
// affine (PP-OCRv4's PPLCNetV3 "learnable affine blocks": Conv * w0 + w1), this way.
//
// Preconditions: the convolution's output feeds only that node and is no
// graph output; W, B and the constant are constant, float32/float64; the
// constant changes only the channel axis (1) of the output, whose rank is
// known, and cannot make it larger; for Sub and Div the convolution is the
// first operand; a Div's constants are nonzero.
// Invariants: the convolution takes the Mul/Add's output name; new weights
// get fresh names (the old ones may be shared).
#include "passes/conv_weights.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {

Result<bool> FoldConvAffine(ir::Graph& g, PassContext& ctx) {
  const TypeMap types = InferTypes(ctx.model());
  NameSet names(g);
  std::vector<std::string> notes;
  KILN_ASSIGN_OR_RETURN(int n, RewriteAll(g, [&](ir::Graph& gr, const GraphIndex& index, size_t i) -> Result<bool> {
    const ir::Node& conv = gr.nodes[i];
    auto fc = MatchFoldableConv(conv, index);
    if (!fc) return false;
    const std::string y = conv.outputs[0];
    const auto& uses = index.Consumers(y);
    if (uses.size() != 1 || !index.OnlyFeeds(y, uses[0].node)) return false;
    const size_t ai = uses[0].node;
    const ir::Node& op = gr.nodes[ai];
    const bool mul = op.op_type == "Mul" || op.op_type == "Div", add = op.op_type == "Add" || op.op_type == "Sub";
    if (!(mul || add) || !IsDefaultDomain(op) || op.inputs.size() != 2 || !op.HasOutput(0) || op.inputs[0] == op.inputs[1]) return false;
    const bool commutes = op.op_type == "Mul" || op.op_type == "Add";
    if (!commutes && uses[0].slot != 0) return false;
    auto dims = DimsOf(types, y);
    if (!dims || DTypeOf(types, y) != fc->w->dtype()) return false;
    auto c = PerChannelValues(index.Constant(op.inputs[1 - uses[0].slot]), dims->size(), fc->out_channels);
    if (!c) return false;
    const size_t m = static_cast<size_t>(fc->out_channels);
    std::vector<double> bias = fc->b ? Doubles(*fc->b) : std::vector<double>(m, 0.0);
    std::string w_name = conv.inputs[1];
    if (mul) {
      for (double& v : *c) {
        if (op.op_type == "Div") {
          if (v == 0) return false;
          v = 1.0 / v;
        }
      }
      for (size_t k = 0; k < m; ++k) bias[k] *= (*c)[k];
      w_name = names.Fresh(conv.inputs[1] + "_scaled");
      gr.initializers[w_name] = ScaleOutputChannels(conv, *fc->w, *c);
    } else {
      for (size_t k = 0; k < m; ++k) bias[k] += op.op_type == "Sub" ? -(*c)[k] : (*c)[k];
    }
    std::string b_name;
    if (fc->b || add) {
      b_name = names.Fresh((conv.HasInput(2) ? conv.inputs[2] : conv.inputs[1]) + (mul ? "_scaled" : "_shifted"));
      gr.initializers[b_name] = FromDoubles(fc->w->dtype(), {fc->out_channels}, bias);
    }
    notes.push_back(conv.name + " + " + op.op_type + " (" + op.name + ")");
    ir::Node& cv = gr.nodes[i];
    const std::string out = op.outputs[0];
    cv.inputs.resize(b_name.empty() ? 2 : 3);
    cv.inputs[1] = w_name;
    if (!b_name.empty()) cv.inputs[2] = b_name;
    gr.value_info.erase(y);
    cv.outputs[0] = out;
    std::vector<bool> dead(gr.nodes.size(), false);
    dead[ai] = true;
    EraseNodes(gr, dead);
    return true;
  }));
  for (const auto& note : notes) ctx.Note("fold_conv_affine", note);
  return n > 0;
}

}  // namespace kiln::passes
