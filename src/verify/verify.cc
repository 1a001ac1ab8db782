#include "verify/verify.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "passes/pipeline.h"
#include "plan/layout.h"
#include "runtime/executor.h"
#include "runtime/provider.h"
#include "runtime/session_internal.h"
#include "support/layout.h"

namespace kiln::verify {

bool NodeCheck::tapped_ok() const {
  for (const ValueCheck& v : outputs)
    if (!v.ok()) return false;
  return true;
}

bool NodeCheck::alone_ok() const {
  for (const ValueCheck& v : alone_outputs)
    if (!v.ok()) return false;
  return true;
}

bool PerNodeReport::ok() const {
  if (mismatched != 0 || first_divergence >= 0) return false;
  for (const ValueCheck& v : folded)
    if (!v.ok()) return false;
  return true;
}

bool VerifyResult::outputs_ok() const {
  if (!provider_error.empty()) return false;
  for (const ValueCheck& v : outputs)
    if (!v.ok()) return false;
  return true;
}

bool VerifyResult::ok() const { return outputs_ok() && (!per_node || nodes.ok()); }

ValueCheck CheckValue(const std::string& name, const Tensor& ref, const Tensor& test, const Tolerance& tol) {
  ValueCheck v;
  v.name = name;
  v.result = Compare(ref, test, tol);
  if (!v.result.ok && ref.defined() && test.defined() && ref.numel() == test.numel()) {
    v.diagnosis = Diagnose(ref, test, tol);
    v.has_diagnosis = true;
  }
  return v;
}

// ---- deep copy ------------------------------------------------------------------

namespace {

std::shared_ptr<ir::Graph> CopyGraphPtr(const std::shared_ptr<ir::Graph>& g);

void DeepCopyAttrs(std::map<std::string, ir::Attribute>& attrs) {
  for (auto& [n, a] : attrs) {
    if (a.t.defined()) a.t = a.t.Clone();
    for (Tensor& t : a.tensors) t = t.Clone();
    if (a.g) a.g = CopyGraphPtr(a.g);
    for (auto& sg : a.graphs) sg = CopyGraphPtr(sg);
  }
}

void DeepCopyGraph(ir::Graph& g) {
  for (auto& [n, t] : g.initializers) t = t.Clone();
  for (ir::Node& node : g.nodes) DeepCopyAttrs(node.attrs);
}

std::shared_ptr<ir::Graph> CopyGraphPtr(const std::shared_ptr<ir::Graph>& g) {
  if (!g) return g;
  auto copy = std::make_shared<ir::Graph>(*g);
  DeepCopyGraph(*copy);
  return copy;
}

}  // namespace

ir::Model DeepCopy(const ir::Model& model) {
  ir::Model m = model;
  DeepCopyGraph(m.graph);
  for (ir::Function& f : m.functions)
    for (ir::Node& node : f.nodes) DeepCopyAttrs(node.attrs);
  return m;
}

// ---- position probe -------------------------------------------------------------

int64_t PositionScale(int64_t numel) {
  int64_t s = 1;
  while (s < numel) s *= 2;
  return s;
}

Result<Tensor> PositionTensor(DType dtype, const Shape& shape) {
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64 && dtype != DType::kFloat16 && dtype != DType::kBFloat16)
    return InvalidArgument(std::string("position inputs are float tensors, not ") + DTypeName(dtype));
  KILN_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, shape));
  const int64_t n = t.numel();
  const double scale = static_cast<double>(PositionScale(n));
  for (int64_t k = 0; k < n; ++k) t.SetFromDouble(k, static_cast<double>(k) / scale);
  return t;
}

// ---- the runs -------------------------------------------------------------------

namespace {

std::vector<std::string> OutputNames(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const ir::Value& v : g.outputs) names.push_back(v.name);
  return names;
}

Result<std::unique_ptr<Session>> MakeSession(const ir::Model& model, const std::string& provider, const std::string& level,
                                             int threads, const std::string& what) {
  SessionOptions o;
  o.provider = provider;
  o.opt_level = level;
  o.threads = threads;
  auto s = CreateSessionFromModel(DeepCopy(model), o);
  if (!s.ok()) return s.status().WithContext(what);
  return s;
}

