// Control-flow ops: If, Loop, Scan (opset 8 and 9+), SequenceMap (opset 17).
// Attributes shared by shape inference and the reference kernels.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

struct IfAttrs {
  const ir::Graph* then_branch = nullptr;
  const ir::Graph* else_branch = nullptr;
};
Result<IfAttrs> ParseIf(const ir::Node& node, int64_t opset);

// Loop(M?, cond?, v_initial...) with body(iter, cond, v...) ->
// (cond, v..., scan...).
struct LoopAttrs {
  const ir::Graph* body = nullptr;
  size_t num_carried = 0;  // N
  size_t num_scan = 0;     // K
};
Result<LoopAttrs> ParseLoop(const ir::Node& node, int64_t opset);

// Scan. Opset 8: inputs (sequence_lens?, states..., scans...), every input
// has a batch dim 0 and the scan dim 1. Opset 9+: inputs (states..., scans...)
// without a batch dim, scan axes and directions per input and output.
struct ScanAttrs {
  const ir::Graph* body = nullptr;
  size_t num_states = 0;        // N
  size_t num_scan_inputs = 0;   // M
  size_t num_scan_outputs = 0;  // K
  size_t first_input = 0;       // 1 in opset 8 (sequence_lens), else 0
  std::vector<int64_t> input_axes;        // M, not normalized (opset 9+)
  std::vector<int64_t> input_directions;  // M: 0 forward, 1 reverse
  std::vector<int64_t> output_axes;       // K, not normalized (opset 9+)
  std::vector<int64_t> output_directions; // K
};
Result<ScanAttrs> ParseScan(const ir::Node& node, int64_t opset);

struct SequenceMapAttrs {
  const ir::Graph* body = nullptr;
};
Result<SequenceMapAttrs> ParseSequenceMap(const ir::Node& node, int64_t opset);

}  // namespace kiln::ops
