// Runs an ir::Model node by node with one provider's kernels. Stateless
// during Run (all values live in a per-call scope), so concurrent Run calls
// on one Executor are safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "kiln/datum.h"
#include "ops/op_registry.h"
#include "plan/layout.h"
#include "runtime/kernel.h"
#include "runtime/provider.h"

namespace kiln::runtime {

class BufferPool;

// Called after each node with its output values (verify taps the plan here).
using NodeTap = std::function<void(const ir::Node& node, const std::vector<Datum>& outputs)>;

struct RunOptions {
  NodeTap tap;  // main graph only
};

class Executor {
 public:
  // Validates the model against the op registry and kernels: every node has a
  // schema at the model's opset and a kernel, the graph is acyclic with no
  // dangling inputs, and load-time shape inference passes.
  // Each node runs on `provider`'s kernel, or on its fallback's when the
  // provider has none or declines the node.
  // `memory_limit`: most bytes of kernel outputs live at once (0 = none).
  static Result<std::unique_ptr<Executor>> Create(std::shared_ptr<const ir::Model> model, const Provider& provider,
                                                  uint64_t memory_limit = 0);

  // Runs the main graph on `feeds` (validated by the caller) and returns the
  // values of `outputs`, in that order.
  Result<std::vector<Datum>> Run(const std::map<std::string, Datum>& feeds, const std::vector<std::string>& outputs,
                                 const RunOptions& options = {}) const;

  ~Executor();
  const ir::Model& model() const { return *model_; }
  // Types known after load-time inference (main graph values).
  const std::unordered_map<std::string, ir::TypeInfo>& static_types() const { return static_types_; }
  // Which provider runs each main-graph node, by node index.
  const std::vector<std::string>& node_providers() const;
  // Main-graph node indices in the order Run executes them.
  const std::vector<size_t>& execution_order() const;
  // Each main-graph value's layout and the conversions made, as Run makes them.
  plan::LayoutPlan PlanLayouts() const;

  struct GraphPlan;
  class Scope;
  struct Specialization;

 private:
  Executor() = default;
  Status PlanGraph(const ir::Graph& g, const std::vector<std::string>& outer_names);
  Status InferStatic();
  Status InferMain(std::unordered_map<std::string, ir::TypeInfo>& types, Specialization* spec) const;
  std::shared_ptr<const Specialization> SpecializationFor(const std::map<std::string, Datum>& feeds) const;
  Status InstantiateKernels(const ir::Graph& g, bool main_graph);
  Result<Datum> InputFor(const ir::Node& n, size_t i, const Kernel& kernel, Scope& scope) const;
  // A copy of src stored in `order`, from the pool when there is one.
  Result<Tensor> CopyInOrder(const Tensor& src, const DimOrder& order) const;
  Result<std::vector<Datum>> RunGraph(const ir::Graph& g, Scope& scope, const std::vector<std::string>& outputs,
                                      const NodeTap* tap, const Specialization* spec) const;

  std::shared_ptr<const ir::Model> model_;
  Provider provider_;
  std::unordered_map<const ir::Graph*, std::unique_ptr<GraphPlan>> plans_;
  std::unordered_map<std::string, ir::TypeInfo> static_types_;
  std::shared_ptr<BufferPool> pool_;  // kernel outputs, recycled across nodes and runs
  // Output types per feed signature (Specialization), most recent last.
  mutable std::mutex spec_mu_;
  struct FeedSignature {
    std::string name;
    DType dtype;
    Shape shape;
    bool operator==(const FeedSignature&) const = default;
  };
  using SpecKey = std::vector<FeedSignature>;
  mutable std::vector<std::pair<SpecKey, std::shared_ptr<const Specialization>>> specs_;
 public:
  const BufferPool& pool() const { return *pool_; }
};

// TypeInfo describing a concrete runtime value.
ir::TypeInfo TypeOfDatum(const Datum& d);

}  // namespace kiln::runtime