// A tapped value: the canonical copy and the layout the plan held it in.
struct Held {
  Datum value;          // tensors cloned to row-major
  DimOrder order;       // as held (row-major for non-tensors)
  bool dense = true;    // false: a strided view with gaps (fed row-major alone)
};

Held HoldValue(const Datum& d) {
  Held h;
  if (d.is_tensor() && d.tensor().defined()) {
    const Tensor& t = d.tensor();
    h.dense = FindOrder(t, &h.order);
    if (!h.dense) h.order = kRowMajor;
    h.value = Datum(t.Clone());
  } else {
    h.value = d;
  }
  return h;
}

std::string LayoutOf(const DimOrder& order, const Datum& d) {
  if (!d.is_tensor() || !d.tensor().defined()) return "";
  return OrderName(order, d.tensor().rank());
}

Tolerance TolFor(const std::string& name, const Tensor& ref, const VerifyOptions& o) {
  return ResolveTolerance(name, ref.dtype(), o.tolerances);
}

bool IsFloat(DType d) { return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 || d == DType::kBFloat16; }

// `node_value`: a tapped or alone value, compared under the value-scale rule
// (VerifyOptions::scale_node_tolerance) unless --tol names it.
// `verdict_only`: metrics only when the value fails (alone runs).
ValueCheck CheckDatum(const std::string& name, const Datum* ref, const Datum& test, const VerifyOptions& o, bool node_value = false,
                      bool verdict_only = false) {
  if (!ref) {
    ValueCheck v;
    v.name = name;
    v.has_reference = false;
    return v;
  }
  if (!ref->is_tensor() || !test.is_tensor()) {
    ValueCheck v;
    v.name = name;
    v.is_tensor = false;
    return v;
  }
  const Tensor& r = ref->tensor();
  Tolerance tol = TolFor(name, r, o);
  if (node_value && o.scale_node_tolerance && IsFloat(r.dtype()) && !o.tolerances.per_output.count(name)) {
    double max_abs = 0;
    for (double x : FlatValues(r))
      if (std::isfinite(x)) max_abs = std::max(max_abs, std::fabs(x));
    tol.atol = std::max(tol.atol, tol.rtol * max_abs);
  }
  const Tensor t = test.tensor().Contiguous();
  if (verdict_only && IsFloat(r.dtype()) && r.dtype() == t.dtype() && r.shape() == t.shape()) {
    // The full metrics sort both sides (the sorted-values figure): skip them
    // when every element passes and only the verdict is wanted.
    const std::vector<double> a = FlatValues(r), b = FlatValues(t);
    bool all = true;
    for (size_t i = 0; all && i < a.size(); ++i) all = WithinTolerance(a[i], b[i], tol);
    if (all) {
      ValueCheck v;
      v.name = name;
      v.result.ok = true;
      v.result.ref_dtype = v.result.test_dtype = r.dtype();
      v.result.ref_shape = v.result.test_shape = r.shape();
      v.result.tol = tol;
      return v;
    }
  }
  return CheckValue(name, r, t, tol);
}

// ---- per node -------------------------------------------------------------------

struct Runs {
  const ir::Model* original = nullptr;
  const Session* provider = nullptr;
  std::unordered_map<std::string, Datum> ref;    // every value the reference computed, fed or held as initializer
  std::unordered_map<std::string, Held> plan;    // every value the plan computed
  std::vector<size_t> plan_order;                // tapped node indices, execution order
  std::map<std::string, Datum> feeds;
};

