// Layout planning: which layout (DimOrder) each value of a graph is stored
// in and where conversions happen, from the layouts each node's kernel
// declared (runtime::KernelLayouts).
//
// Each value is stored in the order its producer writes (graph inputs and
// initializers row-major). A consumer whose kernel does not accept that
// order gets a conversion to its preferred one; a value converted once for
// one consumer is reused by the others. The executor applies the same rule
// (InputTarget) to the tensors it really holds, so the plan printed by
// `kiln inspect --plan` is what runs; a zero-copy Transpose turns the
// graph-level NHWC->NCHW Transpose of model_nhwc into a channels-last value
// that the convolutions read directly.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "runtime/kernel.h"
#include "support/layout.h"

namespace kiln::plan {

struct Conversion {
  size_t node;    // index into graph.nodes
  size_t input;   // input slot
  std::string value;
  DimOrder from, to;
  int rank;
};

struct LayoutPlan {
  std::unordered_map<std::string, DimOrder> orders;  // every tensor value, as stored by its producer
  std::vector<Conversion> conversions;               // in execution order
};

// `layouts[i]` is node i's kernel declaration; `order` the execution order;
// `types` the load-time types (ranks; unknown rank counts as row-major).
LayoutPlan PlanLayouts(const ir::Graph& g, const std::vector<size_t>& order,
                       const std::vector<const runtime::KernelLayouts*>& layouts,
                       const std::unordered_map<std::string, ir::TypeInfo>& types);

// Whether a value stored in `have` (rank `rank`) may be handed to a kernel
// input that accepts `accepts`; when not, `*target` is the order to convert to.
bool Accepts(const runtime::InputLayouts& accepts, const DimOrder& have, int rank, DimOrder* target);
// The same for a tensor really held at run time (dims of size 1 make several
// orders match; views with gaps match only any_strided).
bool AcceptsTensor(const runtime::InputLayouts& accepts, const Tensor& t, DimOrder* target);

}  // namespace kiln::plan
