// FusedSeparableConv run as its three FusedConv steps (compose_separable.h).
#include "runtime/compose_separable.h"

#include <memory>
#include <optional>
#include <string>

#include "ops/fused.h"
#include "runtime/inner_kernel.h"

namespace kiln::runtime {
namespace {

struct SeparablePlan {
  std::optional<InnerKernel> expand;
  InnerKernel depthwise;
  InnerKernel project;
};

// M, the depthwise group: Wd's first dim, from its value or its load-time type.
std::optional<int64_t> DepthwiseChannels(const KernelInit& init) {
  if (const Tensor* wd = init.constant(ops::kSepWd); wd && wd->rank() == 4) return wd->shape()[0];
  const ir::TypeInfo* t = init.input_type(ops::kSepWd);
  if (t && t->kind == ir::TypeInfo::Kind::kTensor && t->shape && t->shape->size() == 4 && (*t->shape)[0].known())
    return (*t->shape)[0].value;
  return std::nullopt;
}

// The type inference gives output 0, unknown when it gave none.
ir::TypeInfo FirstOutput(std::vector<ir::TypeInfo> outs) { return outs.empty() ? ir::TypeInfo() : std::move(outs[0]); }

// Input i's layouts as step k's kernel declares them for its slot `slot`.
void TakeLayouts(KernelLayouts& outer, size_t i, const InnerKernel& k, size_t slot) { outer.inputs[i] = k.kernel.layouts.input(slot); }

}  // namespace

Result<Kernel> ComposeSeparable(const KernelRegistry& registry, const KernelInit& init) {
  using namespace ops;  // NOLINT: the kSep* slot names
  const ir::Node& n = init.node;
  const std::optional<int64_t> m = DepthwiseChannels(init);
  if (!m || *m <= 0) return n.Error(StatusCode::kUnimplemented, "the depthwise weights Wd have no known shape at session creation");
  KILN_ASSIGN_OR_RETURN(SeparableSteps steps, SplitSeparable(n, *m));
  auto type = [&](size_t i) { return n.HasInput(i) ? init.input_type(i) : nullptr; };
  auto constant = [&](size_t i) { return n.HasInput(i) ? init.constant(i) : nullptr; };

  // Each step is instantiated with the type the previous one infers, so a
  // kernel that builds its primitive for a static shape gets one.
  auto plan = std::make_shared<SeparablePlan>();
  ir::TypeInfo h;
  const ir::TypeInfo* h_type = type(kSepX);
  if (steps.expand) {
    KILN_ASSIGN_OR_RETURN(InnerKernel k, InstantiateInner(registry, std::make_shared<const ir::Node>(std::move(*steps.expand)), 1,
                                                          {type(kSepX), type(kSepWe), type(kSepBe)},
                                                          {nullptr, constant(kSepWe), constant(kSepBe)}));
    if (!k.kernel) return Kernel();
    KILN_ASSIGN_OR_RETURN(auto outs, InferInner(k, {type(kSepX), type(kSepWe), type(kSepBe)}, {nullptr, constant(kSepWe), constant(kSepBe)}));
    h = FirstOutput(std::move(outs));
    h_type = &h;
    plan->expand = std::move(k);
  }
  KILN_ASSIGN_OR_RETURN(plan->depthwise, InstantiateInner(registry, std::make_shared<const ir::Node>(std::move(steps.depthwise)), 1,
                                                          {h_type, type(kSepWd), type(kSepBd)},
                                                          {nullptr, constant(kSepWd), constant(kSepBd)}));
  if (!plan->depthwise.kernel) return Kernel();
  KILN_ASSIGN_OR_RETURN(auto d_outs, InferInner(plan->depthwise, {h_type, type(kSepWd), type(kSepBd)},
                                                {nullptr, constant(kSepWd), constant(kSepBd)}));
  const ir::TypeInfo d = FirstOutput(std::move(d_outs));
  KILN_ASSIGN_OR_RETURN(plan->project, InstantiateInner(registry, std::make_shared<const ir::Node>(std::move(steps.project)), 1,
                                                        {&d, type(kSepWp), type(kSepBp), type(kSepZ)},
                                                        {nullptr, constant(kSepWp), constant(kSepBp), constant(kSepZ)}));
  if (!plan->project.kernel) return Kernel();

  KernelLayouts layouts;
  layouts.inputs.resize(kSepNumInputs);
  const InnerKernel& first = plan->expand ? *plan->expand : plan->depthwise;
  TakeLayouts(layouts, kSepX, first, 0);
  if (plan->expand) {
    TakeLayouts(layouts, kSepWe, *plan->expand, 1);
    TakeLayouts(layouts, kSepBe, *plan->expand, 2);
  }
  TakeLayouts(layouts, kSepWd, plan->depthwise, 1);
  TakeLayouts(layouts, kSepBd, plan->depthwise, 2);
  TakeLayouts(layouts, kSepWp, plan->project, 1);
  TakeLayouts(layouts, kSepBp, plan->project, 2);
  TakeLayouts(layouts, kSepZ, plan->project, 3);
  if (plan->project.kernel.layouts.output_order) {
    // The orders the steps hand on, as the run below produces them.
    layouts.output_order = [plan](const std::vector<DimOrder>& in) {
      auto at = [&](size_t i) { return i < in.size() ? in[i] : kRowMajor; };
      const DimOrder h_order = plan->expand ? InnerOutputOrder(*plan->expand, {at(kSepX), at(kSepWe), at(kSepBe)}) : at(kSepX);
      const DimOrder d_order = InnerOutputOrder(plan->depthwise, {h_order, at(kSepWd), at(kSepBd)});
      return InnerOutputOrder(plan->project, {d_order, at(kSepWp), at(kSepBp), at(kSepZ)});
    };
  }

  return Kernel(
      [plan](KernelContext& ctx) -> Status {
        auto in = [&](size_t i) { return ctx.has_input(i) ? ctx.input_datum(i) : Datum(); };
        Datum h = in(kSepX);
        if (plan->expand) {
          KILN_ASSIGN_OR_RETURN(auto outs, RunInner(*plan->expand, {h, in(kSepWe), in(kSepBe)}, {}, ctx));
          h = std::move(outs[0]);
        }
        // H and D are the composition's own: nothing else holds them.
        KILN_ASSIGN_OR_RETURN(auto d, RunInner(plan->depthwise, {std::move(h), in(kSepWd), in(kSepBd)}, {plan->expand.has_value()}, ctx));
        KILN_ASSIGN_OR_RETURN(auto y, RunInner(plan->project, {std::move(d[0]), in(kSepWp), in(kSepBp), in(kSepZ)},
                                               {true, false, false, ctx.input_exclusive(kSepZ)}, ctx));
        return ctx.SetOutput(0, std::move(y[0]));
      },
      std::move(layouts));
}

}  // namespace kiln::runtime