// The one-node model of plan node n: its constant inputs (plan initializers
// that cannot be fed) stay initializers, every other input (and the outer
// names its subgraphs read) becomes a graph input fed the reference's value,
// laid out as the plan held it (the plan's own value when the reference has
// none; `notes` says so).
Status BuildAlone(const Runs& r, const ir::Node& n, ir::Model* out, std::map<std::string, Datum>* feeds,
                  std::map<std::string, Datum>* canonical_feeds, std::vector<std::string>* notes) {
  const ir::Model& pm = r.provider->impl().executor->model();
  const ir::Graph& pg = pm.graph;
  std::set<std::string> plan_inputs;
  for (const ir::Value& v : pg.inputs) plan_inputs.insert(v.name);
  ir::Model m;
  m.ir_version = pm.ir_version;
  m.opsets = pm.opsets;
  m.graph.name = "alone_" + n.name;
  m.graph.nodes.push_back(n);
  std::vector<std::string> names;
  for (const std::string& in : n.inputs)
    if (!in.empty()) names.push_back(in);
  for (const std::string& in : ir::NodeOuterReferences(n)) names.push_back(in);
  std::set<std::string> seen;
  for (const std::string& in : names) {
    if (!seen.insert(in).second) continue;
    auto init = pg.initializers.find(in);
    if (init != pg.initializers.end() && !plan_inputs.count(in)) {
      m.graph.initializers[in] = init->second;
      continue;
    }
    Datum value;
    auto rit = r.ref.find(in);
    auto pit = r.plan.find(in);
    if (rit != r.ref.end()) {
      value = rit->second;
    } else if (pit != r.plan.end()) {
      value = pit->second.value;
      notes->push_back("input '" + in + "' has no reference value: fed the plan's");
    } else if (init != pg.initializers.end()) {
      value = Datum(init->second);
    } else {
      return NotFound("input '" + in + "' has no value in either run");
    }
    Datum fed = value;
    if (fed.is_tensor() && pit != r.plan.end()) fed = Datum(ToOrder(fed.tensor(), pit->second.order));
    m.graph.inputs.push_back(ir::Value{in, runtime::TypeOfDatum(value)});
    (*feeds)[in] = fed;
    (*canonical_feeds)[in] = value;
  }
  for (const std::string& o : n.outputs)
    if (!o.empty()) m.graph.outputs.push_back(ir::Value{o, {}});
  *out = std::move(m);
  return Status::Ok();
}

// Runs a one-node model on `provider` (opt level disable). `who` gets the
// provider that ran the node.
Result<std::vector<Datum>> RunAlone(const ir::Model& m, const std::map<std::string, Datum>& feeds, const std::string& provider,
                                    int threads, std::string* who) {
  KILN_ASSIGN_OR_RETURN(auto s, MakeSession(m, provider, "disable", threads, "the node alone"));
  if (who && !s->impl().executor->node_providers().empty()) *who = s->impl().executor->node_providers()[0];
  return s->RunDatums(feeds);
}

void CheckAlone(const Runs& r, const ir::Node& n, const VerifyOptions& o, NodeCheck* nc) {
  ir::Model m;
  std::map<std::string, Datum> feeds, canonical;
  std::vector<std::string> notes;
  Status st = BuildAlone(r, n, &m, &feeds, &canonical, &notes);
  if (!st.ok()) {
    nc->alone_error = st.ToString();
    return;
  }
  auto outs = RunAlone(m, feeds, o.provider, o.threads, &nc->alone_provider);
  if (!outs.ok()) {
    nc->alone_error = outs.status().ToString();
    return;
  }
  nc->alone_ran = true;
  std::vector<std::string> names = OutputNames(m.graph);
  bool need_reference = false;
  for (size_t i = 0; i < names.size() && i < outs->size(); ++i) {
    auto it = r.ref.find(names[i]);
    nc->alone_outputs.push_back(CheckDatum(names[i], it == r.ref.end() ? nullptr : &it->second, (*outs)[i], o, true, true));
    need_reference = need_reference || it == r.ref.end();
  }
  nc->introduces_error = !nc->alone_ok();
  if (!nc->introduces_error && !need_reference) return;
  // The oracle on the same one-node model: tells the kernel from the graph,
  // and checks the outputs the original graph has no name for.
  auto ref_outs = RunAlone(m, canonical, "reference", 0, nullptr);
  if (!ref_outs.ok()) {
    if (!notes.empty()) nc->alone_error = notes[0];
    return;
  }
  nc->reference_alone_ran = true;
  nc->reference_alone_ok = true;
  for (size_t i = 0; i < names.size() && i < ref_outs->size() && i < outs->size(); ++i) {
    auto it = r.ref.find(names[i]);
    if (it == r.ref.end()) {
      // No original value: the reference provider alone is the baseline.
      nc->alone_outputs[i] = CheckDatum(names[i], &(*ref_outs)[i], (*outs)[i], o, true);
      continue;
    }
    nc->reference_alone_ok = nc->reference_alone_ok && CheckDatum(names[i], &it->second, (*ref_outs)[i], o, true, true).ok();
  }
  nc->introduces_error = !nc->alone_ok();
  if (nc->introduces_error) nc->blame = nc->reference_alone_ok ? "kernel" : "graph";
}

