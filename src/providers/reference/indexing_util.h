// Helpers shared by the indexing reference kernels: reading index tensors
// and checking every index before it is used, so a bad index is a Status
// naming the node and never an out-of-bounds access.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {

// Integer tensor (any signed/unsigned integer dtype) as int64 values.
inline Result<std::vector<int64_t>> ReadIndices(const runtime::KernelContext& ctx, const Tensor& t, const char* what) {
  if (!DTypeIsSignedInt(t.dtype()) && !DTypeIsUnsignedInt(t.dtype()))
    return ctx.Error(std::string(what) + " must be an integer tensor, got " + DTypeName(t.dtype()));
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  Status s = VisitNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T* p = t.data<T>();
      for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int64_t>(p[i]);
    }
  });
  KILN_RETURN_IF_ERROR(s);
  return out;
}

// Maps idx from [-n, n) to [0, n); anything else is an OutOfRange error
// naming the node, the input and the position of the bad index.
inline Status NormalizeIndex(const runtime::KernelContext& ctx, int64_t& idx, int64_t n, const char* what, int64_t pos,
                             int64_t axis) {
  if (idx < -n || idx >= n)
    return ctx.node().Error(StatusCode::kOutOfRange, std::string(what) + " value " + std::to_string(idx) + " at position " +
                                                         std::to_string(pos) + " is out of range [" + std::to_string(-n) +
                                                         ", " + std::to_string(n - 1) + "] for axis " + std::to_string(axis));
  if (idx < 0) idx += n;
  return Status::Ok();
}

// Applies a Scatter* reduction: old (op) update, in T's own arithmetic
// (halves through float; bool add = or, mul = and, as numpy does).
enum class ReduceOp { kNone, kAdd, kMul, kMax, kMin };
template <typename T>
T ApplyReduce(ReduceOp op, const T& old, const T& upd) {
  if constexpr (std::is_same_v<T, std::string>) {
    return upd;  // inference refuses reductions on strings
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(ApplyReduce(op, static_cast<float>(old), static_cast<float>(upd)));
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ReduceOp::kNone: return upd;
      case ReduceOp::kAdd: case ReduceOp::kMax: return old || upd;
      case ReduceOp::kMul: case ReduceOp::kMin: return old && upd;
    }
    return upd;
  } else if constexpr (std::is_integral_v<T>) {
    // Wrap around in uint64 (two's complement): signed overflow would be UB.
    const uint64_t a = static_cast<uint64_t>(old), b = static_cast<uint64_t>(upd);
    switch (op) {
      case ReduceOp::kNone: return upd;
      case ReduceOp::kAdd: return static_cast<T>(a + b);
      case ReduceOp::kMul: return static_cast<T>(a * b);
      case ReduceOp::kMax: return old < upd ? upd : old;
      case ReduceOp::kMin: return upd < old ? upd : old;
    }
    return upd;
  } else {
    switch (op) {
      case ReduceOp::kNone: return upd;
      case ReduceOp::kAdd: return old + upd;
      case ReduceOp::kMul: return old * upd;
      // NaN propagates, as numpy's maximum/minimum (the ONNX reference) do.
      case ReduceOp::kMax: return (old != old || upd != upd) ? old + upd : (old < upd ? upd : old);
      case ReduceOp::kMin: return (old != old || upd != upd) ? old + upd : (upd < old ? upd : old);
    }
    return upd;
  }
}

}  // namespace kiln::reference
