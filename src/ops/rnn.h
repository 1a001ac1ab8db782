// Recurrent ops RNN, GRU, LSTM (opset 1+, `layout` from opset 14):
// attributes shared by shape inference and the reference kernel.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

enum class RnnKind { kRnn, kGru, kLstm };

// One activation function with its alpha/beta (defaults filled in).
struct RnnActivation {
  enum class Fn { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
                  kSoftsign, kSoftplus };
  Fn fn = Fn::kTanh;
  double alpha = 0, beta = 0;
  double Apply(double x) const;
};

struct RnnAttrs {
  RnnKind kind = RnnKind::kRnn;
  int64_t gates = 1;            // 1 (RNN), 3 (GRU: z r h), 4 (LSTM: i o f c)
  int64_t hidden_size = -1;     // -1: take it from R
  int64_t num_directions = 1;
  bool forward = true, reverse = false;  // bidirectional: both
  std::vector<RnnActivation> activations;  // functions_per_direction * num_directions
  size_t functions_per_direction = 1;
  std::optional<double> clip;
  int64_t layout = 0;           // 0: [seq, batch, ...]; 1: [batch, seq, ...] (opset 14)
  bool input_forget = false;    // LSTM
  bool linear_before_reset = false;  // GRU (opset 3+)
};
Result<RnnAttrs> ParseRnn(const ir::Node& node, int64_t opset, RnnKind kind);

}  // namespace kiln::ops