// Where each original value the plan does not compute went.
void FindAbsorbed(const Runs& r, const VerifyOptions& o, PerNodeReport* rep) {
  const ir::Graph& og = r.original->graph;
  const ir::Graph& pg = r.provider->impl().executor->model().graph;
  std::unordered_map<std::string, int> plan_producer;  // value -> index into rep->nodes
  for (size_t i = 0; i < rep->nodes.size(); ++i)
    for (const std::string& out : pg.nodes[rep->nodes[i].index].outputs)
      if (!out.empty()) plan_producer[out] = static_cast<int>(i);
  std::unordered_map<std::string, std::vector<size_t>> consumers;  // original value -> original nodes
  for (size_t i = 0; i < og.nodes.size(); ++i) {
    for (const std::string& in : og.nodes[i].inputs)
      if (!in.empty()) consumers[in].push_back(i);
    for (const std::string& in : ir::NodeOuterReferences(og.nodes[i])) consumers[in].push_back(i);
  }
  auto order = og.TopologicalOrder();
  if (!order.ok()) return;
  for (size_t idx : *order) {
    const ir::Node& n = og.nodes[idx];
    for (const std::string& v : n.outputs) {
      if (v.empty() || plan_producer.count(v)) continue;
      AbsorbedValue a;
      a.name = v;
      a.producer = n.name;
      a.producer_op = n.op_type;
      auto init = pg.initializers.find(v);
      if (init != pg.initializers.end()) {
        a.how = AbsorbedValue::How::kFolded;
        a.text = "folded to a constant";
        auto rit = r.ref.find(v);
        if (rit != r.ref.end() && rit->second.is_tensor())
          rep->folded.push_back(CheckValue(v, rit->second.tensor(), init->second, TolFor(v, rit->second.tensor(), o)));
        rep->absorbed.push_back(std::move(a));
        continue;
      }
      if ((n.op_type == "Identity" || n.op_type == "Dropout") && n.domain.empty() && n.HasInput(0)) {
        a.how = AbsorbedValue::How::kRemoved;
        a.text = "removed with its " + n.op_type + " node (the plan reads '" + n.inputs[0] + "')";
        rep->absorbed.push_back(std::move(a));
        continue;
      }
      // The nearest plan value downstream: its producer absorbed this one.
      std::deque<std::string> queue = {v};
      std::unordered_set<std::string> visited = {v};
      while (!queue.empty() && a.into < 0) {
        const std::string cur = queue.front();
        queue.pop_front();
        auto cit = consumers.find(cur);
        if (cit == consumers.end()) continue;
        for (size_t ci : cit->second) {
          for (const std::string& out : og.nodes[ci].outputs) {
            if (out.empty() || !visited.insert(out).second) continue;
            auto pit = plan_producer.find(out);
            if (pit != plan_producer.end()) {
              if (a.into < 0 || pit->second < a.into) a.into = pit->second;
            } else {
              queue.push_back(out);
            }
          }
        }
      }
      if (a.into >= 0) {
        NodeCheck& into = rep->nodes[static_cast<size_t>(a.into)];
        a.how = AbsorbedValue::How::kFused;
        a.into_name = into.name;
        a.into_op = into.op_type;
        // A Constant's value went into the node's (folded) weights.
        a.text = std::string(n.op_type == "Constant" && n.domain.empty() ? "constant folded into node '" : "fused into node '") +
                 into.name + "' (" + into.op_type + ")";
        into.absorbed.push_back(v);
      } else {
        a.how = AbsorbedValue::How::kRemoved;
        a.text = "removed (no output needs it)";
      }
      rep->absorbed.push_back(std::move(a));
    }
  }
}

std::string FirstLayout(const NodeCheck& nc) {
  for (const std::string& l : nc.input_layouts)
    if (!l.empty()) return l;
  return "";
}

