// Evaluates one node on constant inputs with the reference provider's
// kernels: what constant folding (fold_constants.cc, fold_shape.cc) computes
// once at optimization time instead of at every run.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::passes {

// The node's outputs (one per output slot; an undefined Tensor for an
// omitted one). `inputs` holds one tensor per input slot (undefined for an
// omitted input). Fails when the node cannot run or an output is not a
// tensor; the caller then leaves the node as it is.
Result<std::vector<Tensor>> EvaluateNode(const ir::Model& model, const ir::Node& node, const std::vector<Tensor>& inputs);

}  // namespace kiln::passes
