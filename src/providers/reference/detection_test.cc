// Tests of NonMaxSuppression. Every expected selection is worked by hand
// (the comments give the boxes as y/x intervals and the IoUs that decide).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ir::Attribute;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToInts;

struct NmsArgs {
  std::optional<int64_t> max;         // max_output_boxes_per_class (absent when unset)
  std::optional<float> iou;           // iou_threshold
  std::optional<float> score;         // score_threshold
  std::optional<int64_t> center;      // center_point_box attribute
  int64_t opset = 11;
};

Result<std::vector<Tensor>> RunNms(const Tensor& boxes, const Tensor& scores, const NmsArgs& a) {
  std::vector<Tensor> in = {boxes, scores, a.max ? I64({}, {*a.max}) : Tensor(), a.iou ? F32({}, {*a.iou}) : Tensor(),
                            a.score ? F32({}, {*a.score}) : Tensor()};
  std::vector<Attribute> attrs;
  if (a.center) attrs.push_back(Attribute::Int("center_point_box", *a.center));
  return RunNode("NonMaxSuppression", in, attrs, 1, a.opset);
}

// The selected rows, flattened (batch, class, box, ...); checks the shape.
std::vector<int64_t> Nms(const Tensor& boxes, const Tensor& scores, const NmsArgs& a) {
  auto out = RunNms(boxes, scores, a);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  const Tensor& y = (*out)[0];
  EXPECT_EQ(y.dtype(), DType::kInt64);
  EXPECT_EQ(y.rank(), 2);
  if (y.rank() == 2) {
    EXPECT_EQ(y.dim(1), 3);
    EXPECT_EQ(y.dim(0) * 3, y.numel());
  }
  return ToInts(y);
}

// Box indices selected in a single-batch, single-class run.
std::vector<int64_t> Picked(const Tensor& boxes, const Tensor& scores, const NmsArgs& a) {
  std::vector<int64_t> rows = Nms(boxes, scores, a), idx;
  for (size_t i = 0; i + 2 < rows.size(); i += 3) {
    EXPECT_EQ(rows[i], 0);
    EXPECT_EQ(rows[i + 1], 0);
    idx.push_back(rows[i + 2]);
  }
  return idx;
}

// One batch of n boxes, one class.
Tensor Boxes(const std::vector<float>& v) { return F32({1, static_cast<int64_t>(v.size() / 4), 4}, v); }
Tensor Scores(const std::vector<float>& v) { return F32({1, 1, static_cast<int64_t>(v.size())}, v); }

// Four disjoint unit boxes y[0,1] x[3k, 3k+1].
const std::vector<float> kDisjoint4 = {0, 0, 1, 1, 0, 3, 1, 4, 0, 6, 1, 7, 0, 9, 1, 10};

TEST(NonMaxSuppression, IouEqualToThresholdIsKept) {
  // Box 0 y[0,1] x[0,2] (area 2), box 1 y[0,1] x[0,1] (area 1): inter 1, union 2, IoU 0.5.
  const Tensor b = Boxes({0, 0, 1, 2, 0, 0, 1, 1});
  const Tensor s = Scores({0.9f, 0.8f});
  EXPECT_THAT(Picked(b, s, {.max = 10, .iou = 0.5f}), ElementsAre(0, 1));  // 0.5 is not > 0.5
  EXPECT_THAT(Picked(b, s, {.max = 10, .iou = 0.49f}), ElementsAre(0));
  // iou_threshold absent = 0: any overlap suppresses.
  EXPECT_THAT(Picked(b, s, {.max = 10}), ElementsAre(0));
  // Boxes that only touch (x[0,1] and x[1,2]) do not overlap, even at threshold 0.
  EXPECT_THAT(Picked(Boxes({0, 0, 1, 1, 0, 1, 1, 2}), s, {.max = 10, .iou = 0.0f}), ElementsAre(0, 1));
  // iou_threshold 1: only IoU > 1 would suppress, so identical boxes both stay.
  EXPECT_THAT(Picked(Boxes({0, 0, 1, 1, 0, 0, 1, 1}), s, {.max = 10, .iou = 1.0f}), ElementsAre(0, 1));
}

