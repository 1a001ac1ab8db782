// The C API (include/kiln/kiln.h) over kiln::Session. Every entry point
// catches everything: a C caller never sees a C++ exception.
#include "kiln/kiln.h"

#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kiln/session.h"

struct kiln_status {
  kiln_status_code code;
  std::string message;
};

struct kiln_session {
  std::unique_ptr<kiln::Session> session;
};

struct kiln_outputs {
  std::vector<std::string> names;
  std::vector<kiln::Tensor> tensors;  // contiguous
};

namespace {

kiln_status* MakeStatus(kiln_status_code code, std::string msg) {
  // Allocation failure here leaves nothing better to return than a static.
  try {
    return new kiln_status{code, std::move(msg)};
  } catch (...) {
    static kiln_status oom{KILN_RESOURCE_EXHAUSTED, "out of memory"};
    return &oom;
  }
}

kiln_status* FromStatus(const kiln::Status& s) {
  if (s.ok()) return nullptr;
  return MakeStatus(static_cast<kiln_status_code>(s.code()), s.ToString());
}

kiln_status* NullArg(const char* fn, const char* arg) {
  return MakeStatus(KILN_INVALID_ARGUMENT, std::string(fn) + ": " + arg + " is NULL");
}

template <typename F>
kiln_status* Guard(const char* fn, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return MakeStatus(KILN_RESOURCE_EXHAUSTED, std::string(fn) + ": out of memory");
  } catch (const std::exception& e) {
    return MakeStatus(KILN_INTERNAL, std::string(fn) + ": internal error: " + e.what());
  } catch (...) {
    return MakeStatus(KILN_INTERNAL, std::string(fn) + ": internal error");
  }
}

kiln::SessionOptions ToOptions(const kiln_session_options* o) {
  kiln::SessionOptions opts;
  if (!o) return opts;
  if (o->provider) opts.provider = o->provider;
  if (o->opt_level) opts.opt_level = o->opt_level;
  opts.threads = o->threads;
  if (o->cache_dir) opts.cache_dir = o->cache_dir;
  opts.use_cache = o->no_cache == 0;
  return opts;
}

bool KnownDType(kiln_dtype t) {
  return t != KILN_DTYPE_UNDEFINED && kiln::DTypeIsKnown(static_cast<int>(t)) && t != 8 /* string */;
}

kiln_status* Info(const std::vector<kiln::IoInfo>& list, size_t index, kiln_io_info* out, const char* fn) {
  if (!out) return NullArg(fn, "out");
  if (index >= list.size())
    return MakeStatus(KILN_OUT_OF_RANGE, std::string(fn) + ": index " + std::to_string(index) + " out of range (the model has " +
                                             std::to_string(list.size()) + ")");
  const kiln::IoInfo& io = list[index];
  out->name = io.name.c_str();
  out->kind = io.kind.c_str();
  out->dtype = static_cast<kiln_dtype>(io.dtype);
  out->has_shape = io.has_shape ? 1 : 0;
  out->rank = io.shape.size();
  out->shape = io.shape.data();
  out->optional = io.optional ? 1 : 0;
  return nullptr;
}

const kiln::Tensor* OutputAt(const kiln_outputs* o, size_t i) {
  return o && i < o->tensors.size() ? &o->tensors[i] : nullptr;
}

}  // namespace

