#include "ir/builder.h"

#include <cctype>
#include <cmath>
#include <set>

#include "support/dtype_dispatch.h"

namespace kiln::ir {

uint64_t SeededRng::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SeededRng::Uniform() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }

int64_t SeededRng::UniformInt(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  const uint64_t span = static_cast<uint64_t>(hi - lo);
  return lo + static_cast<int64_t>(Next() % span);
}

uint64_t SeedFor(uint64_t seed, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h ^ (seed * 0x9E3779B97F4A7C15ull);
}

Result<Tensor> RandomTensor(DType dtype, const Shape& shape, SeededRng& rng, double lo, double hi) {
  KILN_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  if (dtype == DType::kString) {
    auto* s = t.data<std::string>();
    for (int64_t i = 0; i < t.numel(); ++i) s[i] = "s" + std::to_string(rng.UniformInt(0, 1000));
    return t;
  }
  Status st = VisitNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = (rng.Next() >> 63) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(std::floor(rng.Uniform(lo, hi)));
      } else {
        p[i] = FromDouble<T>(rng.Uniform(lo, hi));
      }
    }
  });
  KILN_RETURN_IF_ERROR(st);
  return t;
}

GraphBuilder::GraphBuilder(int64_t opset, std::string graph_name, uint64_t seed) : rng_(seed) {
  model_.opsets[""] = opset;
  model_.graph.name = std::move(graph_name);
  model_.producer_name = "kiln";
}

std::string GraphBuilder::AddInput(const std::string& name, DType dtype, const Shape& shape) {
  return AddInput(name, dtype, DimsFromShape(shape));
}

std::string GraphBuilder::AddInput(const std::string& name, DType dtype, const Dims& dims) {
  model_.graph.inputs.push_back({name, TypeInfo::Tensor(dtype, dims)});
  return name;
}

std::string GraphBuilder::AddInitializer(const std::string& name, Tensor value) {
  model_.graph.initializers[name] = std::move(value);
  return name;
}

std::string GraphBuilder::AddRandomInitializer(const std::string& name, DType dtype, const Shape& shape, double lo,
                                               double hi) {
  auto t = RandomTensor(dtype, shape, rng_, lo, hi);
  // Shapes here come from code, not from users: a failure is a programming error.
  return AddInitializer(name, t.ok() ? std::move(t).value() : Tensor::Zeros(DType::kFloat32, {0}));
}

std::string GraphBuilder::FreshNodeName(const std::string& op_type) {
  std::string base = op_type;
  for (char& c : base) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return base + "_" + std::to_string(counter_++);
}

std::vector<std::string> GraphBuilder::AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                                               const std::vector<Attribute>& attrs, size_t num_outputs,
                                               const std::string& name, const std::string& domain) {
  const std::string node_name = name.empty() ? FreshNodeName(op_type) : name;
  std::vector<std::string> outs;
  for (size_t i = 0; i < num_outputs; ++i) outs.push_back(node_name + (num_outputs == 1 ? "_out" : "_out" + std::to_string(i)));
  AddNodeWithOutputs(op_type, inputs, outs, attrs, node_name, domain);
  return outs;
}

std::string GraphBuilder::AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                                  const std::vector<Attribute>& attrs, const std::string& name) {
  return AddNode(op_type, inputs, attrs, 1, name)[0];
}

void GraphBuilder::AddNodeWithOutputs(const std::string& op_type, const std::vector<std::string>& inputs,
                                      const std::vector<std::string>& outputs, const std::vector<Attribute>& attrs,
                                      const std::string& name, const std::string& domain) {
  Node n;
  n.name = name.empty() ? FreshNodeName(op_type) : name;
  n.op_type = op_type;
  n.domain = domain;
  n.inputs = inputs;
  n.outputs = outputs;
  for (const Attribute& a : attrs) n.attrs[a.name] = a;
  model_.graph.nodes.push_back(std::move(n));
}

void GraphBuilder::AddOutput(const std::string& name, TypeInfo type) { model_.graph.outputs.push_back({name, std::move(type)}); }

void GraphBuilder::SetProducer(const std::string& name, const std::string& version) {
  model_.producer_name = name;
  model_.producer_version = version;
}

Result<Model> GraphBuilder::Build() const {
  const Graph& g = model_.graph;
  std::set<std::string> defined;
  auto define = [&](const std::string& n, const std::string& what) -> Status {
    if (n.empty()) return Status::Ok();
    if (!defined.insert(n).second) return InvalidModel("value '" + n + "' is defined twice (" + what + ")");
    return Status::Ok();
  };
  for (const auto& v : g.inputs) KILN_RETURN_IF_ERROR(define(v.name, "graph input"));
  for (const auto& [n, t] : g.initializers)
    if (!defined.count(n)) KILN_RETURN_IF_ERROR(define(n, "initializer"));
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) KILN_RETURN_IF_ERROR(define(o, n.Describe() + " output"));
  KILN_RETURN_IF_ERROR(g.TopologicalOrder().status());
  for (const auto& v : g.outputs)
    if (!defined.count(v.name)) return InvalidModel("graph output '" + v.name + "' is not produced by any node or input");
  return model_;
}

}  // namespace kiln::ir
