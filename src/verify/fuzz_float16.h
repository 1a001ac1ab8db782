// float16 variants of the fuzzer's graphs: the same graph with every float32
// value made float16 (inputs, outputs, weights, constants), except Resize's
// roi and scales, which the spec keeps float32. Kernels then meet float16
// data in every layout the float32 graphs exercise.
#pragma once

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::verify {

Status ConvertToFloat16(ir::Model& model);

}  // namespace kiln::verify
