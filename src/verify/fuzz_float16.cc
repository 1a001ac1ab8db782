#include "verify/fuzz_float16.h"

#include <set>

namespace kiln::verify {
namespace {

Tensor ToHalf(const Tensor& t) {
  const Tensor c = t.Contiguous();
  Tensor h = Tensor::Zeros(DType::kFloat16, c.shape());
  const float* src = c.data<float>();
  Float16* dst = h.data<Float16>();
  for (int64_t i = 0; i < c.numel(); ++i) dst[i] = Float16(src[i]);
  return h;
}

void RetypeValue(ir::TypeInfo& t) {
  if (t.kind == ir::TypeInfo::Kind::kTensor && t.dtype == DType::kFloat32) t.dtype = DType::kFloat16;
}

}  // namespace

Status ConvertToFloat16(ir::Model& model) {
  ir::Graph& g = model.graph;
  // Values the spec types float32 whatever the data: Resize roi and scales.
  std::set<std::string> keep;
  for (const ir::Node& n : g.nodes) {
    if (n.op_type != "Resize" && n.op_type != "Upsample") continue;
    for (size_t i = 1; i < n.inputs.size() && i <= 2; ++i)
      if (!n.inputs[i].empty()) keep.insert(n.inputs[i]);
  }
  for (auto& [name, t] : g.initializers)
    if (t.dtype() == DType::kFloat32 && !keep.count(name)) t = ToHalf(t);
  for (ir::Node& n : g.nodes) {
    if (n.op_type == "Cast") return Unimplemented("float16 conversion: the graph has a Cast (" + n.Describe() + ")");
    if (n.op_type != "Constant" || n.outputs.empty() || keep.count(n.outputs[0])) continue;
    auto it = n.attrs.find("value");
    if (it != n.attrs.end() && it->second.t.defined() && it->second.t.dtype() == DType::kFloat32)
      it->second.t = ToHalf(it->second.t);
  }
  for (ir::Value& v : g.inputs)
    if (!g.IsInitializer(v.name) || g.initializers.at(v.name).dtype() == DType::kFloat16) RetypeValue(v.type);
  for (ir::Value& v : g.outputs) RetypeValue(v.type);
  // Intermediate types are re-inferred; stale float32 ones would contradict.
  g.value_info.clear();
  return Status::Ok();
}

}  // namespace kiln::verify