std::string Summarize(const PerNodeReport& rep) {
  if (rep.first_divergence >= 0) {
    const NodeCheck& nc = rep.nodes[static_cast<size_t>(rep.first_divergence)];
    std::string s = "first divergence: node '" + nc.name + "' (" + nc.op_type + ") on " + nc.provider;
    const std::string layout = FirstLayout(nc);
    if (!layout.empty()) s += ", input layout " + layout;
    for (const ValueCheck& v : nc.alone_outputs) {
      if (v.ok()) continue;
      s += ", output";
      if (nc.alone_outputs.size() > 1) s += " '" + v.name + "'";
      s += " " + (v.has_diagnosis ? v.diagnosis.text : v.result.reason);
      break;
    }
    if (nc.blame == "kernel")
      s += "; the reference provider agrees with the original on the same inputs: the error is the " + nc.provider + " kernel's";
    else if (nc.blame == "graph")
      s += "; the reference provider computes the same on this node: the optimized graph is wrong here";
    return s;
  }
  if (rep.first_mismatch >= 0) {
    const NodeCheck& nc = rep.nodes[static_cast<size_t>(rep.first_mismatch)];
    std::string s = "no node introduces an error alone; the first value that disagrees is";
    for (const ValueCheck& v : nc.outputs) {
      if (v.ok()) continue;
      s += " '" + v.name + "' of node '" + nc.name + "' (" + nc.op_type + ")";
      if (v.result.has_metrics) s += ", max |diff| " + FormatNumber(v.result.metrics.max_abs_diff);
      break;
    }
    return s + ": errors that accumulate over nodes within their tolerance";
  }
  for (const ValueCheck& v : rep.folded)
    if (!v.ok()) return "folded constant '" + v.name + "' disagrees with the reference's value: " + v.result.reason;
  return "";
}

Status PerNode(Runs& r, const VerifyOptions& o, PerNodeReport* rep) {
  const runtime::Executor& ex = *r.provider->impl().executor;
  const ir::Graph& pg = ex.model().graph;
  const plan::LayoutPlan lp = ex.PlanLayouts();
  std::map<std::pair<size_t, size_t>, const plan::Conversion*> conv;
  for (const plan::Conversion& c : lp.conversions) conv[{c.node, c.input}] = &c;
  for (size_t idx : r.plan_order) {
    const ir::Node& n = pg.nodes[idx];
    NodeCheck nc;
    nc.index = idx;
    nc.name = n.name;
    nc.op_type = n.op_type;
    nc.domain = n.domain;
    nc.provider = idx < ex.node_providers().size() ? ex.node_providers()[idx] : "";
    nc.inputs = n.inputs;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      std::string layout;
      if (!n.inputs[i].empty()) {
        auto c = conv.find({idx, i});
        auto pit = r.plan.find(n.inputs[i]);
        const Datum* d = pit != r.plan.end() ? &pit->second.value : nullptr;
        auto rit = r.ref.find(n.inputs[i]);
        if (!d && rit != r.ref.end()) d = &rit->second;
        auto init = pg.initializers.find(n.inputs[i]);
        Datum held_init;
        if (!d && init != pg.initializers.end()) {
          held_init = Datum(init->second);
          d = &held_init;
        }
        if (d && d->is_tensor() && d->tensor().defined()) {
          const int rank = d->tensor().rank();
          if (c != conv.end()) layout = OrderName(c->second->to, rank);
          else layout = OrderName(pit != r.plan.end() ? pit->second.order : kRowMajor, rank);
        }
      }
      nc.input_layouts.push_back(layout);
    }
    for (const std::string& out : n.outputs) {
      if (out.empty()) continue;
      auto pit = r.plan.find(out);
      if (pit == r.plan.end()) continue;
      auto rit = r.ref.find(out);
      ValueCheck v = CheckDatum(out, rit == r.ref.end() ? nullptr : &rit->second, pit->second.value, o, true);
      v.layout = LayoutOf(pit->second.order, pit->second.value);
      if (v.has_reference && v.is_tensor) {
        ++rep->compared;
        if (!v.ok()) ++rep->mismatched;
      }
      nc.outputs.push_back(std::move(v));
    }
    rep->nodes.push_back(std::move(nc));
  }
  for (size_t i = 0; i < rep->nodes.size(); ++i) {
    NodeCheck& nc = rep->nodes[i];
    if (rep->first_mismatch < 0 && !nc.tapped_ok()) rep->first_mismatch = static_cast<int>(i);
    CheckAlone(r, pg.nodes[nc.index], o, &nc);
    if (rep->first_divergence < 0 && nc.introduces_error) rep->first_divergence = static_cast<int>(i);
  }
  FindAbsorbed(r, o, rep);
  rep->summary = Summarize(*rep);
  return Status::Ok();
}

}  // namespace

