// The interface between the executor and one provider's kernels.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/datum.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "support/layout.h"

namespace kiln::runtime {

// What a kernel sees of one node's execution. Each tensor input arrives in
// a layout its kernel declared (KernelLayouts); by default that is dense
// row-major, so the reference provider's kernels index linearly.
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual const ir::Node& node() const = 0;
  virtual int64_t opset() const = 0;
  size_t num_inputs() const { return node().inputs.size(); }
  size_t num_outputs() const { return node().outputs.size(); }
  bool has_input(size_t i) const { return node().HasInput(i); }
  bool has_output(size_t i) const { return node().HasOutput(i); }

  // Input i as a datum (empty Datum when absent).
  virtual const Datum& input_datum(size_t i) const = 0;
  // Input i as a contiguous tensor; an undefined Tensor when absent or not a tensor.
  virtual const Tensor& input(size_t i) const = 0;
  // Whether input i is a tensor whose storage nothing else holds: its value
  // dies with this node (no later node, graph output, feed, constant or
  // view reads it), so the kernel may write its output over it.
  virtual bool input_exclusive(size_t i) const { return false; }

  // Output type inferred for this run (concrete inputs), kUnknown if none.
  virtual const ir::TypeInfo& inferred_output(size_t i) const = 0;
  // Allocates output i with the inferred dtype and shape; fails when
  // inference could not determine them (then use the explicit form).
  virtual Result<Tensor> AllocOutput(size_t i);
  virtual Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape) = 0;
  // Output i of logical `shape` stored in `order` (channels-last, ...), its
  // contents NOT initialized: for kernels that write every element. The
  // forms above return zero-filled tensors.
  virtual Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape, const DimOrder& order) = 0;
  // Sets output i to an existing value (a view, a sequence, a none).
  virtual Status SetOutput(size_t i, Datum value) = 0;
  // A tensor the kernel fills and hands on within this node (a composed
  // kernel's intermediate values, inputs converted for an inner kernel),
  // contents uninitialized unless `zero`. From the session's buffer pool
  // where the context has one, so that a static-shape Run requests no
  // memory from the system after the first; by default a fresh
  // (zero-filled) tensor.
  virtual Result<Tensor> AllocScratch(DType dtype, const Shape& shape, const DimOrder& order, bool zero) const;

  // Runs a subgraph (If/Loop/Scan body) with the given inputs; names of
  // enclosing scopes resolve to their current values.
  virtual Result<std::vector<Datum>> RunSubgraph(const ir::Graph& g, const std::vector<Datum>& inputs) = 0;
  // The graph that holds this node (Gradient differentiates through it);
  // nullptr when the executor does not provide it.
  virtual const ir::Graph* graph() const { return nullptr; }

  // "node 'x' (Op): msg" errors.
  Status Error(const std::string& msg) const { return node().Error(StatusCode::kInvalidArgument, msg); }
  Status Unsupported(const std::string& msg) const { return node().Error(StatusCode::kUnimplemented, msg); }
};

using KernelFn = std::function<Status(KernelContext&)>;

// The layouts a kernel reads and writes. The executor converts each tensor
// input that is not dense in one of its accepted orders to the first one
// before the kernel runs, so a kernel never receives a layout it did not
// declare; src/plan/layout.cc predicts the same choices statically.
struct InputLayouts {
  std::vector<DimOrder> orders;  // accepted, preferred first; empty = row-major only
  bool any_dense = false;        // any dense order (elementwise, zero-copy views)
  bool any_strided = false;      // any strides at all, gaps too (kernels that index through strides)
};
// The order of the outputs (all of them: Split writes each part in its
// input's order) from the orders the inputs arrived in; nullptr: row-major.
using OutputOrderFn = std::function<DimOrder(const std::vector<DimOrder>& input_orders)>;
struct KernelLayouts {
  std::vector<InputLayouts> inputs;  // by input index; missing = row-major only
  OutputOrderFn output_order;
  const InputLayouts& input(size_t i) const {
    static const InputLayouts kRowMajorOnly;
    return i < inputs.size() ? inputs[i] : kRowMajorOnly;
  }
};

// A node's kernel: the function and its layout declaration. An empty fn
// declines the node.
struct Kernel {
  KernelFn fn;
  KernelLayouts layouts;
  Kernel() = default;
  Kernel(KernelFn f) : fn(std::move(f)) {}  // NOLINT: row-major in and out
  Kernel(KernelFn f, KernelLayouts l) : fn(std::move(f)), layouts(std::move(l)) {}
  explicit operator bool() const { return static_cast<bool>(fn); }
};

// What a kernel factory sees once, at session creation: the node, its opset,
// the load-time types of its inputs (nullptr when unknown) and the values of
// inputs that are constant for the session (initializers that cannot be fed).
// Compiled providers pack weights and pick algorithms here.
struct KernelInit {
  const ir::Node& node;
  int64_t opset;
  std::vector<const ir::TypeInfo*> input_types;
  std::vector<const Tensor*> constant_inputs;
  // By output index: whether the value is an output of the node's graph,
  // which the executor returns in row-major order. A kernel that can write
  // row-major from any layout it reads may declare that order for such a
  // value and save the conversion on return (a segmentation model's last
  // Resize). Empty where the caller does not know (inner kernels).
  std::vector<bool> graph_outputs;
  const ir::TypeInfo* input_type(size_t i) const { return i < input_types.size() ? input_types[i] : nullptr; }
  const Tensor* constant(size_t i) const { return i < constant_inputs.size() ? constant_inputs[i] : nullptr; }
  bool is_graph_output(size_t i) const { return i < graph_outputs.size() && graph_outputs[i]; }
};
// Returns the node's kernel; an empty one declines the node (the executor
// then falls back to the next provider). An error fails the session.
using KernelFactory = std::function<Result<Kernel>(const KernelInit&)>;

class KernelRegistry {
 public:
  // Registers a kernel for op_type in domain ("" = ai.onnx), all opsets of its schema.
  void Register(const std::string& domain, const std::string& op_type, KernelFn fn);
  // Registers a factory that builds a (possibly stateful) kernel per node.
  void RegisterFactory(const std::string& domain, const std::string& op_type, KernelFactory factory);
  bool Has(const std::string& domain, const std::string& op_type) const;
  // The kernel for one node; empty when the op is unknown here or declined.
  Result<Kernel> Instantiate(const KernelInit& init) const;
  size_t size() const { return factories_.size(); }

 private:
  std::map<std::pair<std::string, std::string>, KernelFactory> factories_;
};

}  // namespace kiln::runtime
