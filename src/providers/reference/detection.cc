// Reference kernel of NonMaxSuppression (opsets 10 and 11), from the spec
// text, with the onnx reference implementation settling what it leaves open:
//
// - For each batch b and class c on its own: the candidates are the boxes
//   whose score is strictly greater than score_threshold (every box when the
//   input is absent); NaN scores are never candidates.
// - Candidates are visited by score, highest first; equal scores keep the
//   lower box index first.
// - A candidate is selected unless its IoU with a box already selected for
//   (b, c) is strictly greater than iou_threshold (IoU equal to it is kept),
//   until max_output_boxes_per_class boxes are selected.
// - Boxes: center_point_box 0 gives two diagonal corners [y1, x1, y2, x2] in
//   any order (each axis is sorted first, so flipped boxes work); 1 gives
//   [x_center, y_center, width, height]. A box with no area (a zero or
//   negative width or height) overlaps nothing: it never suppresses and is
//   never suppressed. IoU is computed in double.
// - Absent (or empty) optional inputs: max_output_boxes_per_class 0 (no
//   output at all), iou_threshold 0, no score threshold.
// - Output: int64 [num_selected, 3] rows (batch, class, box index), ordered by
//   batch, then class, then selection order.
// Negative max_output_boxes_per_class and iou_threshold outside [0, 1] (the
// spec's range) are errors here; ONNX Runtime and onnx's reference clamp a
// negative count to 0 instead.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "ops/detection.h"
#include "providers/reference/families.h"

namespace kiln::reference {

namespace {

// Optional scalar input i (rank 0 or a 1-element 1-D tensor) of dtype dt;
// nullopt when absent or empty.
template <typename T>
Result<std::optional<T>> OptionalScalar(runtime::KernelContext& ctx, size_t i, DType dt, const char* name) {
  if (!ctx.has_input(i)) return std::optional<T>();
  const Tensor& t = ctx.input(i);
  if (!t.defined()) return ctx.Error(std::string(name) + " must be a tensor");
  if (t.dtype() != dt)
    return ctx.Error(std::string(name) + " must be " + DTypeName(dt) + ", got " + DTypeName(t.dtype()));
  if (t.rank() > 1 || t.numel() > 1)
    return ctx.Error(std::string(name) + " must be a scalar (or a 1-element tensor), got shape " + ShapeToString(t.shape()));
  if (t.numel() == 0) return std::optional<T>();
  return std::optional<T>(t.data<T>()[0]);
}

// An axis-aligned box as [lo, hi] on each axis ("a" is the first coordinate
// of the corner format, y; the center format's x; IoU does not care which).
struct Box {
  double a_lo, a_hi, b_lo, b_hi;
  double Area() const { return (a_hi - a_lo) * (b_hi - b_lo); }
};

Box ToBox(const float* p, bool center) {
  Box r;
  if (center) {
    const double ca = p[0], cb = p[1], half_a = static_cast<double>(p[2]) / 2, half_b = static_cast<double>(p[3]) / 2;
    r = {ca - half_a, ca + half_a, cb - half_b, cb + half_b};
  } else {
    r = {std::min<double>(p[0], p[2]), std::max<double>(p[0], p[2]), std::min<double>(p[1], p[3]),
         std::max<double>(p[1], p[3])};
  }
  return r;
}

// Whether IoU(x, y) > threshold. Written so that NaN coordinates, empty
// boxes and empty intersections all answer false.
bool Suppresses(const Box& x, const Box& y, double threshold) {
  const double ia = std::min(x.a_hi, y.a_hi) - std::max(x.a_lo, y.a_lo);
  const double ib = std::min(x.b_hi, y.b_hi) - std::max(x.b_lo, y.b_lo);
  if (!(ia > 0) || !(ib > 0)) return false;
  const double inter = ia * ib;
  const double ax = x.Area(), ay = y.Area();
  if (!(ax > 0) || !(ay > 0)) return false;
  const double uni = ax + ay - inter;
  if (!(uni > 0)) return false;
  return inter / uni > threshold;
}

Status NonMaxSuppression(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(bool center, ops::ParseNonMaxSuppressionCenterPointBox(ctx.node()));
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  if (!boxes.defined() || !scores.defined()) return ctx.Error("inputs boxes and scores must be tensors");
  if (boxes.dtype() != DType::kFloat32) return ctx.Error(std::string("boxes must be float32, got ") + DTypeName(boxes.dtype()));
  if (scores.dtype() != DType::kFloat32) return ctx.Error(std::string("scores must be float32, got ") + DTypeName(scores.dtype()));
  if (boxes.rank() != 3 || boxes.dim(2) != 4)
    return ctx.Error("boxes must have shape [num_batches, num_boxes, 4], got " + ShapeToString(boxes.shape()));
  if (scores.rank() != 3)
    return ctx.Error("scores must have shape [num_batches, num_classes, num_boxes], got " + ShapeToString(scores.shape()));
  if (boxes.dim(0) != scores.dim(0) || boxes.dim(1) != scores.dim(2))
    return ctx.Error("boxes " + ShapeToString(boxes.shape()) + " and scores " + ShapeToString(scores.shape()) +
                     " must agree in num_batches (dim 0 of both) and num_boxes (boxes dim 1, scores dim 2)");
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> max_in,
                        OptionalScalar<int64_t>(ctx, 2, DType::kInt64, "max_output_boxes_per_class"));
  KILN_ASSIGN_OR_RETURN(std::optional<float> iou_in, OptionalScalar<float>(ctx, 3, DType::kFloat32, "iou_threshold"));
  KILN_ASSIGN_OR_RETURN(std::optional<float> score_in, OptionalScalar<float>(ctx, 4, DType::kFloat32, "score_threshold"));
  const int64_t max_per_class = max_in.value_or(0);
  if (max_per_class < 0)
    return ctx.Error("max_output_boxes_per_class must be >= 0, got " + std::to_string(max_per_class));
  const double iou_threshold = iou_in.value_or(0.0f);
  if (!(iou_threshold >= 0 && iou_threshold <= 1))
    return ctx.Error("iou_threshold must be in [0, 1], got " + std::to_string(iou_threshold));

