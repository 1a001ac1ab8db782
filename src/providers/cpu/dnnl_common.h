// What the cpu provider's oneDNN kernels share: one CPU engine, user-managed
// scratchpads (so one primitive may run from several threads at once, each
// with its own buffer), activation post-ops, and wrapping kiln tensors as
// oneDNN memory without copies.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "ops/fused.h"
#include "support/big_alloc.h"

namespace kiln::cpu {

const dnnl::engine& Engine();

// dnnl dims from a kiln shape.
dnnl::memory::dims Dims(const Shape& s);

// oneDNN's jit kernels compute some offsets in 32-bit ints, so a tensor with
// INT32_MAX elements or more crashes them instead of failing cleanly (found by
// loader_fuzz: a Conv on a 1x1x1x2^31 input segfaulted at session creation).
// Each oneDNN kernel checks its operands here before building a primitive.
Status CheckInt32Extent(const ir::Node& node, const char* what, const Shape& s);

// Appends `a` to `ops` as eltwise post-ops; false when oneDNN cannot express it.
bool AppendActivation(const ops::ActivationAttrs& a, dnnl::post_ops& ops);

// Constant weights packed once into the layout a primitive chose
// (`packed`, e.g. pd.weights_desc()) from `data` laid out as `user`, in a
// buffer of kiln's (AllocateBig: huge pages for big ones; oneDNN's own
// allocation came from the heap, already touched) that `buffer` owns.
struct PackedWeights {
  dnnl::memory memory;
  std::shared_ptr<void> buffer;
  explicit operator bool() const { return static_cast<bool>(memory); }
};
PackedWeights PackWeights(const dnnl::memory::desc& user, const dnnl::memory::desc& packed, const void* data);
// A float32 bias of b's elements in a buffer of its own (tag x).
dnnl::memory BiasMemory(const Tensor& b);

// A buffer of at least n bytes, 64-byte aligned, in `buf` (a thread_local
// of the caller's, so concurrent runs never share it), kept for the next call.
void* ThreadBuffer(BigVector<uint8_t>& buf, size_t n);

// Executes `prim` on the calling thread, with a scratchpad of this thread's
// own (grown as needed, kept for the next call). The arguments go to
// oneDNN's C API as they are: the C++ API's unordered_map and its copy into
// a vector were two allocations per node per run.
struct ExecArg {
  int arg;
  const dnnl::memory& mem;
};
void Execute(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd, std::initializer_list<ExecArg> args);
void Execute(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd,
             const std::unordered_map<int, dnnl::memory>& args);

// oneDNN fixes a primitive's thread count when the primitive is created (from
// omp_get_max_threads). A primitive with less work than kSerialFlops is
// created inside a SerialScope, so it runs on the calling thread: waking the
// pool and its barriers cost more than they save on it (a 2-thread run of a
// small model was slower than a 1-thread one).
inline constexpr double kSerialFlops = 4e6;
class SerialScope {
 public:
  explicit SerialScope(bool serial);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int saved_ = 0;
};

// Runs a oneDNN call, turning a dnnl::error into a Status that names the
// node (described only on error: this runs for every node of every run).
template <typename F>
Status Guard(const ir::Node& node, F&& f) {
  try {
    f();
    return Status::Ok();
  } catch (const dnnl::error& e) {
    return Internal(node.Describe() + ": oneDNN: " + e.what());
  }
}

}  // namespace kiln::cpu
