#include "passes/graph_util.h"

#include "ops/op_registry.h"

namespace kiln::passes {

GraphIndex::GraphIndex(const ir::Graph& g) : g_(g) {
  for (const auto& v : g.outputs) outputs_.insert(v.name);
  for (const auto& v : g.inputs) inputs_.insert(v.name);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    for (const auto& o : n.outputs)
      if (!o.empty()) producer_[o] = i;
    for (size_t s = 0; s < n.inputs.size(); ++s)
      if (!n.inputs[s].empty()) consumers_[n.inputs[s]].push_back({i, s});
    for (const auto& r : ir::NodeOuterReferences(n)) subgraph_reads_.insert(r);
  }
}

std::optional<size_t> GraphIndex::Producer(const std::string& v) const {
  auto it = producer_.find(v);
  if (it == producer_.end()) return std::nullopt;
  return it->second;
}

const std::vector<GraphIndex::Use>& GraphIndex::Consumers(const std::string& v) const {
  static const std::vector<Use> kNone;
  auto it = consumers_.find(v);
  return it == consumers_.end() ? kNone : it->second;
}

size_t GraphIndex::UseCount(const std::string& v) const {
  return Consumers(v).size() + (ReadBySubgraph(v) ? 1 : 0) + (IsGraphOutput(v) ? 1 : 0);
}

bool GraphIndex::OnlyFeeds(const std::string& v, size_t node) const {
  const auto& c = Consumers(v);
  return UseCount(v) == 1 && c.size() == 1 && c[0].node == node;
}

const Tensor* GraphIndex::Constant(const std::string& v) const {
  if (v.empty() || IsGraphInput(v)) return nullptr;
  auto it = g_.initializers.find(v);
  if (it != g_.initializers.end()) return &it->second;
  auto p = Producer(v);
  if (!p) return nullptr;
  const ir::Node& n = g_.nodes[*p];
  if (n.op_type != "Constant" || !IsDefaultDomain(n)) return nullptr;
  const ir::Attribute* a = n.FindAttr("value");
  return a && a->type == ir::Attribute::Type::kTensor ? &a->t : nullptr;
}

TypeMap InferTypes(const ir::Model& model) {
  const ir::Graph& g = model.graph;
  TypeMap types;
  std::unordered_map<std::string, const Tensor*> values;
  for (const auto& [n, t] : g.initializers) {
    types[n] = ir::TypeInfo::Tensor(t.dtype(), ir::DimsFromShape(t.shape()));
    values[n] = &t;
  }
  for (const auto& v : g.inputs) {
    if (g.IsInitializer(v.name)) continue;  // a feedable default: its shape may change
    types[v.name] = v.type;
  }
  for (const auto& [n, v] : g.value_info) types.emplace(n, v.type);  // hints; inference overrides
  auto order = g.TopologicalOrder();
  if (!order.ok()) return types;
  const auto& reg = ops::OpRegistry::Global();
  for (size_t idx : *order) {
    const ir::Node& n = g.nodes[idx];
    const int64_t opset = model.OpsetFor(n.domain);
    const ops::OpSchema* schema = reg.Find(n.domain, n.op_type, opset);
    if (!schema) continue;
    std::vector<const ir::TypeInfo*> in_types;
    std::vector<const Tensor*> in_values;
    for (const auto& in : n.inputs) {
      auto it = in.empty() ? types.end() : types.find(in);
      in_types.push_back(it == types.end() ? nullptr : &it->second);
      auto vit = in.empty() ? values.end() : values.find(in);
      in_values.push_back(vit == values.end() ? nullptr : vit->second);
    }
    ops::InferContext ctx(n, opset, in_types, in_values);
    if (!ops::InferNode(*schema, ctx).ok()) continue;
    for (size_t i = 0; i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty() && ctx.outputs()[i].kind != ir::TypeInfo::Kind::kUnknown) types[n.outputs[i]] = ctx.outputs()[i];
    if (n.op_type == "Constant" && IsDefaultDomain(n) && !n.outputs.empty()) {
      const ir::Attribute* a = n.FindAttr("value");
      if (a && a->type == ir::Attribute::Type::kTensor) values[n.outputs[0]] = &a->t;
    }
  }
  return types;
}

DType DTypeOf(const TypeMap& types, const std::string& v) {
  auto it = types.find(v);
  if (it == types.end() || it->second.kind != ir::TypeInfo::Kind::kTensor) return DType::kUndefined;
  return it->second.dtype;
}

std::optional<ir::Dims> DimsOf(const TypeMap& types, const std::string& v) {
  auto it = types.find(v);
  if (it == types.end() || it->second.kind != ir::TypeInfo::Kind::kTensor) return std::nullopt;
  return it->second.shape;
}

std::optional<Shape> StaticShape(const TypeMap& types, const std::string& v) {
  auto d = DimsOf(types, v);
  if (!d) return std::nullopt;
  Shape s;
  for (const auto& x : *d) {
    if (!x.known()) return std::nullopt;
    s.push_back(x.value);
  }
  return s;
}