extern "C" {

kiln_status_code kiln_status_code_of(const kiln_status* status) { return status ? status->code : KILN_OK; }
const char* kiln_status_message(const kiln_status* status) { return status ? status->message.c_str() : ""; }
void kiln_status_free(kiln_status* status) {
  if (status && status->code == KILN_RESOURCE_EXHAUSTED && status->message == "out of memory") return;  // the static one
  delete status;
}

size_t kiln_dtype_size(kiln_dtype dtype) {
  if (!KnownDType(dtype)) return 0;
  return kiln::DTypeSize(static_cast<kiln::DType>(dtype));
}

const char* kiln_dtype_name(kiln_dtype dtype) {
  if (dtype != KILN_DTYPE_UNDEFINED && !kiln::DTypeIsKnown(static_cast<int>(dtype))) return "unknown";
  return kiln::DTypeName(static_cast<kiln::DType>(dtype));
}

kiln_status* kiln_session_create(const char* model_path, const kiln_session_options* options, kiln_session** out) {
  return Guard("kiln_session_create", [&]() -> kiln_status* {
    if (!out) return NullArg("kiln_session_create", "out");
    *out = nullptr;
    if (!model_path) return NullArg("kiln_session_create", "model_path");
    auto s = kiln::Session::Create(model_path, ToOptions(options));
    if (!s.ok()) return FromStatus(s.status());
    *out = new kiln_session{std::move(s).value()};
    return nullptr;
  });
}

kiln_status* kiln_session_create_from_bytes(const void* data, size_t size, const kiln_session_options* options,
                                            kiln_session** out) {
  return Guard("kiln_session_create_from_bytes", [&]() -> kiln_status* {
    if (!out) return NullArg("kiln_session_create_from_bytes", "out");
    *out = nullptr;
    if (!data && size) return NullArg("kiln_session_create_from_bytes", "data");
    auto s = kiln::Session::CreateFromBytes(data ? data : "", size, ToOptions(options));
    if (!s.ok()) return FromStatus(s.status());
    *out = new kiln_session{std::move(s).value()};
    return nullptr;
  });
}

void kiln_session_free(kiln_session* session) { delete session; }

size_t kiln_session_input_count(const kiln_session* session) { return session ? session->session->inputs().size() : 0; }
size_t kiln_session_output_count(const kiln_session* session) { return session ? session->session->outputs().size() : 0; }

kiln_status* kiln_session_input_info(const kiln_session* session, size_t index, kiln_io_info* out) {
  if (!session) return NullArg("kiln_session_input_info", "session");
  return Info(session->session->inputs(), index, out, "kiln_session_input_info");
}

kiln_status* kiln_session_output_info(const kiln_session* session, size_t index, kiln_io_info* out) {
  if (!session) return NullArg("kiln_session_output_info", "session");
  return Info(session->session->outputs(), index, out, "kiln_session_output_info");
}

kiln_status* kiln_session_run(const kiln_session* session, const kiln_tensor_view* inputs, size_t num_inputs,
                              kiln_outputs** out) {
  return Guard("kiln_session_run", [&]() -> kiln_status* {
    const char* fn = "kiln_session_run";
    if (!out) return NullArg(fn, "out");
    *out = nullptr;
    if (!session) return NullArg(fn, "session");
    if (!inputs && num_inputs) return NullArg(fn, "inputs");
    std::map<std::string, kiln::Tensor> feeds;
    for (size_t i = 0; i < num_inputs; ++i) {
      const kiln_tensor_view& v = inputs[i];
      const std::string what = std::string(fn) + ": input " + std::to_string(i);
      if (!v.name) return MakeStatus(KILN_INVALID_ARGUMENT, what + " has a NULL name");
      const std::string label = what + " ('" + v.name + "')";
      if (!KnownDType(v.dtype)) return MakeStatus(KILN_INVALID_ARGUMENT, label + " has unknown dtype " + std::to_string(v.dtype));
      if (!v.shape && v.rank) return MakeStatus(KILN_INVALID_ARGUMENT, label + " has a NULL shape of rank " + std::to_string(v.rank));
      kiln::Shape shape(v.shape, v.shape + v.rank);
      auto t = kiln::Tensor::Allocate(static_cast<kiln::DType>(v.dtype), shape);
      if (!t.ok()) return FromStatus(t.status().WithContext(label));
      if (v.data_bytes != t->nbytes())
        return MakeStatus(KILN_INVALID_ARGUMENT, label + ": data_bytes is " + std::to_string(v.data_bytes) + ", " +
                                                     kiln::DTypeName(t->dtype()) + kiln::ShapeToString(shape) + " needs " +
                                                     std::to_string(t->nbytes()));
      if (!v.data && v.data_bytes) return MakeStatus(KILN_INVALID_ARGUMENT, label + " has NULL data");
      if (v.data_bytes) std::memcpy(t->raw(), v.data, v.data_bytes);
      if (!feeds.emplace(v.name, std::move(t).value()).second)
        return MakeStatus(KILN_INVALID_ARGUMENT, label + ": input given twice");
    }
    auto r = session->session->Run(feeds);
    if (!r.ok()) return FromStatus(r.status());
    auto result = std::make_unique<kiln_outputs>();
    for (size_t i = 0; i < r->size(); ++i) {
      result->names.push_back(session->session->outputs()[i].name);
      result->tensors.push_back((*r)[i].Contiguous());
    }
    *out = result.release();
    return nullptr;
  });
}

kiln_status* kiln_session_run_f32(const kiln_session* session, const char* input_name, const float* data,
                                  const int64_t* shape, size_t rank, kiln_outputs** out) {
  return Guard("kiln_session_run_f32", [&]() -> kiln_status* {
    if (!shape && rank) return NullArg("kiln_session_run_f32", "shape");
    auto n = kiln::CheckedElementCount(kiln::Shape(shape, shape + rank));
    if (!n.ok()) return FromStatus(n.status());
    if (*n > static_cast<int64_t>(SIZE_MAX / sizeof(float)))
      return MakeStatus(KILN_OUT_OF_RANGE, "kiln_session_run_f32: shape too large");
    kiln_tensor_view v{input_name, KILN_DTYPE_FLOAT32, shape, rank, data, static_cast<size_t>(*n) * sizeof(float)};
    return kiln_session_run(session, &v, 1, out);
  });
}

size_t kiln_outputs_count(const kiln_outputs* outputs) { return outputs ? outputs->tensors.size() : 0; }
const char* kiln_outputs_name(const kiln_outputs* outputs, size_t index) {
  return OutputAt(outputs, index) ? outputs->names[index].c_str() : nullptr;
}
kiln_dtype kiln_outputs_dtype(const kiln_outputs* outputs, size_t index) {
  const kiln::Tensor* t = OutputAt(outputs, index);
  return t ? static_cast<kiln_dtype>(t->dtype()) : KILN_DTYPE_UNDEFINED;
}
size_t kiln_outputs_rank(const kiln_outputs* outputs, size_t index) {
  const kiln::Tensor* t = OutputAt(outputs, index);
  return t ? t->shape().size() : 0;
}
const int64_t* kiln_outputs_shape(const kiln_outputs* outputs, size_t index) {
  const kiln::Tensor* t = OutputAt(outputs, index);
  return t ? t->shape().data() : nullptr;
}
int64_t kiln_outputs_element_count(const kiln_outputs* outputs, size_t index) {
  const kiln::Tensor* t = OutputAt(outputs, index);
  return t ? t->numel() : 0;
}
const void* kiln_outputs_data(const kiln_outputs* outputs, size_t index) {
  const kiln::Tensor* t = OutputAt(outputs, index);
  return t && t->dtype() != kiln::DType::kString ? t->raw() : nullptr;
}
size_t kiln_outputs_data_bytes(const kiln_outputs* outputs, size_t index) {
  const kiln::Tensor* t = OutputAt(outputs, index);
  return t && t->dtype() != kiln::DType::kString ? t->nbytes() : 0;
}

kiln_status* kiln_outputs_copy_f32(const kiln_outputs* outputs, size_t index, float* dst, size_t capacity) {
  return Guard("kiln_outputs_copy_f32", [&]() -> kiln_status* {
    const kiln::Tensor* t = OutputAt(outputs, index);
    if (!t) return MakeStatus(KILN_OUT_OF_RANGE, "kiln_outputs_copy_f32: no output " + std::to_string(index));
    if (t->dtype() == kiln::DType::kString)
      return MakeStatus(KILN_INVALID_ARGUMENT, "kiln_outputs_copy_f32: output '" + outputs->names[index] + "' holds strings");
    const size_t n = static_cast<size_t>(t->numel());
    if (capacity < n)
      return MakeStatus(KILN_INVALID_ARGUMENT, "kiln_outputs_copy_f32: output '" + outputs->names[index] + "' has " +
                                                   std::to_string(n) + " elements, the buffer holds " + std::to_string(capacity));
    if (!dst && n) return NullArg("kiln_outputs_copy_f32", "dst");
    for (size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(t->GetAsDouble(static_cast<int64_t>(i)));
    return nullptr;
  });
}

void kiln_outputs_free(kiln_outputs* outputs) { delete outputs; }

}  // extern "C"
