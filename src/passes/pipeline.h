// Graph optimization levels, each a fixed pipeline of passes (one pass per
// file in src/passes; the order is set only in pipeline.cc).
//   disable:  nothing
//   basic:    constant folding, dead code, Identity / inference-Dropout removal,
//             shape-subgraph folding for static shapes
//   extended: basic + BatchNormalization folded into Conv, Conv/Gemm/MatMul +
//             bias + activation fusion, residual Add fusion, Transpose/Reshape
//             chain simplification
//   all:      extended + layout planning (provider-specific, src/plan)
// Every pass keeps the model's meaning: the reference provider run on the
// optimized model must agree with the same run on the original.
#pragma once

#include <cstdlib>
#include <cstring>
#include <set>

#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::passes {

enum class OptLevel { kDisable = 0, kBasic = 1, kExtended = 2, kAll = 3 };

Result<OptLevel> ParseOptLevel(const std::string& s);  // "disable" | "basic" | "extended" | "all"
const char* OptLevelName(OptLevel level);

// What the pipeline did, for `kiln inspect --plan` and tests.
struct PassReport {
  // One line per change: "fold_constants: 12 nodes folded", "fuse_conv_activation: Conv_3 + Relu_4".
  std::vector<std::string> notes;
};

// Rewrites `model` in place. Fails only on an internal error (a pass never
// rejects a model the executor would accept).
// Passes named in `disabled` are skipped (verify --sweep: which pass makes a
// mismatch appear).
Status Optimize(ir::Model& model, OptLevel level, PassReport* report = nullptr, const std::set<std::string>& disabled = {});

// The passes a level runs, in pipeline order (each named once).
std::vector<std::string> PassNames(OptLevel level);

// The environment switches that turn a pass off ("0", for A/B
// measurements). A pass reads its switch only through PassSwitchedOff, so
// every switch is in kPassSwitches, on whose values the plan cache keys.
enum class PassSwitch { kFuseSeparable, kFuseElementwise };
inline constexpr const char* kPassSwitches[] = {"KILN_FUSE_SEPARABLE", "KILN_FUSE_ELEMENTWISE"};  // by PassSwitch

inline bool PassSwitchedOff(PassSwitch s) {
  const char* v = std::getenv(kPassSwitches[static_cast<int>(s)]);
  return v && std::strcmp(v, "0") == 0;
}

}  // namespace kiln::passes
