#include "runtime/executor.h"

#include <algorithm>
#include <mutex>
#include <unordered_set>

#include "plan/layout.h"
#include "runtime/buffer_pool.h"

namespace kiln::runtime {

struct Executor::GraphPlan {
  std::vector<size_t> order;
  std::vector<const ops::OpSchema*> schemas;   // by node index
  std::vector<Kernel> kernels;                 // by node index
  std::vector<std::string> providers;          // by node index: who runs it
  std::vector<std::vector<std::string>> release_after;  // by position in order: values dead after it
  // The graph's initializers as values, made once: every run's scope reads
  // them here instead of copying them in.
  std::unordered_map<std::string, Datum> constants;
};

// The main graph's output types for one signature of feeds (their dtypes and
// shapes), inferred once and reused by every run with that signature. A node
// whose inputs all had fully known types (no input a feedable default, whose
// value may change between runs) and whose inference read no value it lacked
// keeps its output types; a run that hands it exactly those input dtypes and
// shapes reuses them instead of inferring again (inference depends only on
// input types and the constant values it read). Other nodes infer at run.
struct Executor::Specialization {
  struct NodeIo {
    bool usable = false;
    std::vector<DType> in_dtypes;
    std::vector<Shape> in_shapes;
    std::vector<ir::TypeInfo> outputs;
  };
  std::vector<NodeIo> nodes;  // by node index
};

// Values visible to a graph run: its own, then those of enclosing scopes.
class Executor::Scope {
 public:
  // `constants`: the graph's initializers (GraphPlan::constants), found
  // after this scope's own values (a feed overrides a feedable default).
  Scope(const Scope* parent, const std::unordered_map<std::string, Datum>* constants)
      : parent_(parent), constants_(constants) {}
  const Datum* Find(const std::string& n) const {
    for (const Scope* s = this; s; s = s->parent_) {
      auto it = s->values_.find(n);
      if (it != s->values_.end()) return &it->second;
      if (s->constants_) {
        auto ct = s->constants_->find(n);
        if (ct != s->constants_->end()) return &ct->second;
      }
    }
    return nullptr;
  }
  void Set(const std::string& n, Datum d) { values_[n] = std::move(d); }
  void Erase(const std::string& n) {
    values_.erase(n);
    converted_.erase(n);
  }
  // A value converted to another layout for one consumer, kept for the next
  // (keyed by value and OrderName).
  const Datum* FindConverted(const std::string& n, const std::string& order) const {
    auto it = converted_.find(n);
    if (it == converted_.end()) return nullptr;
    auto jt = it->second.find(order);
    return jt == it->second.end() ? nullptr : &jt->second;
  }
  void SetConverted(const std::string& n, const std::string& order, Datum d) { converted_[n][order] = std::move(d); }

 private:
  const Scope* parent_;
  const std::unordered_map<std::string, Datum>* constants_;
  std::unordered_map<std::string, Datum> values_;
  std::unordered_map<std::string, std::unordered_map<std::string, Datum>> converted_;
};

ir::TypeInfo TypeOfDatum(const Datum& d) {
  if (d.is_tensor()) return ir::TypeInfo::Tensor(d.tensor().dtype(), ir::DimsFromShape(d.tensor().shape()));
  ir::TypeInfo t;
  if (d.is_sequence()) {
    t.kind = ir::TypeInfo::Kind::kSequence;
    t.elem = std::make_shared<ir::TypeInfo>(ir::TypeInfo::Tensor(d.sequence_dtype()));
  } else if (d.is_none()) {
    t.kind = ir::TypeInfo::Kind::kOptional;
  }
  return t;
}

namespace {

class NodeContext final : public KernelContext {
 public:
  // `inferred` outlives the context (the run's inference or the plan's static types).
  NodeContext(const ir::Node& node, int64_t opset, std::vector<Datum> inputs, const std::vector<ir::TypeInfo>* inferred,
              std::function<Result<std::vector<Datum>>(const ir::Graph&, const std::vector<Datum>&)> run_sub, BufferPool* pool)
      : node_(node), opset_(opset), inputs_(std::move(inputs)), inferred_(*inferred),
        outputs_(node.outputs.size()), run_sub_(std::move(run_sub)), pool_(pool) {}

