// GridSample and RoiAlign: attributes and shape inference.
#include "ops/sampling.h"

#include <cmath>
#include <string>

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

Result<GridSampleAttrs> ParseGridSample(const ir::Node& node, int64_t opset) {
  GridSampleAttrs a;
  // Opset 20 renamed bilinear/bicubic to linear/cubic (they now mean N-D).
  const bool new_names = opset >= 20;
  KILN_ASSIGN_OR_RETURN(std::string mode, node.GetString("mode", new_names ? "linear" : "bilinear"));
  if (mode == (new_names ? "linear" : "bilinear")) a.mode = GridSampleAttrs::Mode::kLinear;
  else if (mode == "nearest") a.mode = GridSampleAttrs::Mode::kNearest;
  else if (mode == (new_names ? "cubic" : "bicubic")) a.mode = GridSampleAttrs::Mode::kCubic;
  else
    return node.Invalid("unsupported mode '" + mode + "' at opset " + std::to_string(opset) + " (expected " +
                        (new_names ? "linear, nearest or cubic" : "bilinear, nearest or bicubic") + ")");
  KILN_ASSIGN_OR_RETURN(std::string padding, node.GetString("padding_mode", "zeros"));
  if (padding == "zeros") a.padding = GridSampleAttrs::Padding::kZeros;
  else if (padding == "border") a.padding = GridSampleAttrs::Padding::kBorder;
  else if (padding == "reflection") a.padding = GridSampleAttrs::Padding::kReflection;
  else return node.Invalid("unsupported padding_mode '" + padding + "'");
  KILN_ASSIGN_OR_RETURN(int64_t align, node.GetInt("align_corners", 0));
  if (align != 0 && align != 1) return node.Invalid("align_corners must be 0 or 1, got " + std::to_string(align));
  a.align_corners = align == 1;
  return a;
}

Result<RoiAlignAttrs> ParseRoiAlign(const ir::Node& node, int64_t opset) {
  RoiAlignAttrs a;
  KILN_ASSIGN_OR_RETURN(std::string mode, node.GetString("mode", "avg"));
  if (mode == "max") a.max_mode = true;
  else if (mode != "avg") return node.Invalid("unsupported mode '" + mode + "' (expected avg or max)");
  if (opset >= 16) {
    KILN_ASSIGN_OR_RETURN(std::string coord, node.GetString("coordinate_transformation_mode", "half_pixel"));
    if (coord == "half_pixel") a.half_pixel = true;
    else if (coord != "output_half_pixel")
      return node.Invalid("unsupported coordinate_transformation_mode '" + coord + "' (expected half_pixel or output_half_pixel)");
  }  // opset 10 always behaved as output_half_pixel (no pixel shift)
  KILN_ASSIGN_OR_RETURN(a.output_height, node.GetInt("output_height", 1));
  KILN_ASSIGN_OR_RETURN(a.output_width, node.GetInt("output_width", 1));
  if (a.output_height <= 0 || a.output_width <= 0)
    return node.Invalid("output_height and output_width must be > 0, got " + std::to_string(a.output_height) + " and " +
                        std::to_string(a.output_width));
  KILN_ASSIGN_OR_RETURN(a.sampling_ratio, node.GetInt("sampling_ratio", 0));
  if (a.sampling_ratio < 0) return node.Invalid("sampling_ratio must be >= 0, got " + std::to_string(a.sampling_ratio));
  KILN_ASSIGN_OR_RETURN(float scale, node.GetFloat("spatial_scale", 1.0f));
  if (!std::isfinite(scale)) return node.Invalid("spatial_scale must be finite");
  a.spatial_scale = scale;
  return a;
}

