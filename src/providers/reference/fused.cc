// Reference kernels of kiln's fused ops (ops/fused.h): literally the
// composition each one stands for. The unfused reference kernel (Conv, Gemm,
// MatMul, ConvTranspose) runs first on the node without its extras, writing the output;
// then the residual Z or the Bias is added and the activation applied, in
// double, rounding once. So an optimized graph checked on the oracle is
// checked against the same Conv/Gemm/MatMul code as the original graph.
// FusedSeparableConv runs as its three FusedConv steps, each this provider's
// FusedConv kernel (runtime/compose_separable.h); FusedElementwise as its
// ai.onnx steps (runtime/compose_elementwise.h).
#include <memory>

#include "ops/fused.h"
#include "providers/reference/families.h"
#include "providers/reference/register.h"
#include "providers/reference/util.h"
#include "runtime/compose_elementwise.h"
#include "runtime/compose_separable.h"

namespace kiln::reference {
namespace {

// Same as ops/fused.cc: the ai.onnx version of the op a fused op extends.
constexpr int64_t kInnerOpset = 13;

// Shows the unfused kernel its own node (first inputs only) while reading
// the fused node's inputs and writing its output, which is kept for the
// post-processing.
class InnerContext final : public runtime::KernelContext {
 public:
  InnerContext(runtime::KernelContext& outer, const ir::Node& inner) : outer_(outer), inner_(inner) {}

  const ir::Node& node() const override { return inner_; }
  int64_t opset() const override { return kInnerOpset; }
  const Datum& input_datum(size_t i) const override { return outer_.input_datum(i); }
  const Tensor& input(size_t i) const override { return outer_.input(i); }
  const ir::TypeInfo& inferred_output(size_t i) const override { return outer_.inferred_output(i); }
  Result<Tensor> AllocOutput(size_t i) override { return Keep(i, outer_.AllocOutput(i)); }
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape) override { return Keep(i, outer_.AllocOutput(i, dtype, shape)); }
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape, const DimOrder& order) override {
    return Keep(i, outer_.AllocOutput(i, dtype, shape, order));
  }
  Status SetOutput(size_t i, Datum value) override {
    // A kernel that hands back a view: copy it, so the post-processing
    // writes into a buffer of its own rather than into an input.
    if (i != 0 || !value.is_tensor()) return outer_.Error("the unfused kernel produced an unexpected output");
    output_ = value.tensor().Clone();
    return outer_.SetOutput(0, Datum(output_));
  }
  Result<Tensor> AllocScratch(DType dtype, const Shape& shape, const DimOrder& order, bool zero) const override {
    return outer_.AllocScratch(dtype, shape, order, zero);
  }
  Result<std::vector<Datum>> RunSubgraph(const ir::Graph& g, const std::vector<Datum>& inputs) override {
    return outer_.Error("a fused op has no subgraph");
  }
  const ir::Graph* graph() const override { return outer_.graph(); }
  const Tensor& output() const { return output_; }

 private:
  Result<Tensor> Keep(size_t i, Result<Tensor> t) {
    if (t.ok() && i == 0) output_ = *t;
    return t;
  }
  runtime::KernelContext& outer_;
  const ir::Node& inner_;
  Tensor output_;
};

struct FusedPlan {
  std::shared_ptr<const ir::Node> inner;  // the node as the unfused op
  runtime::KernelFn inner_kernel;
  ops::ActivationAttrs act;
  size_t extra = 0;                        // index of Z (FusedConv) / Bias (FusedMatMul); 0 = none
};