  const ir::Node& node() const override { return node_; }
  int64_t opset() const override { return opset_; }
  const Datum& input_datum(size_t i) const override {
    static const Datum kEmpty;
    return i < inputs_.size() ? inputs_[i] : kEmpty;
  }
  const Tensor& input(size_t i) const override {
    static const Tensor kUndefined;
    return i < inputs_.size() && inputs_[i].is_tensor() ? inputs_[i].tensor() : kUndefined;
  }
  bool input_exclusive(size_t i) const override {
    const Tensor& t = input(i);
    return t.defined() && t.storage() && t.storage().use_count() == 1;
  }
  const ir::TypeInfo& inferred_output(size_t i) const override {
    static const ir::TypeInfo kUnknown;
    return i < inferred_.size() ? inferred_[i] : kUnknown;
  }
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape) override {
    return Alloc(i, dtype, shape, kRowMajor, true);
  }
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape, const DimOrder& order) override {
    return Alloc(i, dtype, shape, order, false);
  }
  Result<Tensor> Alloc(size_t i, DType dtype, const Shape& shape, const DimOrder& order, bool zero) {
    if (i >= outputs_.size()) return node_.Error(StatusCode::kInternal, "output index " + std::to_string(i) + " out of range");
    auto t = pool_ ? pool_->Allocate(dtype, shape, order, zero) : AllocateInOrder(dtype, shape, order);
    if (!t.ok()) return t.status().WithContext(node_.Describe() + ": output " + std::to_string(i));
    outputs_[i] = Datum(*t);
    return t;
  }
  Status SetOutput(size_t i, Datum value) override {
    if (i >= outputs_.size()) return node_.Error(StatusCode::kInternal, "output index " + std::to_string(i) + " out of range");
    outputs_[i] = std::move(value);
    return Status::Ok();
  }
  Result<Tensor> AllocScratch(DType dtype, const Shape& shape, const DimOrder& order, bool zero) const override {
    auto t = pool_ ? pool_->Allocate(dtype, shape, order, zero) : AllocateInOrder(dtype, shape, order);
    if (!t.ok()) return t.status().WithContext(node_.Describe());
    return t;
  }
  Result<std::vector<Datum>> RunSubgraph(const ir::Graph& g, const std::vector<Datum>& inputs) override {
    return run_sub_(g, inputs);
  }
  std::vector<Datum>& outputs() { return outputs_; }
  const ir::Graph* graph() const override { return graph_; }
  void set_graph(const ir::Graph* g) { graph_ = g; }

 private:
  const ir::Graph* graph_ = nullptr;
  const ir::Node& node_;
  int64_t opset_;
  std::vector<Datum> inputs_;
  const std::vector<ir::TypeInfo>& inferred_;
  std::vector<Datum> outputs_;
  std::function<Result<std::vector<Datum>>(const ir::Graph&, const std::vector<Datum>&)> run_sub_;
  BufferPool* pool_;
};

// Checks a kernel's output against what inference predicted: a disagreement
// is a kiln bug in one of the two and must not pass silently.
Status CheckAgainstInferred(const ir::Node& node, size_t i, const Datum& d, const ir::TypeInfo& t) {
  if (t.kind != ir::TypeInfo::Kind::kTensor || !d.is_tensor()) return Status::Ok();
  const Tensor& x = d.tensor();
  if (t.dtype != DType::kUndefined && x.dtype() != t.dtype)
    return node.Error(StatusCode::kInternal, "output '" + node.outputs[i] + "' has dtype " + DTypeName(x.dtype()) +
                                                 ", shape inference said " + DTypeName(t.dtype));
  if (t.shape) {
    bool bad = static_cast<int>(t.shape->size()) != x.rank();
    for (size_t k = 0; !bad && k < t.shape->size(); ++k)
      bad = (*t.shape)[k].known() && (*t.shape)[k].value != x.shape()[k];
    if (bad)
      return node.Error(StatusCode::kInternal, "output '" + node.outputs[i] + "' has shape " + ShapeToString(x.shape()) +
                                                   ", shape inference said " + ir::DimsToString(*t.shape));
  }
  return Status::Ok();
}

