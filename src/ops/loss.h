// Loss family: SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (opset
// 12, 13). Attributes shared by shape inference (ops/loss.cc) and the
// reference kernels (providers/reference/loss.cc).
#pragma once

#include <cstdint>
#include <optional>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

enum class LossReduction { kNone, kSum, kMean };

struct LossAttrs {
  LossReduction reduction = LossReduction::kMean;
  // Targets equal to ignore_index contribute nothing (loss 0, weight 0).
  std::optional<int64_t> ignore_index;
};
Result<LossAttrs> ParseLoss(const ir::Node& node, int64_t opset);

}  // namespace kiln::ops
