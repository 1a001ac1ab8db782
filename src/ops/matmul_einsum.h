// Internal header of the matmul op family: Einsum inference (matmul_einsum.cc).
#pragma once

#include "ops/op_registry.h"

namespace kiln::ops {

Status InferEinsum(InferContext& ctx);

}  // namespace kiln::ops