// Whether t is a tensor type of known dtype and fully known shape (into *shape).
bool ConcreteTensor(const ir::TypeInfo& t, Shape* shape) {
  if (t.kind != ir::TypeInfo::Kind::kTensor || t.dtype == DType::kUndefined || !t.shape) return false;
  shape->clear();
  for (const ir::Dim& d : *t.shape) {
    if (!d.known()) return false;
    shape->push_back(d.value);
  }
  return true;
}

// Whether the run's inputs are exactly the load-time types io was inferred from.
bool MatchesStatic(const Executor::Specialization::NodeIo& io, const std::vector<Datum>& inputs) {
  if (!io.usable || io.in_shapes.size() != inputs.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (io.in_dtypes[i] == DType::kUndefined) continue;  // an omitted optional input
    if (!inputs[i].is_tensor()) return false;
    const Tensor& t = inputs[i].tensor();
    if (t.dtype() != io.in_dtypes[i] || t.shape() != io.in_shapes[i]) return false;
  }
  return true;
}

Status LookupSchema(const ops::OpSchema** schema, const ir::Node& n, int64_t opset) {
  const std::string dom = n.domain.empty() ? "ai.onnx" : n.domain;
  const auto& reg = ops::OpRegistry::Global();
  if (opset <= 0)
    return n.Error(StatusCode::kInvalidModel, "domain '" + dom + "' is not in the model's opset_import");
  *schema = reg.Find(n.domain, n.op_type, opset);
  if (!*schema) {
    const ops::OpSchema* any = reg.FindAny(n.domain, n.op_type);
    if (!any) return n.Error(StatusCode::kUnimplemented, "unknown op '" + n.op_type + "' in domain '" + dom + "' (opset " + std::to_string(opset) + ")");
    return n.Error(StatusCode::kUnimplemented, "op '" + n.op_type + "' of domain '" + dom + "' is not supported at opset " +
                                                   std::to_string(opset));
  }
  return Status::Ok();
}

}  // namespace

Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::Create(std::shared_ptr<const ir::Model> model, const Provider& provider,
                                                   uint64_t memory_limit) {
  std::unique_ptr<Executor> ex(new Executor());
  ex->model_ = std::move(model);
  ex->provider_ = provider;
  ex->pool_ = BufferPool::Create(size_t{1} << 30, memory_limit);
  KILN_RETURN_IF_ERROR(ex->PlanGraph(ex->model_->graph, {}));
  KILN_RETURN_IF_ERROR(ex->InferStatic());
  for (const auto& [g, plan] : ex->plans_) KILN_RETURN_IF_ERROR(ex->InstantiateKernels(*g, g == &ex->model_->graph));
  return ex;
}

const std::vector<std::string>& Executor::node_providers() const { return plans_.at(&model_->graph)->providers; }

const std::vector<size_t>& Executor::execution_order() const { return plans_.at(&model_->graph)->order; }

plan::LayoutPlan Executor::PlanLayouts() const {
  const GraphPlan& p = *plans_.at(&model_->graph);
  std::vector<const KernelLayouts*> layouts(p.kernels.size());
  for (size_t i = 0; i < p.kernels.size(); ++i) layouts[i] = &p.kernels[i].layouts;
  return plan::PlanLayouts(model_->graph, p.order, layouts, static_types_);
}

