// Signal ops (opset 17+): DFT, STFT, the Hann/Hamming/Blackman windows and
// MelWeightMatrix. Attributes shared by inference and the reference kernels.
#pragma once

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

struct DftAttrs {
  int64_t axis = 1;      // opset 17-19 attribute; opset 20 reads input 2 (default -2)
  bool axis_from_input = false;
  bool inverse = false;
  bool onesided = false;
};
Result<DftAttrs> ParseDft(const ir::Node& node, int64_t opset);

struct StftAttrs {
  bool onesided = true;
};
Result<StftAttrs> ParseStft(const ir::Node& node, int64_t opset);

// Hann/Hamming/Blackman windows and MelWeightMatrix: output dtype.
struct WindowAttrs {
  bool periodic = true;  // windows only
  DType output_dtype = DType::kFloat32;
};
Result<WindowAttrs> ParseWindow(const ir::Node& node, int64_t opset);

}  // namespace kiln::ops