TEST(NonMaxSuppression, ScoreThresholdIsStrict) {
  const Tensor b = Boxes({0, 0, 1, 1, 0, 3, 1, 4, 0, 6, 1, 7});  // disjoint
  // Score 0.5 equals the threshold and is dropped, as is 0.4.
  EXPECT_THAT(Picked(b, Scores({0.5f, 0.4f, 0.6f}), {.max = 10, .iou = 0.5f, .score = 0.5f}), ElementsAre(2));
  // Without a threshold every box is a candidate, visited by descending score.
  EXPECT_THAT(Picked(b, Scores({0.5f, 0.4f, 0.6f}), {.max = 10, .iou = 0.5f}), ElementsAre(2, 0, 1));
  // Negative scores are fine without a threshold, and all fail threshold 0.
  EXPECT_THAT(Picked(b, Scores({-1, -2, -0.5f}), {.max = 10}), ElementsAre(2, 0, 1));
  auto none = RunNms(b, Scores({-1, -2, -0.5f}), {.max = 10, .score = 0.0f});
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ((*none)[0].shape(), (Shape{0, 3}));
  // A threshold below every score keeps them all.
  EXPECT_THAT(Picked(b, Scores({-1, -2, -0.5f}), {.max = 10, .score = -3.0f}), ElementsAre(2, 0, 1));
}

TEST(NonMaxSuppression, NaNScoresAreNeverSelected) {
  const Tensor b = Boxes({0, 0, 1, 1, 0, 3, 1, 4, 0, 6, 1, 7});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(Picked(b, Scores({0.2f, nan, 0.3f}), {.max = 10}), ElementsAre(2, 0));
}

TEST(NonMaxSuppression, TiesKeepLowerIndexFirst) {
  EXPECT_THAT(Picked(Boxes(kDisjoint4), Scores({0.7f, 0.9f, 0.7f, 0.9f}), {.max = 10}), ElementsAre(1, 3, 0, 2));
  // With a limit of one, the lower index of the tie wins.
  EXPECT_THAT(Picked(Boxes(kDisjoint4), Scores({0.9f, 0.9f, 0.9f, 0.9f}), {.max = 1}), ElementsAre(0));
  // Two identical boxes with equal scores: box 0 comes first and suppresses box 1 (IoU 1).
  EXPECT_THAT(Picked(Boxes({0, 0, 1, 1, 0, 0, 1, 1}), Scores({0.8f, 0.8f}), {.max = 10, .iou = 0.5f}), ElementsAre(0));
  // Same, but the suppressed one is the lower index when its score is lower.
  EXPECT_THAT(Picked(Boxes({0, 0, 1, 1, 0, 0, 1, 1}), Scores({0.7f, 0.8f}), {.max = 10, .iou = 0.5f}), ElementsAre(1));
}

TEST(NonMaxSuppression, FlippedCorners) {
  // Box 0 y[0,1] x[0,2], box 1 y[0,1] x[0,1] (IoU 0.5), box 2 y[5,6] x[5,6] (disjoint).
  const Tensor s = Scores({0.9f, 0.8f, 0.7f});
  const Tensor plain = Boxes({0, 0, 1, 2, 0, 0, 1, 1, 5, 5, 6, 6});
  // The same boxes with both corners swapped, or only one axis flipped.
  const Tensor flipped = Boxes({1, 2, 0, 0, 1, 1, 0, 0, 6, 6, 5, 5});
  const Tensor half = Boxes({0, 2, 1, 0, 1, 0, 0, 1, 5, 6, 6, 5});
  for (const Tensor* b : {&plain, &flipped, &half}) {
    EXPECT_THAT(Picked(*b, s, {.max = 10, .iou = 0.4f}), ElementsAre(0, 2));
    EXPECT_THAT(Picked(*b, s, {.max = 10, .iou = 0.5f}), ElementsAre(0, 1, 2));
  }
}

TEST(NonMaxSuppression, CenterPointBox) {
  // [x_center, y_center, width, height]: box 0 x[-1,1] y[-1,1] (area 4);
  // box 1 x[0.5,2.5] y[-1,1]: inter 1, union 7, IoU 1/7 (kept at 0.2);
  // box 2 x[-0.5,1.5] y[-1,1]: inter with box 0 is 3, union 5, IoU 0.6 (suppressed).
  const Tensor b = Boxes({0, 0, 2, 2, 1.5f, 0, 2, 2, 0.5f, 0, 2, 2});
  const Tensor s = Scores({0.9f, 0.8f, 0.7f});
  EXPECT_THAT(Picked(b, s, {.max = 10, .iou = 0.2f, .center = 1}), ElementsAre(0, 1));
  // Read as corners the same numbers give box 0 y[0,2] x[0,2], box 1 y[1.5,2]
  // x[0,2] (IoU 1/4) and box 2 y[0.5,2] x[0,2] (IoU 3/4): both suppressed.
  EXPECT_THAT(Picked(b, s, {.max = 10, .iou = 0.2f, .center = 0}), ElementsAre(0));
  EXPECT_THAT(Picked(b, s, {.max = 10, .iou = 0.2f}), ElementsAre(0));  // default 0 = corners
  // A negative width gives an empty box: it overlaps nothing, so box 1 stays
  // although it has box 0's center.
  EXPECT_THAT(Picked(Boxes({0, 0, 2, 2, 0, 0, -2, 2}), Scores({0.9f, 0.8f}), {.max = 10, .center = 1}), ElementsAre(0, 1));
}

