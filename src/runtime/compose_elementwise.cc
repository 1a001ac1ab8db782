// FusedElementwise run as its steps (compose_elementwise.h).
#include "runtime/compose_elementwise.h"

#include <memory>
#include <vector>

#include "ops/fused.h"
#include "runtime/inner_kernel.h"

namespace kiln::runtime {
namespace {

struct ComposedSteps {  // the steps and the kernel of each
  std::vector<ops::ElementwiseStep> steps;
  std::vector<InnerKernel> kernels;
};

}  // namespace

Result<Kernel> ComposeElementwise(const KernelRegistry& registry, const KernelInit& init) {
  const ir::Node& n = init.node;
  auto plan = std::make_shared<ComposedSteps>();
  KILN_ASSIGN_OR_RETURN(plan->steps, ops::ParseElementwiseSteps(n));
  std::vector<ir::Node> nodes = ops::ElementwiseStepNodes(n, plan->steps);
  std::vector<ir::TypeInfo> results(plan->steps.size());
  KernelLayouts layouts;
  layouts.inputs.resize(n.inputs.size());
  std::vector<bool> declared(n.inputs.size(), false);
  for (size_t k = 0; k < plan->steps.size(); ++k) {
    std::vector<const ir::TypeInfo*> types;
    std::vector<const Tensor*> constants;
    for (int64_t o : plan->steps[k].operands) {
      types.push_back(o >= 0 ? init.input_type(static_cast<size_t>(o)) : &results[static_cast<size_t>(-o - 1)]);
      constants.push_back(o >= 0 ? init.constant(static_cast<size_t>(o)) : nullptr);
    }
    KILN_ASSIGN_OR_RETURN(InnerKernel kernel, InstantiateInner(registry, std::make_shared<const ir::Node>(std::move(nodes[k])),
                                                               ops::kElementwiseStepOpset, types, constants));
    if (!kernel.kernel) return Kernel();
    KILN_ASSIGN_OR_RETURN(auto outs, InferInner(kernel, types, constants));
    results[k] = outs.empty() ? ir::TypeInfo() : std::move(outs[0]);
    for (size_t slot = 0; slot < plan->steps[k].operands.size(); ++slot) {
      const int64_t o = plan->steps[k].operands[slot];
      if (o < 0 || declared[static_cast<size_t>(o)]) continue;
      layouts.inputs[static_cast<size_t>(o)] = kernel.kernel.layouts.input(slot);
      declared[static_cast<size_t>(o)] = true;
    }
    plan->kernels.push_back(std::move(kernel));
  }
  // The orders the steps hand on, as the run below produces them.
  layouts.output_order = [plan](const std::vector<DimOrder>& in) {
    std::vector<DimOrder> results;
    for (size_t k = 0; k < plan->steps.size(); ++k) {
      std::vector<DimOrder> orders;
      for (int64_t o : plan->steps[k].operands)
        orders.push_back(o >= 0 ? (static_cast<size_t>(o) < in.size() ? in[static_cast<size_t>(o)] : kRowMajor)
                                : results[static_cast<size_t>(-o - 1)]);
      results.push_back(InnerOutputOrder(plan->kernels[k], orders));
    }
    return results.back();
  };
  return Kernel(
      [plan](KernelContext& ctx) -> Status {
        std::vector<Datum> results(plan->steps.size());
        for (size_t k = 0; k < plan->steps.size(); ++k) {
          std::vector<Datum> operands;
          for (int64_t o : plan->steps[k].operands)
            operands.push_back(o >= 0 ? ctx.input_datum(static_cast<size_t>(o)) : results[static_cast<size_t>(-o - 1)]);
          KILN_ASSIGN_OR_RETURN(auto outs, RunInner(plan->kernels[k], std::move(operands), {}, ctx));
          results[k] = std::move(outs[0]);
        }
        return ctx.SetOutput(0, std::move(results.back()));
      },
      std::move(layouts));
}

}  // namespace kiln::runtime
