#include "providers/cpu/dnnl_common.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include <unordered_map>

#include "support/big_alloc.h"

namespace kiln::cpu {

const dnnl::engine& Engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::memory::dims Dims(const Shape& s) { return dnnl::memory::dims(s.begin(), s.end()); }

Status CheckInt32Extent(const ir::Node& node, const char* what, const Shape& s) {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  int64_t n = 1;
  for (int64_t d : s) {
    if (d > kLimit || (d > 0 && n > kLimit / d))
      return node.Invalid(std::string(what) + " " + ShapeToString(s) + " has 2^31 elements or more, beyond what the cpu provider's oneDNN kernels index");
    n *= d;
  }
  return Status::Ok();
}

namespace {
bool AppendKind(const ops::ActivationAttrs& a, dnnl::post_ops& ops) {
  using A = ops::Activation;
  using alg = dnnl::algorithm;
  switch (a.kind) {
    case A::kNone: return true;
    case A::kRelu: ops.append_eltwise(1.f, alg::eltwise_relu, 0.f, 0.f); return true;
    case A::kLeakyRelu: ops.append_eltwise(1.f, alg::eltwise_relu, a.alpha, 0.f); return true;
    case A::kClip: ops.append_eltwise(1.f, alg::eltwise_clip_v2, a.alpha, a.beta); return true;
    case A::kSigmoid: ops.append_eltwise(1.f, alg::eltwise_logistic, 0.f, 0.f); return true;
    case A::kSiLU: ops.append_eltwise(1.f, alg::eltwise_swish, 1.f, 0.f); return true;
    case A::kTanh: ops.append_eltwise(1.f, alg::eltwise_tanh, 0.f, 0.f); return true;
    case A::kHardSigmoid:
      // max(0, min(1, alpha x + beta)): a linear step, then a clip to [0, 1].
      ops.append_eltwise(1.f, alg::eltwise_linear, a.alpha, a.beta);
      ops.append_eltwise(1.f, alg::eltwise_clip_v2, 0.f, 1.f);
      return true;
    case A::kHardSwish: ops.append_eltwise(1.f, alg::eltwise_hardswish, 1.f / 6.f, 0.5f); return true;
  }
  return false;
}
}  // namespace

bool AppendActivation(const ops::ActivationAttrs& a, dnnl::post_ops& ops) {
  using alg = dnnl::algorithm;
  // oneDNN 2.6 computes a linear eltwise that follows a clip_v2 wrongly
  // (found by kiln fuzz, seed 180: HardSigmoid * s). Clip-shaped
  // activations fold the affine in front of the clip instead:
  //   s * clip(u, lo, hi) + t = clip(s*u + t, s*lo + t, s*hi + t)   (bounds swap when s < 0)
  if (a.has_post_affine() && (a.kind == ops::Activation::kHardSigmoid || a.kind == ops::Activation::kClip)) {
    const float s = a.post_scale, t = a.post_shift;
    const bool hs = a.kind == ops::Activation::kHardSigmoid;
    const float lo = hs ? 0.f : a.alpha, hi = hs ? 1.f : a.beta;  // u = alpha*x + beta (HardSigmoid) or x (Clip)
    const float ua = hs ? a.alpha : 1.f, ub = hs ? a.beta : 0.f;
    ops.append_eltwise(1.f, alg::eltwise_linear, s * ua, s * ub + t);
    const float b0 = s * lo + t, b1 = s * hi + t;
    ops.append_eltwise(1.f, alg::eltwise_clip_v2, std::min(b0, b1), std::max(b0, b1));
    return true;
  }
  if (!AppendKind(a, ops)) return false;
  // post_affine: scale * act + shift as oneDNN's linear eltwise.
  if (a.has_post_affine()) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, a.post_scale, a.post_shift);
  return true;
}

SerialScope::SerialScope(bool serial) : saved_(serial ? omp_get_max_threads() : 0) {
  if (serial) omp_set_num_threads(1);
}

SerialScope::~SerialScope() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}

PackedWeights PackWeights(const dnnl::memory::desc& user, const dnnl::memory::desc& packed, const void* data) {
  dnnl::memory src(user, Engine(), const_cast<void*>(data));
  std::shared_ptr<void> buffer(AllocateBig(std::max<size_t>(packed.get_size(), 64)), FreeBig);
  if (!buffer) throw std::bad_alloc();
  dnnl::memory dst(packed, Engine(), buffer.get());
  dnnl::stream st(Engine());
  dnnl::reorder(src, dst).execute(st, src, dst);
  st.wait();
  return {dst, std::move(buffer)};
}

void* ThreadBuffer(BigVector<uint8_t>& buf, size_t n) {
  if (buf.size() < n) buf.resize(n);  // 64-byte aligned: BigAllocator's buffers are
  return buf.data();
}

dnnl::memory BiasMemory(const Tensor& b) {
  const Tensor c = b.Contiguous();
  dnnl::memory m({{c.numel()}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::x}, Engine());
  std::memcpy(m.get_data_handle(), c.raw(), static_cast<size_t>(c.numel()) * sizeof(float));
  return m;
}

namespace {

void ExecuteC(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd, dnnl_exec_arg_t* args, int n) {
  thread_local BigVector<uint8_t> scratch;
  thread_local dnnl::stream stream(Engine());
  const dnnl_memory_desc_t* sd = dnnl_primitive_desc_query_md(pd.get(), dnnl_query_scratchpad_md, 0);
  const size_t need = sd ? dnnl_memory_desc_get_size(sd) : 0;
  dnnl::memory scratch_mem;
  if (need > 0) {
    if (scratch.size() < need) scratch.resize(need);
    scratch_mem = dnnl::memory(dnnl::memory::desc(*sd), Engine(), scratch.data());
    args[n++] = {DNNL_ARG_SCRATCHPAD, scratch_mem.get()};
  }
  dnnl::error::wrap_c_api(dnnl_primitive_execute(prim.get(), stream.get(), n, args), "could not execute a primitive");
  stream.wait();
}

}  // namespace

void Execute(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd, std::initializer_list<ExecArg> args) {
  constexpr size_t kMax = 15;  // oneDNN primitives take a handful; one slot stays for the scratchpad
  if (args.size() > kMax) throw dnnl::error(dnnl_invalid_arguments, "too many primitive arguments");
  dnnl_exec_arg_t c[kMax + 1];
  int n = 0;
  for (const ExecArg& a : args)
    if (a.mem) c[n++] = {a.arg, a.mem.get()};  // an empty memory (no bias) is left out
  ExecuteC(prim, pd, c, n);
}

void Execute(const dnnl::primitive& prim, const dnnl::primitive_desc_base& pd, const std::unordered_map<int, dnnl::memory>& args) {
  std::vector<dnnl_exec_arg_t> c;
  c.reserve(args.size() + 1);
  for (const auto& [k, m] : args) c.push_back({k, m.get()});
  c.push_back({});
  ExecuteC(prim, pd, c.data(), static_cast<int>(args.size()));
}

}  // namespace kiln::cpu
