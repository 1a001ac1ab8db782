// Attributes of the normalization ops, shared by shape inference and the
// kernels: BatchNormalization, InstanceNormalization, LayerNormalization,
// LRN, MeanVarianceNormalization.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

struct BatchNormAttrs {
  double epsilon = 1e-5;
  double momentum = 0.9;
  // Batch statistics instead of the running ones: training_mode (opset 14+),
  // or before opset 14 asking for more outputs than Y (with is_test = 0 in
  // opsets 1 and 6, where is_test still exists).
  bool training = false;
  // Opsets < 9: spatial = 0 keeps one statistic per (channel, spatial cell):
  // scale, B, mean and var then have shape [C, D1..Dn].
  bool spatial = true;
};
Result<BatchNormAttrs> ParseBatchNorm(const ir::Node& node, int64_t opset);

struct LayerNormAttrs {
  int64_t axis = -1;        // first normalized axis (may be negative)
  double epsilon = 1e-5;
  int64_t stash_type = 1;   // dtype of Mean and InvStdDev (ONNX DataType), float32 by default
};
Result<LayerNormAttrs> ParseLayerNorm(const ir::Node& node, int64_t opset);

struct LrnAttrs {
  double alpha = 1e-4;
  double beta = 0.75;
  double bias = 1.0;
  int64_t size = 0;  // required, odd by convention but any positive size works
};
Result<LrnAttrs> ParseLrn(const ir::Node& node, int64_t opset);

struct MvnAttrs {
  std::vector<int64_t> axes = {0, 2, 3};
};
Result<MvnAttrs> ParseMvn(const ir::Node& node, int64_t opset);

// InstanceNormalization has only epsilon (default 1e-5).
Result<double> ParseInstanceNormEpsilon(const ir::Node& node, int64_t opset);

}  // namespace kiln::ops