// y = act(y + extra), extra broadcast to y (Z has y's shape, Bias broadcasts).
Status PostProcess(runtime::KernelContext& ctx, const FusedPlan& p, Tensor& y) {
  std::vector<double> add;
  std::vector<int64_t> strides;
  const Tensor* e = p.extra && ctx.has_input(p.extra) ? &ctx.input(p.extra) : nullptr;
  if (e) {
    if (e->rank() > y.rank()) return ctx.Error("input " + std::to_string(p.extra) + " " + ShapeToString(e->shape()) +
                                               " does not broadcast to the output " + ShapeToString(y.shape()));
    for (int k = 0; k < e->rank(); ++k) {
      const int64_t d = e->dim(k), o = y.dim(k + y.rank() - e->rank());
      if (d != o && d != 1)
        return ctx.Error("input " + std::to_string(p.extra) + " " + ShapeToString(e->shape()) + " does not broadcast to the output " +
                         ShapeToString(y.shape()));
    }
    strides = BroadcastStrides(e->shape(), y.shape());
  }
  if (!e && p.act.kind == ops::Activation::kNone && !p.act.has_post_affine()) return Status::Ok();
  ForEachIndex(y.shape(), [&](int64_t lin, const std::vector<int64_t>& idx) {
    double v = y.GetAsDouble(lin);
    if (e) v += e->GetAsDouble(OffsetOf(idx, strides));
    y.SetFromDouble(lin, ops::ApplyActivation(p.act, v));
  });
  return Status::Ok();
}

// A factory: parses the activation and finds the unfused kernel once per node.
runtime::KernelFactory FusedFactory(const char* inner_op, size_t inner_inputs, size_t extra) {
  return [=](const runtime::KernelInit& init) -> Result<runtime::Kernel> {
    auto plan = std::make_shared<FusedPlan>();
    KILN_ASSIGN_OR_RETURN(plan->act, ops::ParseActivation(init.node));
    auto inner = std::make_shared<ir::Node>(init.node);
    inner->op_type = inner_op;
    inner->domain.clear();
    if (inner->inputs.size() > inner_inputs) inner->inputs.resize(inner_inputs);
    inner->attrs.erase("activation");
    inner->attrs.erase("activation_params");
    runtime::KernelInit inner_init{*inner, kInnerOpset, init.input_types, init.constant_inputs, {}};
    if (inner_init.input_types.size() > inner_inputs) inner_init.input_types.resize(inner_inputs);
    if (inner_init.constant_inputs.size() > inner_inputs) inner_init.constant_inputs.resize(inner_inputs);
    KILN_ASSIGN_OR_RETURN(runtime::Kernel inner_kernel, Kernels().Instantiate(inner_init));
    plan->inner_kernel = std::move(inner_kernel.fn);
    if (!plan->inner_kernel) return init.node.Error(StatusCode::kInternal, std::string("no reference kernel for ") + inner_op);
    plan->inner = std::move(inner);
    plan->extra = extra;
    return runtime::Kernel([plan](runtime::KernelContext& ctx) -> Status {
      InnerContext ictx(ctx, *plan->inner);
      KILN_RETURN_IF_ERROR(plan->inner_kernel(ictx));
      Tensor y = ictx.output();
      if (!y.defined()) return ctx.Error(std::string("the unfused ") + plan->inner->op_type + " kernel produced no output");
      if (!DTypeIsFloat(y.dtype())) return ctx.Error(std::string("fused ops take floating point tensors, got ") + DTypeName(y.dtype()));
      return PostProcess(ctx, *plan, y);
    });
  };
}

}  // namespace

void RegisterFusedKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory(ops::kKilnDomain, "FusedConv", FusedFactory("Conv", 3, 3));
  r.RegisterFactory(ops::kKilnDomain, "FusedConvTranspose", FusedFactory("ConvTranspose", 3, 0));
  r.RegisterFactory(ops::kKilnDomain, "FusedGemm", FusedFactory("Gemm", 3, 0));
  r.RegisterFactory(ops::kKilnDomain, "FusedMatMul", FusedFactory("MatMul", 2, 2));
  r.RegisterFactory(ops::kKilnDomain, "FusedSeparableConv",
                    [](const runtime::KernelInit& init) { return runtime::ComposeSeparable(Kernels(), init); });
  r.RegisterFactory(ops::kKilnDomain, "FusedElementwise",
                    [](const runtime::KernelInit& init) { return runtime::ComposeElementwise(Kernels(), init); });
}

}  // namespace kiln::reference
