#include "ops/op_registry.h"

namespace kiln::ops {

const ir::TypeInfo& InferContext::input_type(size_t i) const {
  static const ir::TypeInfo kUnknown;
  if (i >= types_.size() || !types_[i] || !has_input(i)) return kUnknown;
  return *types_[i];
}

const ir::Dims* InferContext::input_dims(size_t i) const {
  const ir::TypeInfo& t = input_type(i);
  if (t.kind != ir::TypeInfo::Kind::kTensor || !t.shape) return nullptr;
  return &*t.shape;
}

std::optional<std::vector<int64_t>> InferContext::input_ints(size_t i) const {
  const Tensor* t = input_value(i);
  if (!t || !t->defined()) return std::nullopt;
  if (!DTypeIsSignedInt(t->dtype()) && !DTypeIsUnsignedInt(t->dtype())) return std::nullopt;
  std::vector<int64_t> out(static_cast<size_t>(t->numel()));
  // int64 is read directly: INT64_MAX (Slice ends) does not survive a trip through double.
  const bool direct = t->dtype() == DType::kInt64 && t->is_contiguous();
  for (int64_t k = 0; k < t->numel(); ++k)
    out[static_cast<size_t>(k)] = direct ? t->data<int64_t>()[k] : static_cast<int64_t>(t->GetAsDouble(k));
  return out;
}

Status InferContext::CheckInputCount(size_t min, size_t max) const {
  size_t n = num_inputs();
  while (n > 0 && !has_input(n - 1)) --n;  // trailing omitted optionals do not count
  if (n < min || num_inputs() > max)
    return Error("has " + std::to_string(num_inputs()) + " inputs, expected " +
                 (min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max)));
  for (size_t i = 0; i < min; ++i)
    if (!has_input(i)) return Error("required input " + std::to_string(i) + " is missing");
  return Status::Ok();
}

void OpRegistry::Register(OpSchema s) {
  auto key = std::make_pair(s.domain, s.op_type);
  schemas_.emplace(std::move(key), std::move(s));
}

const OpSchema* OpRegistry::Find(const std::string& domain, const std::string& op_type, int64_t opset) const {
  auto [b, e] = schemas_.equal_range({domain == "ai.onnx" ? "" : domain, op_type});
  for (auto it = b; it != e; ++it)
    if (opset >= it->second.min_opset && opset <= it->second.max_opset) return &it->second;
  return nullptr;
}

const OpSchema* OpRegistry::FindAny(const std::string& domain, const std::string& op_type) const {
  auto it = schemas_.find({domain == "ai.onnx" ? "" : domain, op_type});
  return it == schemas_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::OpNames() const {
  std::vector<std::string> out;
  for (const auto& [k, s] : schemas_)
    if (out.empty() || out.back() != k.second) out.push_back(k.second);
  return out;
}

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterAllOps(*r);
    return r;
  }();
  return *registry;
}

Status InferNode(const OpSchema& schema, InferContext& ctx) {
  if (!schema.infer) return Status::Ok();
  Status s = schema.infer(ctx);
  if (!s.ok() && s.message().rfind(ctx.node().Describe(), 0) != 0) return s.WithContext(ctx.node().Describe());
  return s;
}

}  // namespace kiln::ops