Result<VerifyResult> Verify(const ir::Model& model, const std::map<std::string, Datum>& feeds, const VerifyOptions& options) {
  VerifyResult res;
  res.provider = options.provider;
  res.opt_level = options.opt_level;
  res.per_node = options.per_node;
  KILN_ASSIGN_OR_RETURN(auto ref_session, MakeSession(model, "reference", "disable", 0, "reference session"));
  KILN_ASSIGN_OR_RETURN(auto session, MakeSession(model, options.provider, options.opt_level, options.threads,
                                                  "provider '" + options.provider + "' session"));
  res.pass_notes = session->impl().pass_report.notes;
  const std::vector<std::string> names = OutputNames(model.graph);

  Runs r;
  r.original = &model;
  r.provider = session.get();
  r.feeds = feeds;
  std::vector<Datum> ref_outs;
  if (options.per_node) {
    for (const auto& [n, t] : ref_session->impl().model->graph.initializers) r.ref[n] = Datum(t);
    for (const auto& [n, d] : feeds) r.ref[n] = d;
    runtime::NodeTap ref_tap = [&](const ir::Node& n, const std::vector<Datum>& outs) {
      for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i)
        if (!n.outputs[i].empty()) r.ref[n.outputs[i]] = HoldValue(outs[i]).value;
    };
    KILN_ASSIGN_OR_RETURN(ref_outs, RunWithTap(*ref_session, feeds, names, ref_tap));
  } else {
    auto outs = ref_session->RunDatums(feeds, names);
    if (!outs.ok()) return outs.status().WithContext("reference run");
    ref_outs = std::move(*outs);
  }

  const runtime::Executor& ex = *session->impl().executor;
  const ir::Node* first_node = ex.model().graph.nodes.data();
  const plan::LayoutPlan layouts = options.per_node ? ex.PlanLayouts() : plan::LayoutPlan{};
  runtime::NodeTap tap = [&](const ir::Node& n, const std::vector<Datum>& outs) {
    r.plan_order.push_back(static_cast<size_t>(&n - first_node));
    for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      r.plan[n.outputs[i]] = HoldValue(outs[i]);
      // IsDenseInOrder ignores size-1 dims: a value dense in both orders never drifts.
      auto planned = layouts.orders.find(n.outputs[i]);
      if (planned == layouts.orders.end() || !outs[i].is_tensor() || !outs[i].tensor().defined()) continue;
      const Tensor& t = outs[i].tensor();
      DimOrder ran;
      if (!IsDenseInOrder(t, planned->second))
        res.layout_drift.push_back(n.outputs[i] + " (node '" + n.name + "'): planned " + OrderName(planned->second, t.rank()) + ", ran " +
                                   (FindOrder(t, &ran) ? OrderName(ran, t.rank()) : std::string("strided")));
    }
  };
  auto outs = options.per_node ? RunWithTap(*session, feeds, names, tap) : session->RunDatums(feeds, names);
  if (!outs.ok()) {
    res.provider_error = outs.status().ToString();
    return res;
  }
  for (size_t i = 0; i < names.size() && i < outs->size() && i < ref_outs.size(); ++i)
    res.outputs.push_back(CheckDatum(names[i], &ref_outs[i], (*outs)[i], options));
  if (options.per_node) {
    for (const auto& [n, d] : feeds) r.plan.emplace(n, HoldValue(d));
    KILN_RETURN_IF_ERROR(PerNode(r, options, &res.nodes));
  }
  return res;
}

// ---- sweep ----------------------------------------------------------------------