// Asks the provider, then its fallback, for each node's kernel. Only the main
// graph has load-time types and constants; subgraph kernels get none.
Status Executor::InstantiateKernels(const ir::Graph& g, bool main_graph) {
  GraphPlan& plan = *plans_.at(&g);
  plan.kernels.resize(g.nodes.size());
  plan.providers.resize(g.nodes.size());
  for (size_t idx : plan.order) {
    const ir::Node& n = g.nodes[idx];
    KernelInit init{n, model_->OpsetFor(n.domain), {}, {}, {}};
    for (const auto& o : n.outputs)
      init.graph_outputs.push_back(!o.empty() && std::any_of(g.outputs.begin(), g.outputs.end(), [&](const auto& v) { return v.name == o; }));
    if (main_graph) {
      for (const auto& in : n.inputs) {
        auto it = in.empty() ? static_types_.end() : static_types_.find(in);
        init.input_types.push_back(it == static_types_.end() ? nullptr : &it->second);
        auto c = g.initializers.find(in);
        bool constant = c != g.initializers.end();
        for (const auto& v : g.inputs) constant = constant && v.name != in;  // feedable defaults are not constant
        init.constant_inputs.push_back(constant ? &c->second : nullptr);
      }
    }
    const std::pair<const std::string*, const KernelRegistry*> chain[] = {
        {&provider_.name, provider_.kernels}, {&provider_.fallback_name, provider_.fallback_kernels}};
    for (const auto& [name, kernels] : chain) {
      if (!kernels) continue;
      KILN_ASSIGN_OR_RETURN(Kernel k, kernels->Instantiate(init));
      if (k) {
        plan.kernels[idx] = std::move(k);
        plan.providers[idx] = *name;
        break;
      }
    }
    if (!plan.kernels[idx]) {
      const std::string dom = n.domain.empty() ? "ai.onnx" : n.domain;
      return n.Error(StatusCode::kUnimplemented,
                     "provider '" + provider_.name + "' has no kernel for op '" + n.op_type + "' of domain '" + dom + "'");
    }
  }
  return Status::Ok();
}

Status Executor::PlanGraph(const ir::Graph& g, const std::vector<std::string>& outer_names) {
  auto plan = std::make_unique<GraphPlan>();
  KILN_ASSIGN_OR_RETURN(plan->order, g.TopologicalOrder(outer_names));
  plan->schemas.resize(g.nodes.size());
  // Names visible inside this graph's subgraphs.
  std::vector<std::string> visible = outer_names;
  for (const auto& v : g.inputs) visible.push_back(v.name);
  for (const auto& [n, t] : g.initializers) visible.push_back(n);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) visible.push_back(o);
  for (size_t idx : plan->order) {
    const ir::Node& n = g.nodes[idx];
    KILN_RETURN_IF_ERROR(LookupSchema(&plan->schemas[idx], n, model_->OpsetFor(n.domain)));
    for (const auto& [an, a] : n.attrs) {
      if (a.g) KILN_RETURN_IF_ERROR(PlanGraph(*a.g, visible));
      for (const auto& sg : a.graphs) KILN_RETURN_IF_ERROR(PlanGraph(*sg, visible));
    }
  }
  // Last use of each value, so the reference run frees what it no longer needs.
  std::unordered_set<std::string> keep;
  for (const auto& v : g.outputs) keep.insert(v.name);
  std::unordered_map<std::string, size_t> last_use;
  for (size_t pos = 0; pos < plan->order.size(); ++pos) {
    const ir::Node& n = g.nodes[plan->order[pos]];
    for (const auto& in : n.inputs) if (!in.empty()) last_use[in] = pos;
    for (const auto& in : ir::NodeOuterReferences(n)) last_use[in] = pos;
    for (const auto& o : n.outputs) if (!o.empty() && !last_use.count(o)) last_use[o] = pos;
  }
  plan->release_after.resize(plan->order.size());
  for (const auto& [name, pos] : last_use)
    if (!keep.count(name)) plan->release_after[pos].push_back(name);
  for (const auto& [name, t] : g.initializers) plan->constants.emplace(name, Datum(t));
  plans_[&g] = std::move(plan);
  return Status::Ok();
}

Status Executor::InferStatic() {
  const ir::Graph& g = model_->graph;
  for (const auto& [n, t] : g.initializers) static_types_[n] = ir::TypeInfo::Tensor(t.dtype(), ir::DimsFromShape(t.shape()));
  for (const auto& v : g.inputs) {
    if (g.IsInitializer(v.name)) continue;  // a feedable default: its shape may change, keep the declared type
    static_types_[v.name] = v.type;
  }
  for (const auto& [n, v] : g.value_info) static_types_.emplace(n, v.type);  // hints; inference overrides
  return InferMain(static_types_, nullptr);
}

