// Running one inner node of a composed kernel (inner_kernel.h).
#include "runtime/inner_kernel.h"

#include <string>

#include "plan/layout.h"
#include "runtime/executor.h"
#include "support/layout.h"

namespace kiln::runtime {
namespace {

// The inner node's view of one run: given inputs, its own outputs.
class InnerContext final : public KernelContext {
 public:
  InnerContext(const InnerKernel& k, std::vector<Datum> inputs, std::vector<bool> exclusive, std::vector<ir::TypeInfo> inferred)
      : k_(k), inputs_(std::move(inputs)), exclusive_(std::move(exclusive)), inferred_(std::move(inferred)),
        outputs_(k.node->outputs.size()) {}

  const ir::Node& node() const override { return *k_.node; }
  int64_t opset() const override { return k_.opset; }
  const Datum& input_datum(size_t i) const override {
    static const Datum kEmpty;
    return i < inputs_.size() ? inputs_[i] : kEmpty;
  }
  const Tensor& input(size_t i) const override {
    static const Tensor kUndefined;
    return i < inputs_.size() && inputs_[i].is_tensor() ? inputs_[i].tensor() : kUndefined;
  }
  bool input_exclusive(size_t i) const override { return i < exclusive_.size() && exclusive_[i] && input(i).defined(); }
  const ir::TypeInfo& inferred_output(size_t i) const override {
    static const ir::TypeInfo kUnknown;
    return i < inferred_.size() ? inferred_[i] : kUnknown;
  }
  Result<Tensor> AllocOutput(size_t i) override {
    const ir::TypeInfo& t = inferred_output(i);
    Shape s;
    bool known = t.kind == ir::TypeInfo::Kind::kTensor && t.dtype != DType::kUndefined && t.shape;
    for (size_t k = 0; known && k < t.shape->size(); ++k) {
      known = (*t.shape)[k].known();
      s.push_back((*t.shape)[k].value);
    }
    if (!known) return node().Error(StatusCode::kInternal, "output " + std::to_string(i) + " has no inferred type to allocate from");
    return AllocOutput(i, t.dtype, s);
  }
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape) override { return Alloc(i, dtype, shape, kRowMajor); }
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape, const DimOrder& order) override {
    return Alloc(i, dtype, shape, order);
  }
  Status SetOutput(size_t i, Datum value) override {
    if (i >= outputs_.size()) return node().Error(StatusCode::kInternal, "output index " + std::to_string(i) + " out of range");
    outputs_[i] = std::move(value);
    return Status::Ok();
  }
  Result<std::vector<Datum>> RunSubgraph(const ir::Graph& g, const std::vector<Datum>& inputs) override {
    return node().Error(StatusCode::kInternal, "an inner node of a composed kernel has no subgraph");
  }
  std::vector<Datum>& outputs() { return outputs_; }

 private:
  // AllocateInOrder zero-fills (Tensor::Allocate), which also covers the
  // row-major form's promise.
  Result<Tensor> Alloc(size_t i, DType dtype, const Shape& shape, const DimOrder& order) {
    if (i >= outputs_.size()) return node().Error(StatusCode::kInternal, "output index " + std::to_string(i) + " out of range");
    auto t = AllocateInOrder(dtype, shape, order);
    if (!t.ok()) return t.status().WithContext(node().Describe() + ": output " + std::to_string(i));
    outputs_[i] = Datum(*t);
    return t;
  }

  const InnerKernel& k_;
  std::vector<Datum> inputs_;
  std::vector<bool> exclusive_;
  std::vector<ir::TypeInfo> inferred_;
  std::vector<Datum> outputs_;
};

}  // namespace

Result<InnerKernel> InstantiateInner(const KernelRegistry& registry, std::shared_ptr<const ir::Node> node, int64_t opset,
                                     std::vector<const ir::TypeInfo*> input_types, std::vector<const Tensor*> constants) {
  InnerKernel k;
  k.opset = opset;
  k.schema = ops::OpRegistry::Global().Find(node->domain, node->op_type, opset);
  if (!k.schema) return node->Error(StatusCode::kInternal, "no schema for the inner node at opset " + std::to_string(opset));
  input_types.resize(node->inputs.size(), nullptr);
  constants.resize(node->inputs.size(), nullptr);
  KernelInit init{*node, opset, std::move(input_types), std::move(constants)};
  KILN_ASSIGN_OR_RETURN(k.kernel, registry.Instantiate(init));
  k.node = std::move(node);
  return k;
}

Result<std::vector<ir::TypeInfo>> InferInner(const InnerKernel& k, const std::vector<const ir::TypeInfo*>& types,
                                             const std::vector<const Tensor*>& values) {
  std::vector<const ir::TypeInfo*> t(types);
  std::vector<const Tensor*> v(values);
  t.resize(k.node->inputs.size(), nullptr);
  v.resize(k.node->inputs.size(), nullptr);
  ops::InferContext ictx(*k.node, k.opset, t, v);
  KILN_RETURN_IF_ERROR(ops::InferNode(*k.schema, ictx));
  return std::move(ictx.outputs());
}

Result<std::vector<Datum>> RunInner(const InnerKernel& k, std::vector<Datum> inputs, const std::vector<bool>& exclusive,
                                    const KernelContext& outer) {
  const ir::Node& n = *k.node;
  inputs.resize(n.inputs.size());
  std::vector<bool> excl(n.inputs.size(), false);
  std::vector<ir::TypeInfo> types(n.inputs.size());
  std::vector<const ir::TypeInfo*> tptr(n.inputs.size(), nullptr);
  std::vector<const Tensor*> vptr(n.inputs.size(), nullptr);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!n.HasInput(i)) {
      inputs[i] = Datum();
      continue;
    }
    excl[i] = i < exclusive.size() && exclusive[i];
    if (inputs[i].is_tensor()) {
      DimOrder target;
      if (!plan::AcceptsTensor(k.kernel.layouts.input(i), inputs[i].tensor(), &target)) {
        inputs[i] = Datum(ToOrder(inputs[i].tensor(), target));
        excl[i] = true;
      }
    }
    types[i] = TypeOfDatum(inputs[i]);
    tptr[i] = &types[i];
    vptr[i] = inputs[i].is_tensor() ? &inputs[i].tensor() : nullptr;
  }
  auto inferred = InferInner(k, tptr, vptr);
  if (!inferred.ok()) return inferred.status().WithContext(outer.node().Describe());
  vptr.clear();  // they point into `inputs`, which moves into the context
  InnerContext ctx(k, std::move(inputs), std::move(excl), std::move(*inferred));
  Status s = k.kernel.fn(ctx);
  if (!s.ok()) return s.WithContext(outer.node().Describe());
  for (size_t o = 0; o < n.outputs.size(); ++o)
    if (n.HasOutput(o) && ctx.outputs()[o].empty())
      return outer.node().Error(StatusCode::kInternal, n.Describe() + " produced no output " + std::to_string(o));
  return std::move(ctx.outputs());
}

DimOrder InnerOutputOrder(const InnerKernel& k, const std::vector<DimOrder>& input_orders) {
  if (!k.kernel.layouts.output_order) return kRowMajor;
  std::vector<DimOrder> orders(input_orders);
  orders.resize(k.node->inputs.size(), kRowMajor);
  return k.kernel.layouts.output_order(orders);
}

}  // namespace kiln::runtime