TEST(NonMaxSuppression, BatchesAndClasses) {
  // Batch 0: boxes 0 and 1 both y[0,1] x[0,1], box 2 y[0,1] x[5,6].
  // Batch 1: box 0 x[0,2], box 1 x[0,1], box 2 x[1,2] (all y[0,1]); box 0 has
  // IoU 0.5 with each of the others, which do not overlap each other.
  const Tensor b = F32({2, 3, 4}, {0, 0, 1, 1, 0, 0, 1, 1, 0, 5, 1, 6,  //
                                   0, 0, 1, 2, 0, 0, 1, 1, 0, 1, 1, 2});
  const Tensor s = F32({2, 2, 3}, {0.1f, 0.9f, 0.5f,    // b0 c0: order 1 2 0; 0 is box 1's twin
                                   0.8f, 0.3f, 0.2f,    // b0 c1: order 0 1 2; 1 is box 0's twin
                                   0.2f, 0.6f, 0.7f,    // b1 c0: order 2 1 0; 0 has IoU 0.5 with 2
                                   0.9f, 0.1f, 0.1f});  // b1 c1: order 0 1 2; 0 suppresses both
  EXPECT_THAT(Nms(b, s, {.max = 10, .iou = 0.4f}),
              ElementsAreArray<int64_t>({0, 0, 1, 0, 0, 2,  //
                                         0, 1, 0, 0, 1, 2,  //
                                         1, 0, 2, 1, 0, 1,  //
                                         1, 1, 0}));
  // One box per (batch, class): the top score of each.
  EXPECT_THAT(Nms(b, s, {.max = 1, .iou = 0.4f}), ElementsAreArray<int64_t>({0, 0, 1, 0, 1, 0, 1, 0, 2, 1, 1, 0}));
  // At iou 0.5 batch 1 suppresses nothing (IoU 0.5 is kept); batch 0's twins still go.
  EXPECT_THAT(Nms(b, s, {.max = 10, .iou = 0.5f}),
              ElementsAreArray<int64_t>({0, 0, 1, 0, 0, 2,  //
                                         0, 1, 0, 0, 1, 2,  //
                                         1, 0, 2, 1, 0, 1, 1, 0, 0,  //
                                         1, 1, 0, 1, 1, 1, 1, 1, 2}));
}

TEST(NonMaxSuppression, MaxOutputBoxesPerClass) {
  const Tensor b = Boxes(kDisjoint4);
  const Tensor s = Scores({0.1f, 0.4f, 0.3f, 0.2f});
  EXPECT_THAT(Picked(b, s, {.max = 2}), ElementsAre(1, 2));
  EXPECT_THAT(Picked(b, s, {.max = std::numeric_limits<int64_t>::max()}), ElementsAre(1, 2, 3, 0));
  // 0 or absent: no output at all.
  for (std::optional<int64_t> m : {std::optional<int64_t>(0), std::optional<int64_t>()}) {
    auto out = RunNms(b, s, {.max = m, .iou = 0.5f});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].shape(), (Shape{0, 3}));
    EXPECT_EQ((*out)[0].dtype(), DType::kInt64);
  }
  // 1-element 1-D inputs are accepted like scalars; an empty one means absent.
  auto one = RunNode("NonMaxSuppression", {b, s, I64({1}, {3}), F32({1}, {0.5f}), F32({1}, {0.15f})}, {}, 1, 11);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_THAT(ToInts((*one)[0]), ElementsAre(0, 0, 1, 0, 0, 2, 0, 0, 3));
  auto empty = RunNode("NonMaxSuppression", {b, s, I64({0}, {})}, {}, 1, 11);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ((*empty)[0].shape(), (Shape{0, 3}));
}

TEST(NonMaxSuppression, EmptyInputs) {
  auto no_boxes = RunNms(F32({1, 0, 4}, {}), F32({1, 2, 0}, {}), {.max = 5});
  ASSERT_TRUE(no_boxes.ok()) << no_boxes.status().ToString();
  EXPECT_EQ((*no_boxes)[0].shape(), (Shape{0, 3}));
  auto no_batches = RunNms(F32({0, 3, 4}, {}), F32({0, 1, 3}, {}), {.max = 5});
  ASSERT_TRUE(no_batches.ok()) << no_batches.status().ToString();
  EXPECT_EQ((*no_batches)[0].shape(), (Shape{0, 3}));
}