// Inference over the main graph from `types` (its inputs' and initializers'
// types), adding each node's output types; with `spec`, records which nodes
// can reuse them (Specialization).
Status Executor::InferMain(std::unordered_map<std::string, ir::TypeInfo>& types, Specialization* spec) const {
  const ir::Graph& g = model_->graph;
  std::unordered_map<std::string, const Tensor*> values;
  for (const auto& [n, t] : g.initializers) values[n] = &t;
  std::unordered_set<std::string> feedable;
  for (const auto& v : g.inputs)
    if (g.IsInitializer(v.name)) feedable.insert(v.name);
  const GraphPlan& plan = *plans_.at(&g);
  if (spec) spec->nodes.resize(g.nodes.size());
  for (size_t idx : plan.order) {
    const ir::Node& n = g.nodes[idx];
    std::vector<const ir::TypeInfo*> in_types;
    std::vector<const Tensor*> vals;
    Specialization::NodeIo io;
    io.usable = spec != nullptr;
    for (const auto& [an, a] : n.attrs) io.usable = io.usable && !a.g && a.graphs.empty();
    for (const auto& in : n.inputs) {
      auto it = types.find(in);
      in_types.push_back(in.empty() || it == types.end() ? nullptr : &it->second);
      auto vit = values.find(in);
      vals.push_back(in.empty() || vit == values.end() ? nullptr : vit->second);
      if (!spec) continue;
      Shape shape;
      const bool known = !in.empty() && it != types.end() && ConcreteTensor(it->second, &shape);
      io.usable = io.usable && (in.empty() || (known && !feedable.count(in)));
      io.in_dtypes.push_back(known ? it->second.dtype : DType::kUndefined);
      io.in_shapes.push_back(std::move(shape));
    }
    ops::InferContext ctx(n, model_->OpsetFor(n.domain), in_types, vals);
    KILN_RETURN_IF_ERROR(ops::InferNode(*plan.schemas[idx], ctx));
    if (spec) {
      // Inference that asked for a value it had no value for may answer
      // differently once the value is known: infer again at each run.
      io.usable = io.usable && !ctx.read_unknown_value();
      for (const ir::TypeInfo& t : ctx.outputs()) {
        Shape unused;
        io.usable = io.usable && ConcreteTensor(t, &unused);
      }
      if (io.usable) {
        io.outputs = ctx.outputs();
        spec->nodes[idx] = std::move(io);
      }
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      if (ctx.outputs()[i].kind != ir::TypeInfo::Kind::kUnknown) types[n.outputs[i]] = ctx.outputs()[i];
    }
    // Constants are known values for downstream inference (Reshape shapes...).
    if (n.op_type == "Constant" && n.domain.empty() && !n.outputs.empty()) {
      const ir::Attribute* a = n.FindAttr("value");
      if (a && a->type == ir::Attribute::Type::kTensor) values[n.outputs[0]] = &a->t;
    }
  }
  return Status::Ok();
}

// The specialization for the feeds' signature, made on first use (a few are
// kept; beyond that the oldest go). nullptr when inference on the feeds
// fails: the run then infers node by node and reports the error there.
std::shared_ptr<const Executor::Specialization> Executor::SpecializationFor(const std::map<std::string, Datum>& feeds) const {
  SpecKey key;
  for (const auto& [name, d] : feeds) {
    if (!d.is_tensor()) return nullptr;
    key.push_back({name, d.tensor().dtype(), d.tensor().shape()});
  }
  {
    std::lock_guard<std::mutex> lock(spec_mu_);
    for (const auto& [k, s] : specs_)
      if (k == key) return s;
  }
  const ir::Graph& g = model_->graph;
  std::unordered_map<std::string, ir::TypeInfo> types;
  for (const auto& [n, t] : g.initializers) types[n] = ir::TypeInfo::Tensor(t.dtype(), ir::DimsFromShape(t.shape()));
  for (const auto& [n, d] : feeds) types[n] = TypeOfDatum(d);
  auto spec = std::make_shared<Specialization>();
  if (!InferMain(types, spec.get()).ok()) return nullptr;
  std::lock_guard<std::mutex> lock(spec_mu_);
  constexpr size_t kKept = 8;
  if (specs_.size() >= kKept) specs_.erase(specs_.begin());
  specs_.emplace_back(std::move(key), spec);
  return spec;
}

