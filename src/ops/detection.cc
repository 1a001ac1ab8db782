// NonMaxSuppression (opsets 10 and 11): attributes and shape inference.
// Opset 11 only adds to the text that the result must not depend on the
// corner order or the origin (flipped coordinates); the semantics are the same.
// The output's first dim (number of selected boxes) depends on the data, so it
// stays unknown even at run time; the kernel allocates it.
#include <string>

#include "ops/detection.h"
#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

// center_point_box: 0 = [y1, x1, y2, x2] diagonal corners in any order,
// 1 = [x_center, y_center, width, height]. Returns true for the center format.
Result<bool> ParseNonMaxSuppressionCenterPointBox(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(int64_t cpb, node.GetInt("center_point_box", 0));
  if (cpb != 0 && cpb != 1) return node.Invalid("center_point_box must be 0 or 1, got " + std::to_string(cpb));
  return cpb == 1;
}

namespace {

// The optional inputs 2..4 are scalars; a 1-element 1-D tensor is accepted
// (exporters write both), and an empty one means "absent", as in the onnx
// reference implementation.
Status CheckScalarInput(const InferContext& ctx, size_t i, const char* name) {
  if (!ctx.has_input(i)) return Status::Ok();
  const ir::Dims* d = ctx.input_dims(i);
  if (!d) return Status::Ok();
  if (d->size() > 1 || (d->size() == 1 && (*d)[0].known() && (*d)[0].value > 1))
    return ctx.Error(std::string(name) + " must be a scalar (or a 1-element tensor), got shape " + ir::DimsToString(*d));
  return Status::Ok();
}

// Error when both dims are known and differ.
Status CheckSameDim(const InferContext& ctx, const ir::Dim& a, const ir::Dim& b, const std::string& what) {
  if (a.known() && b.known() && a.value != b.value)
    return ctx.Error(what + ": " + std::to_string(a.value) + " vs " + std::to_string(b.value));
  return Status::Ok();
}

// boxes [B, N, 4], scores [B, C, N] -> selected_indices int64 [?, 3], rows
// (batch, class, box).
Status InferNonMaxSuppression(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 5));
  KILN_RETURN_IF_ERROR(ParseNonMaxSuppressionCenterPointBox(ctx.node()).status());
  // The spec allows tensor(float) only for boxes, scores and the thresholds.
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat32}));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kFloat32}));
  if (ctx.has_input(2)) KILN_RETURN_IF_ERROR(CheckDType(ctx, 2, {DType::kInt64}));
  if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(CheckDType(ctx, 3, {DType::kFloat32}));
  if (ctx.has_input(4)) KILN_RETURN_IF_ERROR(CheckDType(ctx, 4, {DType::kFloat32}));
  KILN_RETURN_IF_ERROR(CheckScalarInput(ctx, 2, "max_output_boxes_per_class"));
  KILN_RETURN_IF_ERROR(CheckScalarInput(ctx, 3, "iou_threshold"));
  KILN_RETURN_IF_ERROR(CheckScalarInput(ctx, 4, "score_threshold"));

  const ir::Dims* boxes = ctx.input_dims(0);
  const ir::Dims* scores = ctx.input_dims(1);
  if (boxes && boxes->size() != 3)
    return ctx.Error("boxes must have rank 3 [num_batches, num_boxes, 4], got shape " + ir::DimsToString(*boxes));
  if (boxes && (*boxes)[2].known() && (*boxes)[2].value != 4)
    return ctx.Error("boxes must have 4 coordinates per box (last dim 4), got shape " + ir::DimsToString(*boxes));
  if (scores && scores->size() != 3)
    return ctx.Error("scores must have rank 3 [num_batches, num_classes, num_boxes], got shape " + ir::DimsToString(*scores));
  if (boxes && scores) {
    const std::string shapes = " (boxes " + ir::DimsToString(*boxes) + ", scores " + ir::DimsToString(*scores) + ")";
    KILN_RETURN_IF_ERROR(CheckSameDim(ctx, (*boxes)[0], (*scores)[0], "boxes and scores differ in num_batches" + shapes));
    KILN_RETURN_IF_ERROR(CheckSameDim(ctx, (*boxes)[1], (*scores)[2], "boxes and scores differ in num_boxes" + shapes));
  }
  ctx.set_output(0, DType::kInt64, ir::Dims{ir::Dim{}, ir::Dim::Known(3)});
  return Status::Ok();
}

}  // namespace

void RegisterDetectionOps(OpRegistry& r) {
  r.Register({"", "NonMaxSuppression", 10, 1000, InferNonMaxSuppression});
}

}  // namespace kiln::ops