TEST(NonMaxSuppression, Opset10) {
  const Tensor b = Boxes({0, 0, 1, 2, 0, 0, 1, 1, 5, 5, 6, 6});
  EXPECT_THAT(Picked(b, Scores({0.9f, 0.8f, 0.7f}), {.max = 10, .iou = 0.4f, .opset = 10}), ElementsAre(0, 2));
  EXPECT_THAT(Picked(b, Scores({0.7f, 0.8f, 0.9f}), {.max = 2, .iou = 0.4f, .opset = 10}), ElementsAre(2, 1));
}

// Runs a node expected to fail; returns its message.
std::string Failure(const std::vector<Tensor>& in, const std::vector<Attribute>& attrs = {}) {
  auto out = RunNode("NonMaxSuppression", in, attrs, 1, 11);
  EXPECT_FALSE(out.ok());
  if (out.ok()) return "";
  EXPECT_THAT(out.status().message(), HasSubstr("'n0' (NonMaxSuppression)"));
  return out.status().message();
}

TEST(NonMaxSuppression, ShapeErrors) {
  const Tensor max = I64({}, {3});
  EXPECT_THAT(Failure({F32({1, 2, 3}, std::vector<float>(6)), F32({1, 1, 2}, {1, 2}), max}), HasSubstr("4 coordinates"));
  EXPECT_THAT(Failure({F32({2, 4}, std::vector<float>(8)), F32({1, 1, 2}, {1, 2}), max}), HasSubstr("boxes must have rank 3"));
  EXPECT_THAT(Failure({F32({1, 2, 4}, std::vector<float>(8)), F32({1, 2}, {1, 2}), max}), HasSubstr("scores must have rank 3"));
  EXPECT_THAT(Failure({F32({2, 2, 4}, std::vector<float>(16)), F32({1, 1, 2}, {1, 2}), max}), HasSubstr("num_batches"));
  EXPECT_THAT(Failure({F32({1, 3, 4}, std::vector<float>(12)), F32({1, 1, 2}, {1, 2}), max}), HasSubstr("num_boxes"));
  const Tensor b = Boxes({0, 0, 1, 1, 0, 3, 1, 4});
  const Tensor s = Scores({0.5f, 0.6f});
  EXPECT_THAT(Failure({b, s, I64({2}, {1, 2})}), HasSubstr("max_output_boxes_per_class must be a scalar"));
  EXPECT_THAT(Failure({b, s, max, F32({1, 1}, {0.5f})}), HasSubstr("iou_threshold must be a scalar"));
  EXPECT_THAT(Failure({b, s, max, Tensor(), F32({2}, {0.1f, 0.2f})}), HasSubstr("score_threshold must be a scalar"));
  EXPECT_THAT(Failure({b}), HasSubstr("input"));
}

TEST(NonMaxSuppression, TypeErrors) {
  const Tensor b = Boxes({0, 0, 1, 1, 0, 3, 1, 4});
  const Tensor s = Scores({0.5f, 0.6f});
  const Tensor max = I64({}, {3});
  Failure({I64({1, 2, 4}, std::vector<int64_t>(8)), s, max});
  Failure({b, I64({1, 1, 2}, {1, 2}), max});
  Failure({b, s, F32({}, {3})});
  Failure({b, s, max, I64({}, {0})});
  Failure({b, s, max, Tensor(), I64({}, {0})});
}

TEST(NonMaxSuppression, ValueErrors) {
  const Tensor b = Boxes({0, 0, 1, 1, 0, 3, 1, 4});
  const Tensor s = Scores({0.5f, 0.6f});
  const Tensor max = I64({}, {3});
  EXPECT_THAT(Failure({b, s, I64({}, {-1})}), HasSubstr("max_output_boxes_per_class must be >= 0, got -1"));
  EXPECT_THAT(Failure({b, s, max, F32({}, {1.5f})}), HasSubstr("iou_threshold must be in [0, 1]"));
  EXPECT_THAT(Failure({b, s, max, F32({}, {-0.1f})}), HasSubstr("iou_threshold must be in [0, 1]"));
  EXPECT_THAT(Failure({b, s, max, F32({}, {std::numeric_limits<float>::quiet_NaN()})}), HasSubstr("iou_threshold"));
  EXPECT_THAT(Failure({b, s, max}, {Attribute::Int("center_point_box", 2)}), HasSubstr("center_point_box must be 0 or 1, got 2"));
  EXPECT_THAT(Failure({b, s, max}, {Attribute::Int("center_point_box", -1)}), HasSubstr("center_point_box"));
}

}  // namespace
}  // namespace kiln
