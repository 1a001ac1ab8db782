// fold_batchnorm: Conv or ConvTranspose followed by an inference-mode
// BatchNormalization becomes one Conv (ConvTranspose) with adjusted weights:
//   s  = scale / sqrt(var + epsilon)          (per output channel)
//   W' = W * s                                (each output channel's filter)
//   B' = (B - mean) * s + bias                (B = 0 when the node has none)
// computed in double and stored once in W's dtype.
//
// Preconditions: the convolution's output feeds only the BatchNormalization;
// W, B and the four statistics are constant; float32/float64 weights; the
// BatchNormalization is in inference mode, spatial, with only its Y output,
// and one statistic per output channel.
// Invariants: the convolution takes the BatchNormalization's output name; new
// weights get fresh names (the old ones may be shared, and stay until
// eliminate_dead_code finds them unused).
#include <cmath>

#include "ops/normalization.h"
#include "passes/conv_weights.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {

Result<bool> FoldBatchNorm(ir::Graph& g, PassContext& ctx) {
  const int64_t opset = ctx.OpsetFor("");
  NameSet names(g);
  std::vector<std::string> folded;
  KILN_ASSIGN_OR_RETURN(int n, RewriteAll(g, [&](ir::Graph& gr, const GraphIndex& index, size_t i) -> Result<bool> {
    const ir::Node& bn = gr.nodes[i];
    if (bn.op_type != "BatchNormalization" || !IsDefaultDomain(bn) || bn.inputs.size() != 5 || !bn.HasOutput(0)) return false;
    for (size_t k = 1; k < bn.outputs.size(); ++k)
      if (bn.HasOutput(k)) return false;
    auto attrs = ops::ParseBatchNorm(bn, opset);
    if (!attrs.ok() || attrs->training || !attrs->spatial) return false;
    auto p = index.Producer(bn.inputs[0]);
    if (!p || !index.OnlyFeeds(bn.inputs[0], i)) return false;
    const ir::Node& conv = gr.nodes[*p];
    auto fc = MatchFoldableConv(conv, index);
    if (!fc) return false;
    const int64_t m = fc->out_channels;
    std::vector<std::vector<double>> prm;  // scale, bias, mean, var
    for (size_t k = 1; k < 5; ++k) {
      const Tensor* t = index.Constant(bn.inputs[k]);
      if (!t || !DTypeIsFloat(t->dtype()) || t->numel() != m) return false;
      prm.push_back(Doubles(*t));
    }
    std::vector<double> s(static_cast<size_t>(m)), bv = fc->b ? Doubles(*fc->b) : std::vector<double>(static_cast<size_t>(m), 0.0);
    for (size_t c = 0; c < static_cast<size_t>(m); ++c) {
      s[c] = prm[0][c] / std::sqrt(prm[3][c] + attrs->epsilon);
      bv[c] = (bv[c] - prm[2][c]) * s[c] + prm[1][c];
    }
    const std::string w_name = names.Fresh(conv.inputs[1] + "_bn");
    const std::string b_name = names.Fresh((conv.HasInput(2) ? conv.inputs[2] : conv.inputs[1]) + "_bn_bias");
    gr.initializers[w_name] = ScaleOutputChannels(conv, *fc->w, s);
    gr.initializers[b_name] = FromDoubles(fc->w->dtype(), {m}, bv);
    folded.push_back(conv.name + " + " + bn.name);
    ir::Node& c = gr.nodes[*p];
    c.inputs.resize(3);
    c.inputs[1] = w_name;
    c.inputs[2] = b_name;
    gr.value_info.erase(c.outputs[0]);
    c.outputs[0] = bn.outputs[0];
    std::vector<bool> dead(gr.nodes.size(), false);
    dead[i] = true;
    EraseNodes(gr, dead);
    return true;
  }));
  for (const auto& f : folded) ctx.Note("fold_batchnorm", f);
  return n > 0;
}

}  // namespace kiln::passes
