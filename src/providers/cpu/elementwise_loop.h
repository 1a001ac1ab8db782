// The cpu provider's loop for elementwise ops, shared by the binary kernels
// (elementwise.cc, one step) and FusedElementwise (fused_elementwise.cc, a
// chain of steps): one walk over the output in its memory order
// (strided_loop.h), in chunks of at most 512 values (a long inner run cut,
// so a flat walk still spreads over the threads; runs of up to 128 values
// grouped, so a per-channel scale on channels-last data is not a call per
// pixel). A chunk goes through every step in turn, the intermediates in
// stack buffers that stay in L1; each step is an elementwise_runs.h loop.
// A lone binary step needs no buffer: it writes each run (cut into parts of
// 16384 values for the threads) straight to the output.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "providers/cpu/elementwise_runs.h"
#include "runtime/kernel.h"

namespace kiln::cpu {

inline constexpr size_t kElementwiseMaxInputs = 6;
inline constexpr size_t kElementwiseMaxSteps = 8;

struct ElementwiseStepRun {
  BinaryRun binary = nullptr;  // exactly one of binary / unary
  UnaryRun unary = nullptr;
  UnaryParams params;
  std::array<int64_t, 2> operands{};  // k >= 0: input k; k < 0: step -k-1
};

struct ElementwisePlan {
  std::vector<ElementwiseStepRun> steps;  // at most kElementwiseMaxSteps; the last one's result is the output
  size_t inputs = 0;                      // at most kElementwiseMaxInputs, float32
  // The input whose layout the output takes when it has the output's shape
  // (else row-major); -1: always row-major.
  int full = -1;
};

// Runs the plan on the context's inputs (the output shape is their
// broadcast), writing output 0. Every step is computed at the output's
// shape: elementwise ops commute with broadcasting, so a step whose own
// result would be smaller gives the same values broadcast.
Status RunElementwisePlan(runtime::KernelContext& ctx, const ElementwisePlan& plan);

// A float32 tensor of known rank (dims may be unknown): what the loop's
// kernels take at session creation.
inline bool IsFloatWithRank(const ir::TypeInfo* t) {
  return t && t->kind == ir::TypeInfo::Kind::kTensor && t->dtype == DType::kFloat32 && t->shape;
}

// The first of `dims` that covers all the others (CoversStatically), -1 if none.
int CoveringInput(const std::vector<const ir::Dims*>& dims);

// The kernel of a plan: every input any dense layout, the output in the
// layout of input `full` (row-major when -1).
runtime::Kernel ElementwiseKernel(ElementwisePlan plan);

}  // namespace kiln::cpu
