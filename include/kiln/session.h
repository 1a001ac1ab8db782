// kiln's public C++ API: load a model, inspect its inputs and outputs, run it.
//
//   kiln::SessionOptions opts;            // provider "reference" by default
//   auto session = kiln::Session::Create("model.onnx", opts);
//   if (!session.ok()) { puts(session.status().ToString().c_str()); ... }
//   auto outs = (*session)->Run({{"x", tensor}}, {"y"});
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/datum.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

struct SessionOptions {
  // Execution provider by name: "reference" (the ONNX spec, literally).
  std::string provider = "reference";
  // Graph optimization level: "disable", "basic", "extended", "all".
  std::string opt_level = "all";
  // Worker threads; 0 = the cores available.
  int threads = 0;
  // Most bytes of intermediate and output tensors a session may hold at once
  // (all concurrent runs together); 0 = no limit. A run that would need
  // more fails with ResourceExhausted naming the node, before allocating.
  uint64_t memory_limit = 0;
  // Compiled-plan cache: the optimized graph of a model loaded from a file
  // or bytes is kept on disk, so the next session of the same model under
  // the same options skips parsing and optimizing it. Folder: `cache_dir`,
  // else $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln.
  // An unusable folder is one warning on stderr, never an error. Only
  // providers that optimize (cpu) use it; the reference runs the file as is.
  bool use_cache = true;
  std::string cache_dir;
  uint64_t cache_max_bytes = uint64_t{1} << 30;  // entries beyond are evicted, least recently used first
};

// Metadata of one graph input or output.
struct IoInfo {
  std::string name;
  std::string kind = "tensor";          // "tensor", "sequence", "optional", "unknown"
  DType dtype = DType::kUndefined;      // tensor element type (or sequence element type)
  bool has_shape = false;               // false: rank unknown
  std::vector<int64_t> shape;           // -1 for a dynamic dim
  std::vector<std::string> dim_names;   // symbolic names ("" when none)
  bool optional = false;                // inputs: has an initializer default
  std::string ShapeString() const;      // "[1,3,N,?]"
};

class Session {
 public:
  static Result<std::unique_ptr<Session>> Create(const std::string& model_path, const SessionOptions& options = {});
  // From serialized ModelProto bytes; external data is not allowed.
  static Result<std::unique_ptr<Session>> CreateFromBytes(const void* data, size_t size,
                                                          const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<IoInfo>& inputs() const;
  const std::vector<IoInfo>& outputs() const;
  const SessionOptions& options() const;

  // Runs the model. `output_names` empty = every graph output, in graph
  // order. Inputs are checked by name, dtype and shape before anything runs.
  // Safe to call from several threads at once.
  Result<std::vector<Tensor>> Run(const std::map<std::string, Tensor>& inputs,
                                  const std::vector<std::string>& output_names = {}) const;
  // The same for models whose inputs or outputs are sequences or optionals.
  Result<std::vector<Datum>> RunDatums(const std::map<std::string, Datum>& inputs,
                                       const std::vector<std::string>& output_names = {}) const;

  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Names of the providers this build has.
std::vector<std::string> AvailableProviders();

}  // namespace kiln