namespace {

Status InferGridSample(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  KILN_ASSIGN_OR_RETURN(GridSampleAttrs attrs, ParseGridSample(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  if (ctx.input_dtype(0) == DType::kString) return ctx.Error("input X must be numeric, got string");
  const ir::Dims* x = ctx.input_dims(0);
  const ir::Dims* g = ctx.input_dims(1);
  const DType dt = ctx.input_dtype(0);
  std::optional<size_t> rank;
  if (x) rank = x->size();
  else if (g) rank = g->size();
  if (!rank) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  if (ctx.opset() < 20 && *rank != 4) return ctx.Error("X and grid must have rank 4 at opset " + std::to_string(ctx.opset()) + ", got rank " + std::to_string(*rank));
  if (*rank < 3) return ctx.Error("X and grid must have rank >= 3, got " + std::to_string(*rank));
  if (attrs.mode == GridSampleAttrs::Mode::kCubic && *rank != 4) return ctx.Error("cubic mode needs 4-D input");
  if (x && g && x->size() != g->size())
    return ctx.Error("X has rank " + std::to_string(x->size()) + " but grid has rank " + std::to_string(g->size()));
  const size_t r = *rank - 2;  // spatial dims
  if (g && (*g)[*rank - 1].known() && (*g)[*rank - 1].value != static_cast<int64_t>(r))
    return ctx.Error("grid's last dim is " + std::to_string((*g)[*rank - 1].value) + ", expected " + std::to_string(r) +
                     " (one coordinate per spatial dim)");
  if (x && g && (*x)[0].known() && (*g)[0].known() && (*x)[0].value != (*g)[0].value)
    return ctx.Error("X has batch " + std::to_string((*x)[0].value) + " but grid has batch " + std::to_string((*g)[0].value));
  ir::Dims out(*rank);
  if (x) out[0] = (*x)[0], out[1] = (*x)[1];
  if (g) {
    if (!out[0].known()) out[0] = (*g)[0];
    for (size_t k = 0; k < r; ++k) out[2 + k] = (*g)[1 + k];
  }
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

Status InferRoiAlign(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, 3));
  KILN_ASSIGN_OR_RETURN(RoiAlignAttrs attrs, ParseRoiAlign(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 2, {DType::kInt64}));
  if (ctx.input_dtype(0) != DType::kUndefined && ctx.input_dtype(1) != DType::kUndefined && ctx.input_dtype(0) != ctx.input_dtype(1))
    return ctx.Error(std::string("rois has dtype ") + DTypeName(ctx.input_dtype(1)) + ", X has " + DTypeName(ctx.input_dtype(0)));
  const ir::Dims* x = ctx.input_dims(0);
  const ir::Dims* rois = ctx.input_dims(1);
  const ir::Dims* bi = ctx.input_dims(2);
  if (x && x->size() != 4) return ctx.Error("X must have rank 4 (N, C, H, W), got rank " + std::to_string(x->size()));
  if (rois && rois->size() != 2) return ctx.Error("rois must have rank 2 (num_rois, 4), got rank " + std::to_string(rois->size()));
  if (rois && (*rois)[1].known() && (*rois)[1].value != 4)
    return ctx.Error("rois must have 4 columns (x1, y1, x2, y2), got " + std::to_string((*rois)[1].value));
  if (bi && bi->size() != 1) return ctx.Error("batch_indices must have rank 1, got rank " + std::to_string(bi->size()));
  ir::Dim num;
  if (rois) num = (*rois)[0];
  if (bi && (*bi)[0].known()) {
    if (num.known() && num.value != (*bi)[0].value)
      return ctx.Error("rois has " + std::to_string(num.value) + " rows but batch_indices has " + std::to_string((*bi)[0].value));
    num = (*bi)[0];
  }
  ir::Dims out = {num, x ? (*x)[1] : ir::Dim{}, ir::Dim::Known(attrs.output_height), ir::Dim::Known(attrs.output_width)};
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::Ok();
}

}  // namespace

void RegisterSamplingOps(OpRegistry& r) {
  r.Register({"", "GridSample", 16, 1000, InferGridSample});
  r.Register({"", "RoiAlign", 10, 1000, InferRoiAlign});
}

}  // namespace kiln::ops