  const int64_t batches = boxes.dim(0), num_boxes = boxes.dim(1), classes = scores.dim(1);
  const float* box_data = boxes.data<float>();
  const float* score_data = scores.data<float>();
  std::vector<int64_t> rows;  // (batch, class, box) triples
  std::vector<Box> geo(static_cast<size_t>(num_boxes));
  std::vector<int64_t> order, picked;
  for (int64_t b = 0; b < batches && max_per_class > 0; ++b) {
    for (int64_t i = 0; i < num_boxes; ++i) geo[static_cast<size_t>(i)] = ToBox(box_data + (b * num_boxes + i) * 4, center);
    for (int64_t c = 0; c < classes; ++c) {
      const float* s = score_data + (b * classes + c) * num_boxes;
      order.clear();
      for (int64_t i = 0; i < num_boxes; ++i)
        if (!std::isnan(s[i]) && (!score_in || s[i] > *score_in)) order.push_back(i);
      // Stable: equal scores keep ascending box index.
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      picked.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(picked.size()) >= max_per_class) break;
        bool keep = true;
        for (int64_t j : picked)
          if (Suppresses(geo[static_cast<size_t>(i)], geo[static_cast<size_t>(j)], iou_threshold)) {
            keep = false;
            break;
          }
        if (!keep) continue;
        picked.push_back(i);
        rows.insert(rows.end(), {b, c, i});
      }
    }
  }
  const int64_t n = static_cast<int64_t>(rows.size() / 3);
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kInt64, {n, 3}));
  std::copy(rows.begin(), rows.end(), y.data<int64_t>());
  return Status::Ok();
}

}  // namespace

void RegisterDetectionKernels(runtime::KernelRegistry& r) {
  r.Register("", "NonMaxSuppression", NonMaxSuppression);
}

}  // namespace kiln::reference
