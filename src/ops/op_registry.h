// What each op means, independent of any provider: its domain, the opset
// range kiln implements, and its shape/type inference. Providers register
// kernels separately (runtime/kernel.h); a node runs only when both exist.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// Inputs and outputs of one node during inference. At load time an input's
// dims may be unknown and its value known only for initializers and
// constants; at run time every input is concrete and input_value() is the
// real tensor, so data-dependent shapes (Reshape, Expand, TopK k...) resolve.
class InferContext {
 public:
  InferContext(const ir::Node& node, int64_t opset, std::vector<const ir::TypeInfo*> input_types,
               std::vector<const Tensor*> input_values)
      : node_(node), opset_(opset), types_(std::move(input_types)), values_(std::move(input_values)),
        outputs_(node.outputs.size()) {}

  const ir::Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  bool has_input(size_t i) const { return node_.HasInput(i); }

  // kUnknown type for absent inputs.
  const ir::TypeInfo& input_type(size_t i) const;
  DType input_dtype(size_t i) const { return input_type(i).dtype; }
  // nullptr when the rank is unknown (or the input is absent / not a tensor).
  const ir::Dims* input_dims(size_t i) const;
  // The value when known (see above), else nullptr. Asking for the value of
  // a present input that has none is remembered (read_unknown_value): the
  // result may then differ once the value is known, at run time.
  const Tensor* input_value(size_t i) const {
    const Tensor* v = i < values_.size() ? values_[i] : nullptr;
    if (!v && has_input(i)) read_unknown_value_ = true;
    return v;
  }
  // Whether inference asked for a value it did not have (see input_value).
  bool read_unknown_value() const { return read_unknown_value_; }
  void note_unknown_value_read() { read_unknown_value_ = true; }
  // All input values as given, without noting anything (to pass them on).
  const std::vector<const Tensor*>& input_values() const { return values_; }
  // Input value as int64 list (any integer dtype); nullopt when not known.
  std::optional<std::vector<int64_t>> input_ints(size_t i) const;

  void set_output(size_t i, ir::TypeInfo t) { if (i < outputs_.size()) outputs_[i] = std::move(t); }
  void set_output(size_t i, DType dt, std::optional<ir::Dims> dims) { set_output(i, ir::TypeInfo::Tensor(dt, std::move(dims))); }
  void set_output(size_t i, DType dt, const Shape& shape) { set_output(i, dt, ir::DimsFromShape(shape)); }
  std::vector<ir::TypeInfo>& outputs() { return outputs_; }

  // "node 'x' (Op): msg" as InvalidModel.
  Status Error(const std::string& msg) const { return node_.Invalid(msg); }
  // Checks the input count is within [min, max].
  Status CheckInputCount(size_t min, size_t max) const;

 private:
  const ir::Node& node_;
  int64_t opset_;
  std::vector<const ir::TypeInfo*> types_;
  std::vector<const Tensor*> values_;
  std::vector<ir::TypeInfo> outputs_;
  mutable bool read_unknown_value_ = false;
};

using InferFn = std::function<Status(InferContext&)>;

struct OpSchema {
  std::string domain;        // "" = ai.onnx
  std::string op_type;
  int64_t min_opset = 1;     // oldest opset of this domain whose semantics kiln implements
  int64_t max_opset = 1000;  // newest (inclusive)
  InferFn infer;
};

class OpRegistry {
 public:
  void Register(OpSchema s);
  // Schema for op at this opset; nullptr when unknown or out of range.
  const OpSchema* Find(const std::string& domain, const std::string& op_type, int64_t opset) const;
  // Any schema of the op, regardless of opset (for error messages).
  const OpSchema* FindAny(const std::string& domain, const std::string& op_type) const;
  std::vector<std::string> OpNames() const;

  // The registry of every op kiln knows (built once by RegisterAllOps).
  static const OpRegistry& Global();

 private:
  std::multimap<std::pair<std::string, std::string>, OpSchema> schemas_;
};

// ops/register.cc: calls each family's Register* function explicitly.
void RegisterAllOps(OpRegistry& r);

// Runs the node's schema inference; fills ctx.outputs(). Errors name the node.
Status InferNode(const OpSchema& schema, InferContext& ctx);

}  // namespace kiln::ops
