// The seed models: the small image network of the bug kiln exists to rule
// out (DESIGN.md). `model_nhwc` takes a channels-last image and transposes it
// inside the graph; `model_nchw` is the same network fed channels-first. Both
// must give the same output on the same image.
//
//   input  [1,40,40,3] (nhwc) or [1,3,40,40] (nchw)
//   Transpose perm [0,3,1,2]                   (nhwc only)
//   Conv 3x3 stride 2 pad 1, 3->16, bias        -> [1,16,20,20]
//   Relu
//   Conv 3x3 stride 2 pad 1, 16->32, bias       -> [1,32,10,10]
//   Resize nearest, scales [1,1,2,2], opset 17,
//     coordinate_transformation_mode=asymmetric, nearest_mode=floor
//                                               -> output [1,32,20,20]
//
// For an integer scale of 2, asymmetric/floor and the default
// half_pixel/round_prefer_floor pick the same source pixel (floor(x/2)); the
// model states asymmetric/floor explicitly so no default is relied on.
// Weights are seeded (same seed, same weights for both layouts); the float16
// variant rounds the same float32 weights to float16 and has float16 I/O.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::examples {

enum class SeedLayout { kNhwc, kNchw };

struct SeedOptions {
  SeedLayout layout = SeedLayout::kNhwc;
  DType dtype = DType::kFloat32;  // kFloat32 or kFloat16
  uint64_t weight_seed = 20240601;
};

inline constexpr const char* kSeedInputName = "input";
inline constexpr const char* kSeedOutputName = "output";

Result<ir::Model> BuildSeedModel(const SeedOptions& options = {});
Shape SeedInputShape(SeedLayout layout);
inline Shape SeedOutputShape() { return {1, 32, 20, 20}; }
// "nhwc" / "nchw" <-> SeedLayout.
Result<SeedLayout> ParseSeedLayout(const std::string& s);
const char* SeedLayoutName(SeedLayout layout);

}  // namespace kiln::examples
