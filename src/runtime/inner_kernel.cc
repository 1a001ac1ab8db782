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
  InnerContext(const InnerKernel& k, std::vector<Datum> inputs, std::vector<bool> exclusive, std::vector<ir::TypeInfo> inferred,
               const KernelContext& outer)
      : k_(k), inputs_(std::move(inputs)), exclusive_(std::move(exclusive)), inferred_(std::move(inferred)),
        outputs_(k.node->outputs.size()), outer_(outer) {}

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
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape) override { return Alloc(i, dtype, shape, kRowMajor, true); }
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape, const DimOrder& order) override {
    return Alloc(i, dtype, shape, order, false);
  }
  Status SetOutput(size_t i, Datum value) override {
    if (i >= outputs_.size()) return node().Error(StatusCode::kInternal, "output index " + std::to_string(i) + " out of range");
    outputs_[i] = std::move(value);
    return Status::Ok();
  }
  Result<Tensor> AllocScratch(DType dtype, const Shape& shape, const DimOrder& order, bool zero) const override {
    return outer_.AllocScratch(dtype, shape, order, zero);
  }
  Result<std::vector<Datum>> RunSubgraph(const ir::Graph& g, const std::vector<Datum>& inputs) override {
    return node().Error(StatusCode::kInternal, "an inner node of a composed kernel has no subgraph");
  }
  std::vector<Datum>& outputs() { return outputs_; }

 private:
  // From the outer context's pool: the composition hands these on and
  // drops them within the outer node's run.
  Result<Tensor> Alloc(size_t i, DType dtype, const Shape& shape, const DimOrder& order, bool zero) {
    if (i >= outputs_.size()) return node().Error(StatusCode::kInternal, "output index " + std::to_string(i) + " out of range");
    auto t = outer_.AllocScratch(dtype, shape, order, zero);
    if (!t.ok()) return t.status().WithContext(node().Describe() + ": output " + std::to_string(i));
    outputs_[i] = Datum(*t);
    return t;
  }

  const InnerKernel& k_;
  std::vector<Datum> inputs_;
  std::vector<bool> exclusive_;
  std::vector<ir::TypeInfo> inferred_;
  std::vector<Datum> outputs_;
  const KernelContext& outer_;
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
  KernelInit init{*node, opset, std::move(input_types), std::move(constants), {}};
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
        const Tensor& src = inputs[i].tensor();
        KILN_ASSIGN_OR_RETURN(Tensor converted, outer.AllocScratch(src.dtype(), src.shape(), target, false));
        CopyToOrder(src, target, converted);
        inputs[i] = Datum(std::move(converted));
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
  InnerContext ctx(k, std::move(inputs), std::move(excl), std::move(*inferred), outer);
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
