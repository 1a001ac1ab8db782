// Kernels made of other kernels. A provider may run a node as a chain of
// inner nodes, each instantiated from a kernel registry as the executor
// would (FusedSeparableConv as three FusedConv, compose_separable.h). The
// inner kernels see a KernelContext of their own: inputs are the Datums the
// composition hands over, converted to the layouts the inner kernel
// declared (the executor's rule, so no kernel gets a layout it did not
// declare); output types come from the inner node's schema inference on
// those inputs, as the executor computes inferred_output; outputs and
// converted inputs come from the outer context's AllocScratch (the session's
// buffer pool), so a composed kernel allocates nothing from the system once
// a static-shape session has run.
#pragma once

#include <memory>
#include <vector>

#include "ir/graph.h"
#include "kiln/datum.h"
#include "kiln/status.h"
#include "ops/op_registry.h"
#include "runtime/kernel.h"

namespace kiln::runtime {

// One inner node with its kernel. An empty `kernel` means the registry
// declined the node.
struct InnerKernel {
  std::shared_ptr<const ir::Node> node;  // kept alive: kernels may hold references to it
  int64_t opset = 1;
  const ops::OpSchema* schema = nullptr;
  Kernel kernel;
};

// Instantiates `node` (opset `opset` of its domain) from `registry` with the
// given load-time input types and constant inputs, by the node's input slots
// (nullptr = unknown / not constant). Fails when kiln has no schema for it.
Result<InnerKernel> InstantiateInner(const KernelRegistry& registry, std::shared_ptr<const ir::Node> node, int64_t opset,
                                     std::vector<const ir::TypeInfo*> input_types, std::vector<const Tensor*> constants);

// The node's output types by its schema's inference on these input types
// and values (by slot; nullptr = unknown).
Result<std::vector<ir::TypeInfo>> InferInner(const InnerKernel& k, const std::vector<const ir::TypeInfo*>& types,
                                             const std::vector<const Tensor*>& values);

// Runs k on `inputs` (by its node's slots; an empty Datum is an absent
// input) and returns its outputs. exclusive[i] (missing = false) says input
// i is the only reference to its storage, so the kernel may write its output
// over it (KernelContext::input_exclusive); a converted copy always is.
// Errors name the outer node first.
Result<std::vector<Datum>> RunInner(const InnerKernel& k, std::vector<Datum> inputs, const std::vector<bool>& exclusive,
                                    const KernelContext& outer);

// The order k's output 0 is stored in when its inputs arrive in
// `input_orders` (row-major when the kernel declares no output order).
DimOrder InnerOutputOrder(const InnerKernel& k, const std::vector<DimOrder>& input_orders);

}  // namespace kiln::runtime
