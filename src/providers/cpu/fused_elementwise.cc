// FusedElementwise (ops/fused.h) on the cpu provider: its steps as one
// plan of the elementwise loop (elementwise_loop.h), each step the loop the
// unfused cpu kernel runs, in the same float arithmetic, so the fused
// chain's values are exactly the unfused nodes'. Inputs may come in any
// dense layout; the output takes the layout of the first input that has its
// shape, else row-major.
//
// Declined to the composition of this provider's own kernels
// (compose_elementwise.h): other dtypes, inputs of unknown rank, more than
// kElementwiseMaxInputs inputs or kElementwiseMaxSteps steps.
#include <string>
#include <vector>

#include "ops/fused.h"
#include "providers/cpu/elementwise_loop.h"
#include "providers/cpu/families.h"
#include "providers/cpu/register.h"
#include "runtime/compose_elementwise.h"

namespace kiln::cpu {
namespace {

Result<runtime::Kernel> MakeFusedElementwise(const runtime::KernelInit& init) {
  const ir::Node& n = init.node;
  KILN_ASSIGN_OR_RETURN(std::vector<ops::ElementwiseStep> steps, ops::ParseElementwiseSteps(n));
  ElementwisePlan plan;
  plan.inputs = n.inputs.size();
  bool fast = plan.inputs <= kElementwiseMaxInputs && steps.size() <= kElementwiseMaxSteps;
  std::vector<const ir::Dims*> dims;
  for (size_t i = 0; fast && i < plan.inputs; ++i) {
    fast = IsFloatWithRank(init.input_type(i));
    if (fast) dims.push_back(&*init.input_type(i)->shape);
  }
  for (const ops::ElementwiseStep& s : steps) {
    ElementwiseStepRun step;
    if (s.operands.size() == 2) step.binary = FindBinaryRun(s.op);
    if (s.operands.size() == 1) step.unary = FindUnaryRun(s.op);
    if (!step.binary && !step.unary) fast = false;
    step.params = {s.alpha, s.beta};
    for (size_t k = 0; k < s.operands.size(); ++k) step.operands[k] = s.operands[k];
    plan.steps.push_back(step);
  }
  if (!fast) return runtime::ComposeElementwise(Kernels(), init);
  plan.full = CoveringInput(dims);
  return ElementwiseKernel(std::move(plan));
}

}  // namespace

void RegisterFusedElementwiseKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory(ops::kKilnDomain, "FusedElementwise", MakeFusedElementwise);
}

}  // namespace kiln::cpu