namespace {

void FillRow(const std::vector<std::string>& names, const std::vector<Datum>& ref, const Result<std::vector<Datum>>& outs,
             const VerifyOptions& o, SweepRow* row) {
  if (!outs.ok()) {
    row->error = outs.status().ToString();
    return;
  }
  row->ran = true;
  row->ok = true;
  for (size_t i = 0; i < names.size() && i < outs->size() && i < ref.size(); ++i) {
    ValueCheck v = CheckDatum(names[i], &ref[i], (*outs)[i], o);
    row->ok = row->ok && v.ok();
    const double d = v.result.has_metrics ? v.result.metrics.max_abs_diff : (v.ok() ? 0.0 : INFINITY);
    if (row->worst_output.empty() || d > row->max_abs_diff) {
      row->max_abs_diff = d;
      row->worst_output = names[i];
    }
  }
}

// The model optimized at `level` as `provider` would, run on `provider` with
// the node named `forced` (if any) declined so it falls back to the
// provider's fallback (the reference provider for cpu).
Result<std::vector<Datum>> RunVariant(const ir::Model& model, const std::map<std::string, Datum>& feeds,
                                      const runtime::Provider& provider, passes::OptLevel level, bool optimize,
                                      const std::string& forced, int threads, std::string* forced_ran_on,
                                      const std::set<std::string>& disabled_passes = {}) {
  ir::Model m = DeepCopy(model);
  if (optimize) KILN_RETURN_IF_ERROR(passes::Optimize(m, level, nullptr, disabled_passes));
  runtime::Provider p = provider;
  std::unique_ptr<runtime::KernelRegistry> registry;
  size_t forced_index = 0;
  bool found = forced.empty();
  for (size_t i = 0; !found && i < m.graph.nodes.size(); ++i) {
    if (m.graph.nodes[i].name != forced) continue;
    const ir::Node& n = m.graph.nodes[i];
    found = true;
    forced_index = i;
    registry = std::make_unique<runtime::KernelRegistry>(*provider.kernels);
    const runtime::KernelRegistry* original = provider.kernels;
    registry->RegisterFactory(n.domain, n.op_type, [original, forced](const runtime::KernelInit& init) -> Result<runtime::Kernel> {
      if (init.node.name == forced) return runtime::Kernel();
      return original->Instantiate(init);
    });
    p.kernels = registry.get();
  }
  if (!found) return NotFound("no node named '" + forced + "' in the graph optimized at that level");
  const std::vector<std::string> names = OutputNames(m.graph);
  auto shared = std::make_shared<const ir::Model>(std::move(m));
  KILN_ASSIGN_OR_RETURN(auto ex, runtime::Executor::Create(shared, p));
  if (!forced.empty() && forced_ran_on) *forced_ran_on = ex->node_providers()[forced_index];
  if (threads > 0) omp_set_num_threads(threads);
  return ex->Run(feeds, names);
}

}  // namespace

