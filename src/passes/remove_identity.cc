// remove_identity: bypasses Identity and inference-mode Dropout, whose
// output is their input. Readers of the output read the input instead; when
// the output is a graph output (its name must stay) the input's producer is
// renamed to it, and when that is not possible either (the input is a graph
// input, an initializer or another graph output) the node stays.
//
// Dropout is an identity when it runs in inference mode: opset 12+ without
// a training_mode input or with a constant false one; opsets 7-11 always;
// opsets 1/6 with is_test != 0. Its mask output must be unused (a used mask
// would need a constant all-true tensor in its place; kept as is instead).
#include "ops/random.h"
#include "passes/graph_util.h"
#include "passes/pass.h"

namespace kiln::passes {
namespace {

bool InferenceDropout(const ir::Node& n, const GraphIndex& index, int64_t opset) {
  auto a = ops::ParseDropout(n, opset);
  if (!a.ok()) return false;
  if (opset < 12) return !a->attr_training;
  if (!n.HasInput(2)) return true;
  const Tensor* t = index.Constant(n.inputs[2]);
  return t && t->dtype() == DType::kBool && t->numel() == 1 && !t->Contiguous().data<bool>()[0];
}

}  // namespace

Result<bool> RemoveIdentity(ir::Graph& g, PassContext& ctx) {
  int identities = 0, dropouts = 0;
  const int64_t opset = ctx.OpsetFor("");
  KILN_ASSIGN_OR_RETURN(int n, RewriteAll(g, [&](ir::Graph& g, const GraphIndex& index, size_t i) -> Result<bool> {
    const ir::Node& node = g.nodes[i];
    if (!IsDefaultDomain(node) || node.inputs.empty()) return false;
    if (node.op_type == "Identity") {
      if (!Bypass(g, index, i)) return false;
      ++identities;
      return true;
    }
    if (node.op_type == "Dropout" && InferenceDropout(node, index, opset)) {
      if (!Bypass(g, index, i)) return false;
      ++dropouts;
      return true;
    }
    return false;
  }));
  if (n == 0) return false;
  ctx.Note("remove_identity", std::to_string(identities) + " Identity and " + std::to_string(dropouts) + " Dropout removed");
  return true;
}

}  // namespace kiln::passes
