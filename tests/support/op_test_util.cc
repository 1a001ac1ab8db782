#include "support/op_test_util.h"

#include "runtime/session_internal.h"

namespace kiln::testing {

Result<std::vector<Datum>> RunNodeDatums(const std::string& op_type, const std::vector<Datum>& inputs,
                                         const std::vector<ir::Attribute>& attrs, size_t num_outputs, int64_t opset,
                                         const std::string& domain) {
  ir::Model m;
  m.opsets[""] = domain.empty() ? opset : 18;
  if (!domain.empty()) m.opsets[domain] = opset;
  m.graph.name = "test_" + op_type;
  ir::Node n;
  n.name = "n0";
  n.op_type = op_type;
  n.domain = domain;
  std::map<std::string, Datum> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty() || (inputs[i].is_tensor() && !inputs[i].tensor().defined())) {
      n.inputs.push_back("");
      continue;
    }
    std::string name = "in" + std::to_string(i);
    n.inputs.push_back(name);
    ir::TypeInfo t;
    if (inputs[i].is_tensor()) t = ir::TypeInfo::Tensor(inputs[i].tensor().dtype(), ir::DimsFromShape(inputs[i].tensor().shape()));
    else if (inputs[i].is_sequence()) {
      t.kind = ir::TypeInfo::Kind::kSequence;
      t.elem = std::make_shared<ir::TypeInfo>(ir::TypeInfo::Tensor(inputs[i].sequence_dtype()));
    } else {
      t.kind = ir::TypeInfo::Kind::kOptional;
    }
    m.graph.inputs.push_back({name, t});
    feeds[name] = inputs[i];
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    std::string name = "out" + std::to_string(i);
    n.outputs.push_back(name);
    m.graph.outputs.push_back({name, {}});
  }
  for (const auto& a : attrs) n.attrs[a.name] = a;
  m.graph.nodes.push_back(std::move(n));
  KILN_ASSIGN_OR_RETURN(auto session, CreateSessionFromModel(std::move(m)));
  return session->RunDatums(feeds);
}

Result<std::vector<Tensor>> RunNode(const std::string& op_type, const std::vector<Tensor>& inputs,
                                    const std::vector<ir::Attribute>& attrs, size_t num_outputs, int64_t opset,
                                    const std::string& domain) {
  std::vector<Datum> in;
  for (const auto& t : inputs) in.push_back(t.defined() ? Datum(t) : Datum());
  KILN_ASSIGN_OR_RETURN(auto outs, RunNodeDatums(op_type, in, attrs, num_outputs, opset, domain));
  std::vector<Tensor> r;
  for (auto& d : outs) r.push_back(d.tensor());
  return r;
}

Tensor F32(const Shape& shape, const std::vector<float>& v) { return Tensor::FromVector<float>(DType::kFloat32, shape, v); }
Tensor I64(const Shape& shape, const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>(DType::kInt64, shape, v); }

std::vector<float> ToFloats(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<float>(t.GetAsDouble(i)));
  return v;
}
std::vector<double> ToDoubles(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.GetAsDouble(i));
  return v;
}
std::vector<int64_t> ToInts(const Tensor& t) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(static_cast<int64_t>(t.GetAsDouble(i)));
  return v;
}

}  // namespace kiln::testing
