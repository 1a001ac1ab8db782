#include "ir/graph.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

namespace kiln::ir {

std::string DimsToString(const Dims& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    if (dims[i].known()) s += std::to_string(dims[i].value);
    else s += dims[i].param.empty() ? "?" : dims[i].param;
  }
  return s + "]";
}

Dims DimsFromShape(const Shape& s) {
  Dims d;
  for (int64_t v : s) d.push_back(Dim::Known(v));
  return d;
}

TypeInfo TypeInfo::Tensor(DType t, std::optional<Dims> dims) {
  TypeInfo ti;
  ti.kind = Kind::kTensor;
  ti.dtype = t;
  ti.shape = std::move(dims);
  return ti;
}

std::string TypeInfo::ToString() const {
  switch (kind) {
    case Kind::kUnknown: return "?";
    case Kind::kTensor: return std::string(DTypeName(dtype)) + (shape ? DimsToString(*shape) : "[*]");
    case Kind::kSequence: return "seq(" + (elem ? elem->ToString() : std::string("?")) + ")";
    case Kind::kOptional: return "optional(" + (elem ? elem->ToString() : std::string("?")) + ")";
  }
  return "?";
}

const char* AttributeTypeName(Attribute::Type t) {
  switch (t) {
    case Attribute::Type::kFloat: return "float";
    case Attribute::Type::kInt: return "int";
    case Attribute::Type::kString: return "string";
    case Attribute::Type::kTensor: return "tensor";
    case Attribute::Type::kGraph: return "graph";
    case Attribute::Type::kFloats: return "floats";
    case Attribute::Type::kInts: return "ints";
    case Attribute::Type::kStrings: return "strings";
    case Attribute::Type::kTensors: return "tensors";
    case Attribute::Type::kGraphs: return "graphs";
    case Attribute::Type::kSparseTensor: return "sparse_tensor";
    case Attribute::Type::kSparseTensors: return "sparse_tensors";
    case Attribute::Type::kTypeProto: return "type_proto";
    case Attribute::Type::kTypeProtos: return "type_protos";
    default: return "undefined";
  }
}

Attribute Attribute::Int(std::string n, int64_t v) { Attribute a; a.name = std::move(n); a.type = Type::kInt; a.i = v; return a; }
Attribute Attribute::Float(std::string n, float v) { Attribute a; a.name = std::move(n); a.type = Type::kFloat; a.f = v; return a; }
Attribute Attribute::String(std::string n, std::string v) { Attribute a; a.name = std::move(n); a.type = Type::kString; a.s = std::move(v); return a; }
Attribute Attribute::Ints(std::string n, std::vector<int64_t> v) { Attribute a; a.name = std::move(n); a.type = Type::kInts; a.ints = std::move(v); return a; }
Attribute Attribute::Floats(std::string n, std::vector<float> v) { Attribute a; a.name = std::move(n); a.type = Type::kFloats; a.floats = std::move(v); return a; }
Attribute Attribute::Strings(std::string n, std::vector<std::string> v) { Attribute a; a.name = std::move(n); a.type = Type::kStrings; a.strings = std::move(v); return a; }
Attribute Attribute::TensorValue(std::string n, kiln::Tensor v) { Attribute a; a.name = std::move(n); a.type = Type::kTensor; a.t = std::move(v); return a; }
Attribute Attribute::GraphValue(std::string n, std::shared_ptr<Graph> g) { Attribute a; a.name = std::move(n); a.type = Type::kGraph; a.g = std::move(g); return a; }

std::string Node::Describe() const {
  std::string op = domain.empty() || domain == "ai.onnx" ? op_type : domain + "." + op_type;
  return "node '" + name + "' (" + op + ")";
}

const Attribute* Node::FindAttr(const std::string& n) const {
  auto it = attrs.find(n);
  return it == attrs.end() ? nullptr : &it->second;
}

Status Node::Error(StatusCode code, const std::string& msg) const { return Status(code, Describe() + ": " + msg); }

namespace {
Status WrongType(const Node& n, const Attribute& a, const char* want) {
  return n.Invalid("attribute '" + a.name + "' has type " + AttributeTypeName(a.type) + ", expected " + want);
}
}  // namespace

