// A one-node model whose inputs are initializers, run by a normal executor
// on the reference provider: the same schemas, inference and kernels as any
// session, so a folded value is exactly what the unoptimized model computes.
#include "passes/evaluate.h"

#include <memory>

#include "runtime/executor.h"
#include "runtime/provider.h"

namespace kiln::passes {

Result<std::vector<Tensor>> EvaluateNode(const ir::Model& model, const ir::Node& node, const std::vector<Tensor>& inputs) {
  auto m = std::make_shared<ir::Model>();
  m->ir_version = model.ir_version;
  m->opsets = model.opsets;
  m->graph.name = "fold_" + node.name;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty()) continue;
    if (i >= inputs.size() || !inputs[i].defined())
      return Internal(node.Describe() + ": input '" + node.inputs[i] + "' has no constant value");
    m->graph.initializers[node.inputs[i]] = inputs[i];
  }
  std::vector<std::string> outputs;
  for (const auto& o : node.outputs) {
    if (o.empty()) continue;
    outputs.push_back(o);
    m->graph.outputs.push_back({o, {}});
  }
  m->graph.nodes.push_back(node);
  KILN_ASSIGN_OR_RETURN(runtime::Provider reference, runtime::FindProvider("reference"));
  KILN_ASSIGN_OR_RETURN(auto executor, runtime::Executor::Create(m, reference));
  KILN_ASSIGN_OR_RETURN(std::vector<Datum> values, executor->Run({}, outputs));
  std::vector<Tensor> result(node.outputs.size());
  size_t k = 0;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    const Datum& d = values[k++];
    if (!d.is_tensor() || !d.tensor().defined()) return Unimplemented(node.Describe() + ": output is a " + d.Describe());
    // A dense copy of its own: the value may be a view of an input.
    result[i] = d.tensor().Clone();
  }
  return result;
}

}  // namespace kiln::passes