Result<std::vector<Datum>> Executor::Run(const std::map<std::string, Datum>& feeds, const std::vector<std::string>& outputs,
                                         const RunOptions& options) const {
  const ir::Graph& g = model_->graph;
  Scope scope(nullptr, &plans_.at(&g)->constants);
  for (const auto& [n, d] : feeds) scope.Set(n, d);
  const std::shared_ptr<const Specialization> spec = SpecializationFor(feeds);
  return RunGraph(g, scope, outputs, options.tap ? &options.tap : nullptr, spec.get());
}

// Hands input i of node n over in a layout its kernel accepts, converting
// (once per value and layout) when the stored one is not.
Result<Datum> Executor::InputFor(const ir::Node& n, size_t i, const Kernel& kernel, Scope& scope) const {
  const Datum* d = scope.Find(n.inputs[i]);
  if (!d) return n.Error(StatusCode::kInvalidArgument, "input '" + n.inputs[i] + "' has no value at run time");
  if (!d->is_tensor()) return *d;
  DimOrder target;
  if (plan::AcceptsTensor(kernel.layouts.input(i), d->tensor(), &target)) return *d;
  const std::string key = OrderName(target, d->tensor().rank());
  if (const Datum* c = scope.FindConverted(n.inputs[i], key)) return *c;
  auto t = CopyInOrder(d->tensor(), target);
  if (!t.ok()) return t.status().WithContext(n.Describe() + ": converting input '" + n.inputs[i] + "' to " + key);
  Datum converted(*std::move(t));
  scope.SetConverted(n.inputs[i], key, converted);
  return converted;
}

// From the pool when it can: a fresh buffer would fault in its pages on
// every run (an NCHW image converted for a channels-last Conv: 2 ms of page
// faults per run on 1x3x640x640, ten times the copy), and a graph output
// converted on return faulted in new heap pages for the first dozens of
// runs (seed_nchw: 0.15 ms against 0.02 in 6 of its first 10 runs).
Result<Tensor> Executor::CopyInOrder(const Tensor& src, const DimOrder& order) const {
  if (!pool_ || !src.defined() || src.dtype() == DType::kString) return ToOrder(src, order);
  KILN_ASSIGN_OR_RETURN(Tensor t, pool_->Allocate(src.dtype(), src.shape(), order, false));
  CopyToOrder(src, order, t);
  return t;
}