Result<int64_t> Node::GetInt(const std::string& n, int64_t def) const {
  const Attribute* a = FindAttr(n);
  if (!a) return def;
  if (a->type != Attribute::Type::kInt) return WrongType(*this, *a, "int");
  return a->i;
}
Result<float> Node::GetFloat(const std::string& n, float def) const {
  const Attribute* a = FindAttr(n);
  if (!a) return def;
  if (a->type != Attribute::Type::kFloat) return WrongType(*this, *a, "float");
  return a->f;
}
Result<std::string> Node::GetString(const std::string& n, const std::string& def) const {
  const Attribute* a = FindAttr(n);
  if (!a) return def;
  if (a->type != Attribute::Type::kString) return WrongType(*this, *a, "string");
  return a->s;
}
Result<std::vector<int64_t>> Node::GetInts(const std::string& n, const std::vector<int64_t>& def) const {
  const Attribute* a = FindAttr(n);
  if (!a) return def;
  if (a->type != Attribute::Type::kInts) return WrongType(*this, *a, "ints");
  return a->ints;
}
Result<std::vector<float>> Node::GetFloats(const std::string& n, const std::vector<float>& def) const {
  const Attribute* a = FindAttr(n);
  if (!a) return def;
  if (a->type != Attribute::Type::kFloats) return WrongType(*this, *a, "floats");
  return a->floats;
}
Result<std::vector<std::string>> Node::GetStrings(const std::string& n, const std::vector<std::string>& def) const {
  const Attribute* a = FindAttr(n);
  if (!a) return def;
  if (a->type != Attribute::Type::kStrings) return WrongType(*this, *a, "strings");
  return a->strings;
}
Result<Tensor> Node::GetTensor(const std::string& n) const {
  const Attribute* a = FindAttr(n);
  if (!a) return Invalid("missing required attribute '" + n + "'");
  if (a->type != Attribute::Type::kTensor) return WrongType(*this, *a, "tensor");
  return a->t;
}

std::vector<const Value*> Graph::RealInputs() const {
  std::vector<const Value*> out;
  for (const Value& v : inputs)
    if (!IsInitializer(v.name)) out.push_back(&v);
  return out;
}

Result<std::vector<size_t>> Graph::TopologicalOrder(const std::vector<std::string>& outer_scope) const {
  std::unordered_set<std::string> available(outer_scope.begin(), outer_scope.end());
  for (const Value& v : inputs) available.insert(v.name);
  for (const auto& [n, t] : initializers) available.insert(n);
  for (const auto& n : sparse_initializer_names) available.insert(n);

  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& o : nodes[i].outputs) {
      if (o.empty()) continue;
      if (producer.count(o) || available.count(o))
        return InvalidModel(nodes[i].Describe() + ": output '" + o + "' is already defined elsewhere in graph '" + name + "'");
      producer[o] = i;
    }
  }
  // Names a node's subgraphs read from this scope count as its inputs too.
  std::vector<std::vector<std::string>> deps(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    deps[i] = nodes[i].inputs;
    for (const std::string& n : NodeOuterReferences(nodes[i]))
      if (producer.count(n)) deps[i].push_back(n);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& in : nodes[i].inputs) {
      if (in.empty() || available.count(in) || producer.count(in)) continue;
      return InvalidModel(nodes[i].Describe() + ": input '" + in + "' is not produced by any node, graph input or initializer of graph '" + name + "'");
    }
  }
  // Kahn's algorithm, preferring file order for stable, readable plans.
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> users(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::set<size_t> seen;
    for (const std::string& in : deps[i]) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end() || !seen.insert(it->second).second) continue;
      ++pending[i];
      users[it->second].push_back(i);
    }
  }
  std::set<size_t> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.insert(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.insert(u);
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] > 0) return InvalidModel(nodes[i].Describe() + ": is part of a cycle in graph '" + name + "'");
  }
  return order;
}

namespace {
void CollectOuter(const Graph& g, std::vector<std::string>& out, std::unordered_set<std::string>& seen) {
  std::unordered_set<std::string> local;
  for (const Value& v : g.inputs) local.insert(v.name);
  for (const auto& [n, t] : g.initializers) local.insert(n);
  for (const Node& sn : g.nodes)
    for (const auto& o : sn.outputs) local.insert(o);
  auto use = [&](const std::string& n) {
    if (!n.empty() && !local.count(n) && seen.insert(n).second) out.push_back(n);
  };
  for (const Node& sn : g.nodes) {
    for (const auto& in : sn.inputs) use(in);
    for (const std::string& n : NodeOuterReferences(sn)) use(n);
  }
  for (const Value& v : g.outputs) use(v.name);
}
}  // namespace

std::vector<std::string> OuterReferences(const Graph& g) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  CollectOuter(g, out, seen);
  return out;
}

std::vector<std::string> NodeOuterReferences(const Node& n) {
  std::vector<std::string> out;
  for (const auto& [an, a] : n.attrs) {
    if (a.g)
      for (auto& s : OuterReferences(*a.g)) out.push_back(s);
    for (const auto& g : a.graphs)
      for (auto& s : OuterReferences(*g)) out.push_back(s);
  }
  return out;
}

int64_t Model::OpsetFor(const std::string& op_domain) const {
  std::string d = op_domain == "ai.onnx" ? "" : op_domain;
  auto it = opsets.find(d);
  return it == opsets.end() ? 0 : it->second;
}

}  // namespace kiln::ir
