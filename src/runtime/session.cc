#include <omp.h>

#include <chrono>
#include <optional>
#include <set>

#include "kiln/session.h"
#include "onnx/onnx_io.h"
#include "runtime/plan_cache.h"
#include "runtime/provider.h"
#include "passes/pipeline.h"
#include "runtime/session_internal.h"

namespace kiln {

std::string IoInfo::ShapeString() const {
  if (!has_shape) return "[*]";
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    if (shape[i] >= 0) s += std::to_string(shape[i]);
    else s += (i < dim_names.size() && !dim_names[i].empty()) ? dim_names[i] : "?";
  }
  return s + "]";
}

namespace {

using Clock = std::chrono::steady_clock;
double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

IoInfo MakeIoInfo(const std::string& name, const ir::TypeInfo& t) {
  IoInfo io;
  io.name = name;
  const ir::TypeInfo* tensor = &t;
  switch (t.kind) {
    case ir::TypeInfo::Kind::kTensor: io.kind = "tensor"; break;
    case ir::TypeInfo::Kind::kSequence: io.kind = "sequence"; tensor = t.elem.get(); break;
    case ir::TypeInfo::Kind::kOptional: io.kind = "optional"; tensor = t.elem.get(); break;
    case ir::TypeInfo::Kind::kUnknown: io.kind = "unknown"; tensor = nullptr; break;
  }
  if (tensor && tensor->kind == ir::TypeInfo::Kind::kSequence) tensor = tensor->elem.get();
  if (tensor && tensor->kind == ir::TypeInfo::Kind::kTensor) {
    io.dtype = tensor->dtype;
    if (tensor->shape) {
      io.has_shape = true;
      for (const ir::Dim& d : *tensor->shape) {
        io.shape.push_back(d.known() ? d.value : -1);
        io.dim_names.push_back(d.param);
      }
    }
  }
  return io;
}

Status ValidateFeed(const IoInfo& io, const Datum& d) {
  const std::string what = "input '" + io.name + "'";
  if (io.kind == "tensor") {
    if (!d.is_tensor()) return InvalidArgument(what + " must be a tensor, got " + d.Describe());
    const Tensor& t = d.tensor();
    if (!t.defined()) return InvalidArgument(what + " is an undefined tensor");
    if (io.dtype != DType::kUndefined && t.dtype() != io.dtype)
      return InvalidArgument(what + " has dtype " + DTypeName(t.dtype()) + ", the model expects " + DTypeName(io.dtype));
    if (io.has_shape) {
      if (static_cast<size_t>(t.rank()) != io.shape.size())
        return InvalidArgument(what + " has shape " + ShapeToString(t.shape()) + " (rank " + std::to_string(t.rank()) +
                               "), the model expects " + io.ShapeString() + " (rank " + std::to_string(io.shape.size()) + ")");
      for (size_t k = 0; k < io.shape.size(); ++k)
        if (io.shape[k] >= 0 && t.shape()[k] != io.shape[k])
          return InvalidArgument(what + " has shape " + ShapeToString(t.shape()) + ", the model expects " + io.ShapeString() +
                                 " (dim " + std::to_string(k) + " differs)");
    }
  } else if (io.kind == "sequence") {
    if (!d.is_sequence()) return InvalidArgument(what + " must be a sequence, got " + d.Describe());
  }
  return Status::Ok();
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

const std::vector<IoInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<IoInfo>& Session::outputs() const { return impl_->outputs; }
const SessionOptions& Session::options() const { return impl_->options; }

std::vector<std::string> AvailableProviders() { return runtime::ProviderNames(); }

namespace {

// Where a session's model came from, for the plan cache.
struct CacheUse {
  std::optional<runtime::PlanCacheConfig> cache;  // nullopt: not cached
  std::string key, model_dir;
  bool hit = false;  // the model is the cached, already optimized graph
};

Result<runtime::Provider> CheckOptions(const SessionOptions& options) {
  KILN_RETURN_IF_ERROR(passes::ParseOptLevel(options.opt_level).status());
  if (options.threads < 0) return InvalidArgument("threads must be >= 0, got " + std::to_string(options.threads));
  return runtime::FindProvider(options.provider);
}

// Every Create ends here: passes (unless the model came optimized from the
// cache), the executor, the I/O description, then the cache entry.
Result<std::unique_ptr<Session>> Finish(ir::Model model, const SessionOptions& options, const runtime::Provider& provider,
                                        std::unique_ptr<Session::Impl> impl, const CacheUse& use) {
  KILN_ASSIGN_OR_RETURN(passes::OptLevel level, passes::ParseOptLevel(options.opt_level));
  impl->options = options;
  // Graph inputs and outputs are described as loaded, whatever the passes do.
  auto t0 = Clock::now();
  if (provider.optimizes && !use.hit) KILN_RETURN_IF_ERROR(passes::Optimize(model, level, &impl->pass_report));
  impl->create_times.optimize_ms = MsSince(t0);
  // oneDNN fixes a primitive's thread count when the primitive is created
  // (at session creation for static shapes) and then ignores later
  // omp_set_num_threads calls: set the session's count before creating them.
  if (options.threads > 0) omp_set_num_threads(options.threads);
  impl->model = std::make_shared<const ir::Model>(std::move(model));
  t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(impl->executor, runtime::Executor::Create(impl->model, provider, options.memory_limit));
  impl->create_times.plan_ms = MsSince(t0);
  const ir::Graph& g = impl->model->graph;
  for (const ir::Value& v : g.inputs) {
    IoInfo io = MakeIoInfo(v.name, v.type);
    io.optional = g.IsInitializer(v.name);
    impl->inputs.push_back(std::move(io));
  }
  const auto& types = impl->executor->static_types();
  for (const ir::Value& v : g.outputs) {
    // Declared output types win; inference fills what the file left out.
    ir::TypeInfo t = v.type;
    auto it = types.find(v.name);
    if (it != types.end() && (t.kind == ir::TypeInfo::Kind::kUnknown || (t.kind == ir::TypeInfo::Kind::kTensor && !t.shape)))
      t = it->second;
    impl->outputs.push_back(MakeIoInfo(v.name, t));
  }
  // Stored only once the executor accepted the plan.
  impl->create_times.cache = use.hit ? "hit" : use.cache ? "miss" : "off";
  if (use.cache && !use.hit) {
    t0 = Clock::now();
    runtime::StorePlan(*use.cache, use.key, *impl->model, impl->pass_report, use.model_dir);
    impl->create_times.cache_store_ms = MsSince(t0);
  }
  return std::make_unique<Session>(std::move(impl));
}

// Create from a model's bytes: through the plan cache when the provider
// optimizes and the cache is usable.
Result<std::unique_ptr<Session>> CreateFromModelBytes(const void* data, size_t size, const std::string& model_dir,
                                                      const SessionOptions& options, double read_ms) {
  KILN_ASSIGN_OR_RETURN(runtime::Provider provider, CheckOptions(options));
  auto impl = std::make_unique<Session::Impl>();
  CacheUse use;
  use.model_dir = model_dir;
  auto t0 = Clock::now();
  if (provider.optimizes) use.cache = runtime::ResolvePlanCache(options);
  if (use.cache) {
    use.key = runtime::PlanCacheKey(data, size, options);
    if (auto plan = runtime::LoadPlan(*use.cache, use.key, model_dir)) {
      use.hit = true;
      impl->pass_report = std::move(plan->report);
      impl->create_times.load_ms = read_ms + MsSince(t0);
      return Finish(std::move(plan->model), options, provider, std::move(impl), use);
    }
  }
  KILN_ASSIGN_OR_RETURN(ir::Model m, onnx_io::LoadModelBytes(data, size, model_dir));
  impl->create_times.load_ms = read_ms + MsSince(t0);
  return Finish(std::move(m), options, provider, std::move(impl), use);
}

}  // namespace

Result<std::unique_ptr<Session>> CreateSessionFromModel(ir::Model model, const SessionOptions& options) {
  KILN_ASSIGN_OR_RETURN(runtime::Provider provider, CheckOptions(options));
  return Finish(std::move(model), options, provider, std::make_unique<Session::Impl>(), CacheUse{});
}

Result<std::unique_ptr<Session>> Session::Create(const std::string& model_path, const SessionOptions& options) {
  const auto t0 = Clock::now();
  auto bytes = onnx_io::ReadModelFile(model_path);
  if (!bytes.ok()) return bytes.status();
  auto s = CreateFromModelBytes((*bytes)->data(), (*bytes)->bytes(), onnx_io::ModelDir(model_path), options, MsSince(t0));
  if (!s.ok()) return s.status().WithContext("'" + model_path + "'");
  return s;
}

Result<std::unique_ptr<Session>> Session::CreateFromBytes(const void* data, size_t size, const SessionOptions& options) {
  return CreateFromModelBytes(data, size, "", options, 0);
}

namespace {

Result<std::vector<Datum>> RunImpl(const Session::Impl& impl, const std::map<std::string, Datum>& inputs,
                                   const std::vector<std::string>& output_names, const runtime::NodeTap* tap) {
  std::map<std::string, const IoInfo*> by_name;
  for (const IoInfo& io : impl.inputs) by_name[io.name] = &io;
  for (const auto& [name, d] : inputs) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      std::string expected;
      for (const IoInfo& io : impl.inputs)
        if (!io.optional) expected += (expected.empty() ? "" : ", ") + ("'" + io.name + "'");
      return InvalidArgument("the model has no input named '" + name + "' (inputs: " + expected + ")");
    }
    KILN_RETURN_IF_ERROR(ValidateFeed(*it->second, d));
  }
  for (const IoInfo& io : impl.inputs)
    if (!io.optional && !inputs.count(io.name))
      return InvalidArgument("required input '" + io.name + "' (" + std::string(DTypeName(io.dtype)) + io.ShapeString() + ") was not given");
  std::vector<std::string> names = output_names;
  if (names.empty())
    for (const IoInfo& io : impl.outputs) names.push_back(io.name);
  const ir::Graph& g = impl.model->graph;
  for (const std::string& n : names) {
    bool known = false;
    for (const auto& v : g.outputs) known = known || v.name == n;
    if (!known) return InvalidArgument("the model has no output named '" + n + "'");
  }
  // Kernels parallelize with OpenMP, as oneDNN does, so one pool serves both.
  // The thread count is an ICV of the calling thread: set it for every run.
  if (impl.options.threads > 0) omp_set_num_threads(impl.options.threads);
  runtime::RunOptions ro;
  if (tap) ro.tap = *tap;
  return impl.executor->Run(inputs, names, ro);
}

}  // namespace

Result<std::vector<Datum>> Session::RunDatums(const std::map<std::string, Datum>& inputs,
                                              const std::vector<std::string>& output_names) const {
  return RunImpl(*impl_, inputs, output_names, nullptr);
}

Result<std::vector<Tensor>> Session::Run(const std::map<std::string, Tensor>& inputs,
                                         const std::vector<std::string>& output_names) const {
  std::map<std::string, Datum> feeds;
  for (const auto& [n, t] : inputs) feeds[n] = Datum(t);
  KILN_ASSIGN_OR_RETURN(std::vector<Datum> outs, RunImpl(*impl_, feeds, output_names, nullptr));
  std::vector<Tensor> result;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].is_tensor()) return InvalidArgument("output " + std::to_string(i) + " is a " + outs[i].Describe() + ", not a tensor: use RunDatums");
    result.push_back(outs[i].tensor());
  }
  return result;
}

Result<std::vector<Datum>> RunWithTap(const Session& s, const std::map<std::string, Datum>& inputs,
                                      const std::vector<std::string>& output_names, const runtime::NodeTap& tap) {
  return RunImpl(s.impl(), inputs, output_names, &tap);
}

}  // namespace kiln
