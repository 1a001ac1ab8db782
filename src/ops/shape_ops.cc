// Shape-only ops: Identity (more to come: Reshape, Flatten, Squeeze, ...).
#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {
namespace {

Status InferIdentity(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

}  // namespace

void RegisterShapeOps(OpRegistry& r) {
  r.Register({"", "Identity", 1, 1000, InferIdentity});
}

}  // namespace kiln::ops