bool ProvablySameShape(const TypeMap& types, const std::string& a, const std::string& b) {
  auto da = DimsOf(types, a), db = DimsOf(types, b);
  if (!da || !db || da->size() != db->size()) return false;
  for (size_t i = 0; i < da->size(); ++i) {
    const ir::Dim &x = (*da)[i], &y = (*db)[i];
    const bool same = x.known() ? y.known() && x.value == y.value : !y.known() && !x.param.empty() && x.param == y.param;
    if (!same) return false;
  }
  return true;
}

namespace {

void CollectNames(const ir::Graph& g, std::set<std::string>& used) {
  for (const auto& v : g.inputs) used.insert(v.name);
  for (const auto& v : g.outputs) used.insert(v.name);
  for (const auto& [n, t] : g.initializers) used.insert(n);
  for (const auto& [n, v] : g.value_info) used.insert(n);
  for (const auto& n : g.nodes) {
    used.insert(n.name);
    for (const auto& s : n.inputs) used.insert(s);
    for (const auto& s : n.outputs) used.insert(s);
    for (const auto& [an, a] : n.attrs) {
      if (a.g) CollectNames(*a.g, used);
      for (const auto& sg : a.graphs) CollectNames(*sg, used);
    }
  }
}

}  // namespace

NameSet::NameSet(const ir::Graph& g) { CollectNames(g, used_); }

std::string NameSet::Fresh(const std::string& base) {
  std::string name = base;
  for (int i = 1; used_.count(name); ++i) name = base + "_" + std::to_string(i);
  used_.insert(name);
  return name;
}

void EraseNodes(ir::Graph& g, const std::vector<bool>& dead) {
  std::vector<ir::Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (i >= dead.size() || !dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

void ReplaceUses(ir::Graph& g, const std::string& from, const std::string& to) {
  for (auto& n : g.nodes)
    for (auto& in : n.inputs)
      if (in == from) in = to;
}

bool Bypass(ir::Graph& g, const GraphIndex& index, size_t n, size_t in_slot, size_t out_slot) {
  const ir::Node& node = g.nodes[n];
  if (!node.HasInput(in_slot) || !node.HasOutput(out_slot)) return false;
  const std::string in = node.inputs[in_slot], out = node.outputs[out_slot];
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (k != out_slot && node.HasOutput(k) && index.UseCount(node.outputs[k]) > 0) return false;
  std::vector<bool> dead(g.nodes.size(), false);
  dead[n] = true;
  if (!index.IsGraphOutput(out) && !index.ReadBySubgraph(out)) {
    ReplaceUses(g, out, in);
    EraseNodes(g, dead);
    return true;
  }
  // The output's name is seen from outside the main graph's node list: the
  // input's producer takes that name instead.
  auto p = index.Producer(in);
  if (!p || index.IsGraphOutput(in) || index.IsGraphInput(in) || index.ReadBySubgraph(in) || g.IsInitializer(in)) return false;
  for (auto& o : g.nodes[*p].outputs)
    if (o == in) o = out;
  ReplaceUses(g, in, out);
  g.value_info.erase(in);
  EraseNodes(g, dead);
  return true;
}

Result<int> RewriteAll(ir::Graph& g, const RewriteFn& rewrite) {
  int count = 0;
  // Every rewrite removes or replaces nodes; the bound only guards against a
  // pair of rules that would undo each other forever.
  const int limit = 4 * static_cast<int>(g.nodes.size()) + 64;
  for (bool changed = true; changed;) {
    changed = false;
    GraphIndex index(g);
    for (size_t i = 0; i < g.nodes.size() && !changed; ++i) {
      KILN_ASSIGN_OR_RETURN(changed, rewrite(g, index, i));
    }
    if (changed && ++count > limit) return Internal("a rewrite did not reach a fixpoint after " + std::to_string(limit) + " steps");
  }
  return count;
}

std::optional<double> ScalarValue(const Tensor* t) {
  if (!t || !t->defined() || t->numel() != 1 || t->dtype() == DType::kString) return std::nullopt;
  return t->GetAsDouble(0);
}

std::optional<std::vector<int64_t>> IntValues(const Tensor* t) {
  if (!t || !t->defined() || !(DTypeIsSignedInt(t->dtype()) || DTypeIsUnsignedInt(t->dtype()))) return std::nullopt;
  // Read exactly: Slice ends are often INT64_MAX, which a double would round.
  const Tensor c = t->Contiguous();
  std::vector<int64_t> v(static_cast<size_t>(c.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (c.dtype()) {
      case DType::kInt64: v[i] = c.data<int64_t>()[i]; break;
      case DType::kInt32: v[i] = c.data<int32_t>()[i]; break;
      case DType::kInt16: v[i] = c.data<int16_t>()[i]; break;
      case DType::kInt8: v[i] = c.data<int8_t>()[i]; break;
      case DType::kUint8: v[i] = c.data<uint8_t>()[i]; break;
      case DType::kUint16: v[i] = c.data<uint16_t>()[i]; break;
      case DType::kUint32: v[i] = c.data<uint32_t>()[i]; break;
      default: v[i] = static_cast<int64_t>(c.data<uint64_t>()[i]); break;
    }
  }
  return v;
}

bool IsDefaultDomain(const ir::Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

}  // namespace kiln::passes