Result<SweepResult> Sweep(const ir::Model& model, const std::map<std::string, Datum>& feeds, const VerifyOptions& options,
                          std::vector<std::string> suspects) {
  KILN_ASSIGN_OR_RETURN(passes::OptLevel user_level, passes::ParseOptLevel(options.opt_level));
  KILN_ASSIGN_OR_RETURN(runtime::Provider provider, runtime::FindProvider(options.provider));
  KILN_ASSIGN_OR_RETURN(auto ref_session, MakeSession(model, "reference", "disable", 0, "reference session"));
  const std::vector<std::string> names = OutputNames(model.graph);
  KILN_ASSIGN_OR_RETURN(std::vector<Datum> ref, ref_session->RunDatums(feeds, names));
  SweepResult res;
  const passes::OptLevel levels[] = {passes::OptLevel::kDisable, passes::OptLevel::kBasic, passes::OptLevel::kExtended,
                                     passes::OptLevel::kAll};
  for (passes::OptLevel level : levels) {
    SweepRow row;
    row.what = std::string("opt level ") + passes::OptLevelName(level) + " on " + options.provider;
    FillRow(names, ref, RunVariant(model, feeds, provider, level, provider.optimizes, "", options.threads, nullptr), options, &row);
    res.levels.push_back(std::move(row));
  }
  // Each pass of the user's level disabled in turn.
  if (provider.optimizes)
    for (const std::string& pass : passes::PassNames(user_level)) {
      SweepRow row;
      row.what = std::string("opt level ") + passes::OptLevelName(user_level) + " without " + pass;
      FillRow(names, ref, RunVariant(model, feeds, provider, user_level, true, "", options.threads, nullptr, {pass}), options, &row);
      res.without_pass.push_back(std::move(row));
    }
  // The other corner of the two-by-two: the oracle's kernels on the optimized graph.
  {
    KILN_ASSIGN_OR_RETURN(runtime::Provider reference, runtime::FindProvider("reference"));
    SweepRow row;
    row.what = std::string("opt level ") + passes::OptLevelName(user_level) + " graph on reference";
    FillRow(names, ref, RunVariant(model, feeds, reference, user_level, true, "", 0, nullptr), options, &row);
    res.levels.push_back(std::move(row));
  }
  if (suspects.empty()) {
    VerifyOptions o = options;
    o.per_node = true;
    KILN_ASSIGN_OR_RETURN(VerifyResult v, Verify(model, feeds, o));
    for (const NodeCheck& nc : v.nodes.nodes)
      if (nc.introduces_error && nc.provider == options.provider && suspects.size() < 8) suspects.push_back(nc.name);
  }
  for (const std::string& s : suspects) {
    SweepRow row;
    row.what = "node '" + s + "' on " + (provider.fallback_name.empty() ? "(no fallback)" : provider.fallback_name);
    if (!provider.fallback_kernels) {
      row.error = "provider '" + options.provider + "' has no fallback provider to move the node to";
      res.forced.push_back(std::move(row));
      continue;
    }
    std::string ran_on;
    FillRow(names, ref, RunVariant(model, feeds, provider, user_level, provider.optimizes, s, options.threads, &ran_on), options, &row);
    if (row.ran && ran_on != provider.fallback_name) {
      row.ran = false;
      row.error = "the node still ran on '" + ran_on + "'";
    }
    res.forced.push_back(std::move(row));
  }

  // Conclusions: where the mismatch appears and vanishes.
  const size_t nlev = std::size(levels);
  std::string oks, bads;
  for (size_t i = 0; i < nlev; ++i) {
    const SweepRow& row = res.levels[i];
    std::string& list = row.ran && row.ok ? oks : bads;
    list += (list.empty() ? "" : ", ") + std::string(passes::OptLevelName(levels[i]));
  }
  if (bads.empty()) {
    res.conclusions.push_back("every opt level agrees with the reference");
  } else if (oks.empty()) {
    res.conclusions.push_back("the mismatch is there at every opt level, disable included: the " + options.provider +
                              " kernels are wrong on the graph as loaded, not the passes");
  } else {
    for (size_t i = 1; i < nlev; ++i) {
      const bool was_ok = res.levels[i - 1].ran && res.levels[i - 1].ok, is_ok = res.levels[i].ran && res.levels[i].ok;
      if (was_ok && !is_ok)
        res.conclusions.push_back(std::string("the mismatch appears at opt level ") + passes::OptLevelName(levels[i]) +
                                  " (ok at " + passes::OptLevelName(levels[i - 1]) + ")");
      if (!was_ok && is_ok)
        res.conclusions.push_back(std::string("the mismatch vanishes at opt level ") + passes::OptLevelName(levels[i]) +
                                  " (MISMATCH at " + passes::OptLevelName(levels[i - 1]) + ")");
    }
  }
  const SweepRow& ref_opt = res.levels.back();
  if (ref_opt.ran && !ref_opt.ok)
    res.conclusions.push_back("the reference provider disagrees on the optimized graph too: a pass changed the model's meaning");
  else if (ref_opt.ran && !res.levels[static_cast<size_t>(user_level)].ok)
    res.conclusions.push_back("the reference provider agrees on the optimized graph: the passes are right, the " + options.provider +
                              " kernels are not");
  for (const SweepRow& row : res.without_pass)
    if (row.ran && row.ok && !res.levels[static_cast<size_t>(user_level)].ok)
      res.conclusions.push_back("the mismatch vanishes at " + row.what + ": that pass is involved");
  for (const SweepRow& row : res.forced)
    if (row.ran && row.ok && !res.levels[static_cast<size_t>(user_level)].ok)
      res.conclusions.push_back("the mismatch vanishes with " + row.what + ": that node's " + options.provider + " kernel is the fault");
  return res;
}

}  // namespace kiln::verify