Result<std::vector<Datum>> Executor::RunGraph(const ir::Graph& g, Scope& scope, const std::vector<std::string>& outputs,
                                              const NodeTap* tap, const Specialization* spec) const {
  auto pit = plans_.find(&g);
  if (pit == plans_.end()) return Internal("graph '" + g.name + "' was not planned");
  const GraphPlan& plan = *pit->second;
  std::unordered_set<std::string> wanted(outputs.begin(), outputs.end());
  for (size_t pos = 0; pos < plan.order.size(); ++pos) {
    const ir::Node& n = g.nodes[plan.order[pos]];
    const size_t idx = plan.order[pos];
    std::vector<Datum> inputs(n.inputs.size());
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i].empty()) continue;
      KILN_ASSIGN_OR_RETURN(inputs[i], InputFor(n, i, plan.kernels[idx], scope));
    }
    // Values whose last reader is this node leave the scope now, so the
    // kernel holds the only reference to them (input_exclusive) and may
    // write over them; the rest of release_after goes after the kernel. Not
    // for a node with subgraphs: they look values up in this scope by name.
    bool has_subgraph = false;
    for (const auto& [an, a] : n.attrs) has_subgraph = has_subgraph || a.g || !a.graphs.empty();
    if (!has_subgraph)
      for (const auto& name : plan.release_after[pos])
        if (!wanted.count(name) && std::find(n.inputs.begin(), n.inputs.end(), name) != n.inputs.end()) scope.Erase(name);
    const int64_t opset = model_->OpsetFor(n.domain);
    // Output types: the load-time ones when the inputs are exactly what they
    // were inferred from, else inference on the run's inputs.
    std::vector<ir::TypeInfo> inferred;
    const std::vector<ir::TypeInfo>* out_types = &inferred;
    if (spec && MatchesStatic(spec->nodes[idx], inputs)) {
      out_types = &spec->nodes[idx].outputs;
    } else {
      std::vector<ir::TypeInfo> in_types(n.inputs.size());
      std::vector<const ir::TypeInfo*> tptr;
      std::vector<const Tensor*> vptr;
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (!n.inputs[i].empty()) in_types[i] = TypeOfDatum(inputs[i]);
        tptr.push_back(n.inputs[i].empty() ? nullptr : &in_types[i]);
        vptr.push_back(inputs[i].is_tensor() ? &inputs[i].tensor() : nullptr);
      }
      ops::InferContext ictx(n, opset, tptr, vptr);
      KILN_RETURN_IF_ERROR(ops::InferNode(*plan.schemas[idx], ictx));
      inferred = std::move(ictx.outputs());
    }
    NodeContext ctx(n, opset, std::move(inputs), out_types,
                    [&](const ir::Graph& sub, const std::vector<Datum>& sub_inputs) -> Result<std::vector<Datum>> {
                      auto sp = plans_.find(&sub);  // an unplanned graph: RunGraph says so
                      Scope inner(&scope, sp == plans_.end() ? nullptr : &sp->second->constants);
                      if (sub_inputs.size() > sub.inputs.size())
                        return n.Invalid("subgraph '" + sub.name + "' takes " + std::to_string(sub.inputs.size()) +
                                         " inputs, got " + std::to_string(sub_inputs.size()));
                      for (size_t i = 0; i < sub_inputs.size(); ++i) inner.Set(sub.inputs[i].name, sub_inputs[i]);
                      std::vector<std::string> outs;
                      for (const auto& v : sub.outputs) outs.push_back(v.name);
                      return RunGraph(sub, inner, outs, nullptr, nullptr);
                    },
                    pool_.get());
    ctx.set_graph(&g);
    Status s = plan.kernels[idx].fn(ctx);
    if (!s.ok()) {
      if (s.message().find(n.Describe()) == std::string::npos) s = s.WithContext(n.Describe());
      return s;
    }
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      Datum& d = ctx.outputs()[i];
      if (d.empty()) return n.Error(StatusCode::kInternal, "kernel produced no value for output '" + n.outputs[i] + "'");
      KILN_RETURN_IF_ERROR(CheckAgainstInferred(n, i, d, ctx.inferred_output(i)));
    }
    if (tap) (*tap)(n, ctx.outputs());
    for (size_t i = 0; i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty()) scope.Set(n.outputs[i], std::move(ctx.outputs()[i]));
    for (const auto& name : plan.release_after[pos])
      if (!wanted.count(name)) scope.Erase(name);
  }
  std::vector<Datum> result;
  for (const auto& name : outputs) {
    const Datum* d = scope.Find(name);
    if (!d) return InvalidArgument("graph '" + g.name + "' has no value named '" + name + "'");
    // Graph results leave in the canonical layout (callers and the kernels
    // of If/Loop/Scan index them linearly).
    if (!d->is_tensor() || !d->tensor().defined() || d->tensor().is_contiguous()) {
      result.push_back(*d);
      continue;
    }
    auto t = CopyInOrder(d->tensor(), kRowMajor);
    if (!t.ok()) return t.status().WithContext("graph '" + g.name + "': returning output '" + name + "' in row-major order");
    result.push_back(Datum(*std::move(t)));
  }
  return result;
}

}  // namespace kiln::runtime
