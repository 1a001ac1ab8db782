// The order of the passes, per optimization level (the only place it is set).
//
//   basic:    fold_constants, remove_identity, fold_shape, eliminate_dead_code,
//             repeated until nothing changes (a folded Shape makes its Gather
//             and Concat constant; a removed Identity exposes a constant).
//   extended: basic, then simplify_transpose_reshape, fold_batchnorm and
//             fold_conv_affine (before the fusions: Conv+BN+Relu and
//             Conv*s+t+Relu must look like Conv+Relu), fuse_conv_activation,
//             fuse_residual_add (after it: a Conv whose Add sits before the
//             activation is left for it), fuse_post_affine (a scalar Mul/Add
//             after a fused node's activation), fuse_separable_conv (last of
//             the fusions: the expand/depthwise/project convs must already
//             carry their activations, residual Add and post_affine),
//             fuse_elementwise (after every fusion that takes an
//             elementwise node into a Conv or Gemm), then basic again; repeated until nothing changes (a Mul after a BN
//             folds once the BN has). KILN_FUSE_SEPARABLE=0 turns
//             fuse_separable_conv off.
//   all:      extended; layout planning is the provider's (src/plan).
// The graph is checked after every pass (it is cheap, so in every build): a
// pass that breaks it is a kiln bug, reported as an internal error naming it.
#include "passes/pipeline.h"

#include <set>

#include "ops/fused.h"
#include "passes/pass.h"

namespace kiln::passes {

Result<OptLevel> ParseOptLevel(const std::string& s) {
  if (s == "disable") return OptLevel::kDisable;
  if (s == "basic") return OptLevel::kBasic;
  if (s == "extended") return OptLevel::kExtended;
  if (s == "all") return OptLevel::kAll;
  return InvalidArgument("unknown optimization level '" + s + "' (use disable, basic, extended or all)");
}

const char* OptLevelName(OptLevel level) {
  switch (level) {
    case OptLevel::kDisable: return "disable";
    case OptLevel::kBasic: return "basic";
    case OptLevel::kExtended: return "extended";
    case OptLevel::kAll: return "all";
  }
  return "?";
}

void PassContext::Note(const std::string& pass, const std::string& what) {
  if (report_) report_->notes.push_back(pass + ": " + what);
}

bool PassContext::ImportKilnDomain() {
  auto it = model_.opsets.find(ops::kKilnDomain);
  if (it != model_.opsets.end()) return it->second == 1;
  model_.opsets[ops::kKilnDomain] = 1;
  return true;
}

namespace {

struct Pass {
  const char* name;
  PassFn run;
};

constexpr Pass kBasic[] = {
    {"fold_constants", FoldConstants},
    {"remove_identity", RemoveIdentity},
    {"fold_shape", FoldShape},
    {"eliminate_dead_code", EliminateDeadCode},
};

constexpr Pass kExtended[] = {
    {"simplify_transpose_reshape", SimplifyTransposeReshape},
    {"fold_batchnorm", FoldBatchNorm},
    {"fold_conv_affine", FoldConvAffine},
    {"fuse_conv_activation", FuseConvActivation},
    {"fuse_residual_add", FuseResidualAdd},
    {"fuse_post_affine", FusePostAffine},
    {"fuse_separable_conv", FuseSeparableConv},
    {"fuse_elementwise", FuseElementwise},
};

// Each round can only shrink the graph; the bounds are guards.
constexpr int kMaxBasicRounds = 16;
constexpr int kMaxExtendedRounds = 8;

// Acyclic, no dangling input, each value defined once, every graph output defined.
Status VerifyGraph(const ir::Graph& g, const char* pass) {
  auto fail = [&](const std::string& msg) { return Internal(std::string("pass ") + pass + " broke the graph: " + msg); };
  auto order = g.TopologicalOrder();
  if (!order.ok()) return fail(order.status().message());
  std::set<std::string> defined;
  for (const auto& v : g.inputs) defined.insert(v.name);
  for (const auto& [n, t] : g.initializers) defined.insert(n);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs)
      if (!o.empty() && !defined.insert(o).second) return fail("value '" + o + "' is defined twice");
  for (const auto& v : g.outputs)
    if (!defined.count(v.name)) return fail("graph output '" + v.name + "' is not defined");
  return Status::Ok();
}

Result<bool> RunPass(const Pass& p, PassContext& ctx, const std::set<std::string>& disabled) {
  if (disabled.count(p.name)) return false;
  ir::Graph& g = ctx.model().graph;
  auto changed = p.run(g, ctx);
  if (!changed.ok()) return changed.status().WithContext(std::string("pass ") + p.name);
  KILN_RETURN_IF_ERROR(VerifyGraph(g, p.name));
  return *changed;
}

Status RunBasic(PassContext& ctx, const std::set<std::string>& disabled) {
  for (int round = 0; round < kMaxBasicRounds; ++round) {
    bool any = false;
    for (const Pass& p : kBasic) {
      KILN_ASSIGN_OR_RETURN(bool changed, RunPass(p, ctx, disabled));
      any = any || changed;
    }
    if (!any) break;
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> PassNames(OptLevel level) {
  std::vector<std::string> names;
  if (level == OptLevel::kDisable) return names;
  for (const Pass& p : kBasic) names.push_back(p.name);
  if (level == OptLevel::kBasic) return names;
  for (const Pass& p : kExtended) names.push_back(p.name);
  return names;
}

Status Optimize(ir::Model& model, OptLevel level, PassReport* report, const std::set<std::string>& disabled) {
  if (level == OptLevel::kDisable) return Status::Ok();
  // A graph that is already broken (a cycle, a value defined twice) is left
  // to the executor, which reports it with the model's names.
  if (!VerifyGraph(model.graph, "(none)").ok()) return Status::Ok();
  PassContext ctx(model, report);
  KILN_RETURN_IF_ERROR(RunBasic(ctx, disabled));
  if (level == OptLevel::kBasic) return Status::Ok();
  for (int round = 0; round < kMaxExtendedRounds; ++round) {
    bool any = false;
    for (const Pass& p : kExtended) {
      KILN_ASSIGN_OR_RETURN(bool changed, RunPass(p, ctx, disabled));
      any = any || changed;
    }
    if (!any) break;
    KILN_RETURN_IF_ERROR(RunBasic(ctx, disabled));
  }
  return Status::Ok();
}

}  // namespace kiln::passes
