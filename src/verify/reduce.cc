#include "verify/reduce.h"

#include <sys/wait.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>
#include <unordered_map>

#include "onnx/onnx_io.h"
#include "runtime/session_internal.h"
#include "verify/verify.h"

namespace kiln::verify {

namespace fs = std::filesystem;

size_t Candidate::kept() const { return static_cast<size_t>(std::count(fate.begin(), fate.end(), NodeFate::kKept)); }

// ---- recording and building ----------------------------------------------------

Result<std::map<std::string, Datum>> RecordReferenceValues(const ir::Model& model, const std::map<std::string, Datum>& feeds) {
  SessionOptions o;
  o.provider = "reference";
  o.opt_level = "disable";
  auto s = CreateSessionFromModel(DeepCopy(model), o);
  if (!s.ok()) return s.status().WithContext("reference session");
  std::map<std::string, Datum> rec;
  for (const auto& [n, t] : model.graph.initializers) rec[n] = Datum(t);
  for (const auto& [n, d] : feeds) rec[n] = d;
  runtime::NodeTap tap = [&](const ir::Node& n, const std::vector<Datum>& outs) {
    for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      const Datum& d = outs[i];
      rec[n.outputs[i]] = d.is_tensor() && d.tensor().defined() ? Datum(d.tensor().Clone()) : d;
    }
  };
  std::vector<std::string> names;
  for (const ir::Value& v : model.graph.outputs) names.push_back(v.name);
  auto outs = RunWithTap(**s, feeds, names, tap);
  if (!outs.ok()) return outs.status().WithContext("reference run");
  return rec;
}

namespace {

struct GraphIndex {
  std::unordered_map<std::string, std::pair<size_t, size_t>> producer;  // value -> (node, output index)
  std::vector<std::vector<std::string>> reads;                          // per node: inputs and outer references
  std::unordered_map<std::string, std::vector<size_t>> readers;         // value -> reading nodes
  std::set<std::string> graph_outputs;
};

GraphIndex Index(const ir::Graph& g) {
  GraphIndex x;
  x.reads.resize(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (!n.outputs[k].empty()) x.producer[n.outputs[k]] = {i, k};
    for (const std::string& in : n.inputs)
      if (!in.empty()) x.reads[i].push_back(in);
    for (const std::string& in : ir::NodeOuterReferences(n)) x.reads[i].push_back(in);
    for (const std::string& in : x.reads[i]) x.readers[in].push_back(i);
  }
  for (const ir::Value& v : g.outputs) x.graph_outputs.insert(v.name);
  return x;
}

bool SameTensorType(const Datum* a, const Datum* b) {
  return a && b && a->is_tensor() && b->is_tensor() && a->tensor().defined() && b->tensor().defined() &&
         a->tensor().dtype() == b->tensor().dtype() && a->tensor().shape() == b->tensor().shape();
}

const Datum* Find(const std::map<std::string, Datum>& m, const std::string& n) {
  auto it = m.find(n);
  return it == m.end() ? nullptr : &it->second;
}

// The input a node's output 0 may be replaced by (same dtype and shape), or -1.
int BypassInput(const ir::Node& n, const GraphIndex& x, const std::map<std::string, Datum>& recorded) {
  if (!n.HasOutput(0)) return -1;
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty() && (x.readers.count(n.outputs[k]) || x.graph_outputs.count(n.outputs[k]))) return -1;
  const Datum* out = Find(recorded, n.outputs[0]);
  for (size_t j = 0; j < n.inputs.size(); ++j)
    if (!n.inputs[j].empty() && SameTensorType(Find(recorded, n.inputs[j]), out)) return static_cast<int>(j);
  return -1;
}

}  // namespace

Result<CandidateModel> BuildCandidate(const ir::Model& original, const std::map<std::string, Datum>& recorded,
                                      const std::map<std::string, Datum>& feeds, const Candidate& candidate) {
  const ir::Graph& g = original.graph;
  const GraphIndex x = Index(g);
  if (candidate.fate.size() != g.nodes.size()) return InvalidArgument("candidate does not match the model");
  std::vector<NodeFate> fate = candidate.fate;
  auto kept = [&](size_t i) { return fate[i] == NodeFate::kKept; };
  auto removed = [&](size_t i) { return fate[i] == NodeFate::kReplaced || fate[i] == NodeFate::kBypassed; };
  // The value a kept node reads in place of `v`.
  auto resolve = [&](std::string v) {
    for (size_t guard = 0; guard <= g.nodes.size(); ++guard) {
      auto it = x.producer.find(v);
      if (it == x.producer.end()) return v;
      const size_t p = it->second.first;
      if (fate[p] != NodeFate::kBypassed || it->second.second != 0) return v;
      v = g.nodes[p].inputs[static_cast<size_t>(candidate.bypass_input[p])];
    }
    return v;
  };
  const std::set<std::string> dropped(candidate.dropped_outputs.begin(), candidate.dropped_outputs.end());

  // Outputs: the original ones (through bypasses), and values of kept nodes
  // that lost every reader to a removal; less the dropped ones.
  std::set<std::string> read_by_kept;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (kept(i))
      for (const std::string& in : g.nodes[i].inputs)
        if (!in.empty()) read_by_kept.insert(resolve(in));
  std::vector<std::string> outputs;
  auto add_output = [&](const std::string& v) {
    if (dropped.count(v) || std::find(outputs.begin(), outputs.end(), v) != outputs.end()) return;
    auto it = x.producer.find(v);
    if (it == x.producer.end() || !kept(it->second.first)) return;
    outputs.push_back(v);
  };
  for (const ir::Value& v : g.outputs) add_output(resolve(v.name));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!kept(i)) continue;
    for (const std::string& out : g.nodes[i].outputs) {
      if (out.empty() || read_by_kept.count(out)) continue;
      auto rit = x.readers.find(out);
      if (rit == x.readers.end()) continue;
      bool lost = false;
      for (size_t r : rit->second) lost = lost || removed(r);
      if (lost) add_output(out);
    }
  }
  if (outputs.empty()) return InvalidArgument("the candidate has no output");

  // Dead code: kept nodes that reach no output.
  {
    std::vector<bool> live(g.nodes.size(), false);
    std::deque<std::string> work(outputs.begin(), outputs.end());
    std::set<std::string> seen;
    while (!work.empty()) {
      std::string v = work.front();
      work.pop_front();
      if (!seen.insert(v).second) continue;
      auto it = x.producer.find(v);
      if (it == x.producer.end() || !kept(it->second.first) || live[it->second.first]) continue;
      const size_t p = it->second.first;
      live[p] = true;
      for (const std::string& in : g.nodes[p].inputs)
        if (!in.empty()) work.push_back(resolve(in));
      for (const std::string& in : ir::NodeOuterReferences(g.nodes[p])) work.push_back(in);
    }
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (kept(i) && !live[i]) fate[i] = NodeFate::kDead;
  }

  CandidateModel cm;
  cm.normalized = candidate;
  cm.normalized.fate = fate;
  ir::Model& m = cm.model;
  m.ir_version = original.ir_version;
  m.opsets = original.opsets;
  m.functions = original.functions;
  m.producer_name = "kiln reduce";
  m.producer_version = original.producer_version;
  m.domain = original.domain;
  m.model_version = original.model_version;
  m.graph.name = g.name.empty() ? "reduced" : g.name + "_reduced";

  std::vector<std::string> replaced;
  std::set<std::string> used;  // every name a kept node reads
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!kept(i)) continue;
    ir::Node n = g.nodes[i];
    for (std::string& in : n.inputs)
      if (!in.empty()) in = resolve(in);
    std::vector<std::string> reads;
    for (const std::string& in : n.inputs)
      if (!in.empty()) reads.push_back(in);
    for (const std::string& in : ir::NodeOuterReferences(n)) reads.push_back(in);
    for (const std::string& in : reads) {
      used.insert(in);
      auto it = x.producer.find(in);
      if (it != x.producer.end() && !kept(it->second.first) &&
          std::find(replaced.begin(), replaced.end(), in) == replaced.end())
        replaced.push_back(in);
    }
    m.graph.nodes.push_back(std::move(n));
  }
  if (m.graph.nodes.empty()) return InvalidArgument("the candidate has no node");
  for (const ir::Value& v : g.inputs)
    if (used.count(v.name) || std::find(outputs.begin(), outputs.end(), v.name) != outputs.end()) m.graph.inputs.push_back(v);
  for (const auto& [n, t] : g.initializers)
    if (used.count(n)) m.graph.initializers[n] = t;
  for (const std::string& v : replaced) {
    const Datum* d = Find(recorded, v);
    if (!d || !d->is_tensor() || !d->tensor().defined())
      return InvalidArgument("value '" + v + "' has no recorded tensor value to stand in for its producer");
    m.graph.inputs.push_back({v, ir::TypeInfo::Tensor(d->tensor().dtype(), ir::DimsFromShape(d->tensor().shape()))});
  }
  for (const std::string& v : outputs) {
    const Datum* d = Find(recorded, v);
    ir::Value out{v, {}};
    auto vi = g.value_info.find(v);
    if (d && d->is_tensor() && d->tensor().defined())
      out.type = ir::TypeInfo::Tensor(d->tensor().dtype(), ir::DimsFromShape(d->tensor().shape()));
    else if (vi != g.value_info.end()) out.type = vi->second.type;
    for (const ir::Value& o : g.outputs)
      if (o.name == v) out.type = o.type;
    m.graph.outputs.push_back(out);
  }
  for (const ir::Value* v : m.graph.RealInputs()) {
    const Datum* d = Find(feeds, v->name);
    if (!d) d = Find(recorded, v->name);
    if (!d) return InvalidArgument("no value to feed input '" + v->name + "'");
    cm.feeds[v->name] = *d;
  }
  cm.replaced_inputs = replaced;
  return cm;
}

// ---- writing ---------------------------------------------------------------------

Status WriteReproducer(const CandidateModel& candidate, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError("cannot create '" + dir + "': " + ec.message());
  const fs::path set = fs::path(dir) / "test_data_set_0";
  fs::remove_all(set, ec);
  fs::create_directories(set, ec);
  if (ec) return IoError("cannot create '" + set.string() + "': " + ec.message());
  KILN_RETURN_IF_ERROR(onnx_io::SaveModelFile(candidate.model, (fs::path(dir) / "model.onnx").string()));
  const auto real = candidate.model.graph.RealInputs();
  for (size_t i = 0; i < real.size(); ++i) {
    auto it = candidate.feeds.find(real[i]->name);
    if (it == candidate.feeds.end()) return InvalidArgument("no value for input '" + real[i]->name + "'");
    KILN_RETURN_IF_ERROR(onnx_io::WriteDatumFile((set / ("input_" + std::to_string(i) + ".pb")).string(), it->second, real[i]->name));
  }
  SessionOptions o;
  o.provider = "reference";
  o.opt_level = "disable";
  auto s = CreateSessionFromModel(DeepCopy(candidate.model), o);
  if (!s.ok()) return s.status().WithContext("reference session of the reproducer");
  auto outs = (*s)->RunDatums(candidate.feeds);
  if (!outs.ok()) return outs.status().WithContext("reference run of the reproducer");
  const auto& outputs = candidate.model.graph.outputs;
  for (size_t j = 0; j < outputs.size() && j < outs->size(); ++j)
    KILN_RETURN_IF_ERROR(
        onnx_io::WriteDatumFile((set / ("output_" + std::to_string(j) + ".pb")).string(), (*outs)[j], outputs[j].name));
  return Status::Ok();
}

// ---- oracles ---------------------------------------------------------------------

namespace {

class MismatchOracle final : public Oracle {
 public:
  MismatchOracle(std::string provider, std::string level, ToleranceOverrides tol, bool count_run_errors, int threads)
      : provider_(std::move(provider)), level_(std::move(level)), tol_(std::move(tol)), count_run_errors_(count_run_errors),
        threads_(threads) {}
  Result<Verdict> Check(const CandidateModel& c) override {
    VerifyOptions o;
    o.provider = provider_;
    o.opt_level = level_;
    o.threads = threads_;
    o.tolerances = tol_;
    KILN_ASSIGN_OR_RETURN(VerifyResult r, Verify(c.model, c.feeds, o));
    Verdict v;
    if (!r.provider_error.empty()) {
      v.interesting = count_run_errors_;
      v.description = "the " + provider_ + " run fails: " + r.provider_error;
      return v;
    }
    for (const ValueCheck& out : r.outputs) {
      if (out.ok()) continue;
      v.interesting = true;
      v.failing_outputs.push_back(out.name);
      if (v.description.empty()) {
        v.description = "output '" + out.name + "': MISMATCH (" + out.result.reason + ")";
        if (out.has_diagnosis && !out.diagnosis.text.empty()) v.description += "; " + out.diagnosis.text;
      }
    }
    return v;
  }

 private:
  std::string provider_, level_;
  ToleranceOverrides tol_;
  bool count_run_errors_;
  int threads_;
};

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class CommandOracle final : public Oracle {
 public:
  CommandOracle(std::string command, std::string scratch) : command_(std::move(command)), scratch_(std::move(scratch)) {}
  Result<Verdict> Check(const CandidateModel& c) override {
    const std::string dir = (fs::path(scratch_) / "candidate").string();
    std::error_code ec;
    fs::remove_all(dir, ec);
    KILN_RETURN_IF_ERROR(WriteReproducer(c, dir));
    const std::string path = (fs::path(dir) / "model.onnx").string();
    const std::string cmd = "( " + command_ + " " + ShellQuote(path) + " ) >/dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    Verdict v;
    v.interesting = rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0;
    v.description = "--check '" + command_ + "' exits 0 on it";
    return v;
  }

 private:
  std::string command_, scratch_;
};

}  // namespace

std::unique_ptr<Oracle> MakeMismatchOracle(const std::string& provider, const std::string& opt_level,
                                           const ToleranceOverrides& tolerances, bool count_run_errors, int threads) {
  return std::make_unique<MismatchOracle>(provider, opt_level, tolerances, count_run_errors, threads);
}

std::unique_ptr<Oracle> MakeCommandOracle(const std::string& command, const std::string& scratch_dir) {
  return std::make_unique<CommandOracle>(command, scratch_dir);
}

// ---- the reducer -----------------------------------------------------------------

namespace {

// A delta strategy: the nodes it may remove (in the order to try them) and
// how it removes a set of them.
class Delta {
 public:
  virtual ~Delta() = default;
  virtual const char* name() const = 0;
  virtual std::vector<size_t> Targets(const Candidate& cur) const = 0;
  virtual Candidate Apply(const Candidate& cur, const std::vector<size_t>& chunk) const = 0;
};

class ReplaceByInput final : public Delta {
 public:
  explicit ReplaceByInput(const std::vector<size_t>* order) : order_(order) {}
  const char* name() const override { return "replace by input"; }
  std::vector<size_t> Targets(const Candidate& cur) const override {
    std::vector<size_t> t;
    for (size_t i : *order_)
      if (cur.fate[i] == NodeFate::kKept) t.push_back(i);
    return t;
  }
  Candidate Apply(const Candidate& cur, const std::vector<size_t>& chunk) const override {
    Candidate c = cur;
    for (size_t i : chunk) c.fate[i] = NodeFate::kReplaced;
    return c;
  }

 private:
  const std::vector<size_t>* order_;  // far from the failure first, protected nodes left out
};

class Bypass final : public Delta {
 public:
  Bypass(const std::vector<size_t>* order, std::vector<int> input) : order_(order), input_(std::move(input)) {}
  const char* name() const override { return "bypass"; }
  std::vector<size_t> Targets(const Candidate& cur) const override {
    std::vector<size_t> t;
    for (size_t i : *order_)
      if (cur.fate[i] == NodeFate::kKept && input_[i] >= 0) t.push_back(i);
    return t;
  }
  Candidate Apply(const Candidate& cur, const std::vector<size_t>& chunk) const override {
    Candidate c = cur;
    for (size_t i : chunk) {
      c.fate[i] = NodeFate::kBypassed;
      c.bypass_input[i] = input_[i];
    }
    return c;
  }

 private:
  const std::vector<size_t>* order_;
  std::vector<int> input_;
};

// Undirected distance (in nodes) from `from` over producer -> reader edges.
std::vector<int> Distances(const ir::Graph& g, const GraphIndex& x, size_t from) {
  std::vector<int> d(g.nodes.size(), INT_MAX);
  std::deque<size_t> work{from};
  d[from] = 0;
  while (!work.empty()) {
    const size_t i = work.front();
    work.pop_front();
    std::vector<size_t> next;
    for (const std::string& in : x.reads[i]) {
      auto it = x.producer.find(in);
      if (it != x.producer.end()) next.push_back(it->second.first);
    }
    for (const std::string& out : g.nodes[i].outputs) {
      auto it = x.readers.find(out);
      if (it != x.readers.end()) next.insert(next.end(), it->second.begin(), it->second.end());
    }
    for (size_t j : next)
      if (d[j] == INT_MAX) {
        d[j] = d[i] + 1;
        work.push_back(j);
      }
  }
  return d;
}

// Transposes upstream of `failing` within `depth` nodes.
std::vector<size_t> LayoutProducers(const ir::Graph& g, const GraphIndex& x, size_t failing, int depth) {
  std::vector<size_t> found;
  std::vector<int> d(g.nodes.size(), INT_MAX);
  std::deque<size_t> work{failing};
  d[failing] = 0;
  while (!work.empty()) {
    const size_t i = work.front();
    work.pop_front();
    if (i != failing && g.nodes[i].op_type == "Transpose" && g.nodes[i].domain.empty()) found.push_back(i);
    if (d[i] >= depth) continue;
    for (const std::string& in : x.reads[i]) {
      auto it = x.producer.find(in);
      if (it == x.producer.end() || d[it->second.first] != INT_MAX) continue;
      d[it->second.first] = d[i] + 1;
      work.push_back(it->second.first);
    }
  }
  return found;
}

// Whether every protected node is kept and upstream of (or is) the failing node.
bool KeepsProtected(const ir::Model& original, const GraphIndex& x, const Candidate& c, size_t failing,
                    const std::vector<size_t>& protect) {
  if (c.fate[failing] != NodeFate::kKept) return false;
  const ir::Graph& g = original.graph;
  std::vector<bool> up(g.nodes.size(), false);
  std::deque<size_t> work{failing};
  up[failing] = true;
  while (!work.empty()) {
    const size_t i = work.front();
    work.pop_front();
    for (const std::string& in0 : x.reads[i]) {
      std::string in = in0;
      for (size_t guard = 0; guard <= g.nodes.size(); ++guard) {
        auto it = x.producer.find(in);
        if (it == x.producer.end()) break;
        const size_t p = it->second.first;
        if (c.fate[p] == NodeFate::kKept) {
          if (!up[p]) {
            up[p] = true;
            work.push_back(p);
          }
          break;
        }
        if (c.fate[p] != NodeFate::kBypassed || it->second.second != 0) break;
        in = g.nodes[p].inputs[static_cast<size_t>(c.bypass_input[p])];
      }
    }
  }
  for (size_t p : protect)
    if (!up[p]) return false;
  return true;
}

std::string Label(const ir::Node& n) { return (n.name.empty() ? std::string("(unnamed)") : n.name) + " (" + n.op_type + ")"; }

}  // namespace

Result<ReduceResult> Reduce(const ir::Model& model, const std::map<std::string, Datum>& feeds, const ReduceOptions& options,
                            Oracle* oracle) {
  const ir::Graph& g = model.graph;
  const GraphIndex x = Index(g);
  ReduceResult res;
  res.original_nodes = g.nodes.size();
  if (g.nodes.empty()) return InvalidArgument("the model has no node to reduce");
  KILN_ASSIGN_OR_RETURN(auto recorded, RecordReferenceValues(model, feeds));
  std::unique_ptr<Oracle> own;
  const bool default_oracle = oracle == nullptr;
  if (default_oracle) {
    own = MakeMismatchOracle(options.provider, options.opt_level, options.tolerances, options.count_run_errors, options.threads);
    oracle = own.get();
  }
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };

  Candidate cur;
  cur.fate.assign(g.nodes.size(), NodeFate::kKept);
  cur.bypass_input.assign(g.nodes.size(), -1);

  std::optional<size_t> failing;
  std::vector<size_t> protect;
  CandidateModel cur_model;
  Verdict cur_verdict;

  // Builds, checks the protected nodes, asks the oracle.
  auto try_candidate = [&](const Candidate& c, CandidateModel* cm, Verdict* v) -> bool {
    if (res.oracle_calls >= options.max_oracle_calls) return false;
    auto built = BuildCandidate(model, recorded, feeds, c);
    if (!built.ok()) return false;
    if (failing && !KeepsProtected(model, x, built->normalized, *failing, protect)) return false;
    ++res.oracle_calls;
    auto verdict = oracle->Check(*built);
    if (!verdict.ok() || !verdict->interesting) return false;
    *cm = std::move(*built);
    *v = std::move(*verdict);
    return true;
  };

  {
    // The model as given: errors here (the oracle cannot run it) are errors.
    KILN_ASSIGN_OR_RETURN(cur_model, BuildCandidate(model, recorded, feeds, cur));
    ++res.oracle_calls;
    KILN_ASSIGN_OR_RETURN(cur_verdict, oracle->Check(cur_model));
    if (!cur_verdict.interesting) {
      res.initial_description = cur_verdict.description;
      return res;
    }
  }
  res.failed_initially = true;
  res.initial_description = cur_verdict.description;
  cur = cur_model.normalized;

  // The failing node: verify's first divergence, else the producer of the
  // first failing output.
  if (default_oracle) {
    if (options.find_failing_node) {
      VerifyOptions vo;
      vo.provider = options.provider;
      vo.opt_level = options.opt_level;
      vo.threads = options.threads;
      vo.tolerances = options.tolerances;
      vo.per_node = true;
      auto vr = Verify(model, feeds, vo);
      if (vr.ok() && vr->nodes.first_divergence >= 0) {
        const std::string& name = vr->nodes.nodes[static_cast<size_t>(vr->nodes.first_divergence)].name;
        for (size_t i = 0; i < g.nodes.size() && !failing; ++i)
          if (!name.empty() && g.nodes[i].name == name) failing = i;
      }
    }
    if (!failing && !cur_verdict.failing_outputs.empty()) {
      auto it = x.producer.find(cur_verdict.failing_outputs.front());
      if (it != x.producer.end()) failing = it->second.first;
    }
  }
  if (failing) {
    res.failing_node = g.nodes[*failing].name;
    protect.push_back(*failing);
    if (options.keep_layout_producers)
      for (size_t p : LayoutProducers(g, x, *failing, options.layout_producer_depth)) protect.push_back(p);
    for (size_t p : protect) res.protected_nodes.push_back(Label(g.nodes[p]));
    log("failing node: " + Label(g.nodes[*failing]));
  }

  // Order: far from the failing node first (graph order otherwise).
  std::vector<size_t> order;
  {
    std::vector<int> dist(g.nodes.size(), 0);
    if (failing) dist = Distances(g, x, *failing);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (std::find(protect.begin(), protect.end(), i) == protect.end()) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return dist[a] > dist[b]; });
  }
  std::vector<int> bypass(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) bypass[i] = BypassInput(g.nodes[i], x, recorded);

  auto accept = [&](CandidateModel cm, Verdict v) {
    cur = cm.normalized;
    cur_model = std::move(cm);
    cur_verdict = std::move(v);
    // Drop the outputs that agree (the default oracle names the failing ones).
    if (cur_verdict.failing_outputs.empty() || cur_verdict.failing_outputs.size() == cur_model.model.graph.outputs.size()) return;
    Candidate narrowed = cur;
    for (const ir::Value& o : cur_model.model.graph.outputs)
      if (std::find(cur_verdict.failing_outputs.begin(), cur_verdict.failing_outputs.end(), o.name) ==
          cur_verdict.failing_outputs.end())
        narrowed.dropped_outputs.push_back(o.name);
    CandidateModel ncm;
    Verdict nv;
    if (try_candidate(narrowed, &ncm, &nv)) {
      cur = ncm.normalized;
      cur_model = std::move(ncm);
      cur_verdict = std::move(nv);
    }
  };
  accept(cur_model, cur_verdict);

  ReplaceByInput replace(&order);
  Bypass skip(&order, bypass);
  const std::vector<const Delta*> deltas = {&replace, &skip};
  bool changed = true;
  while (changed && res.oracle_calls < options.max_oracle_calls) {
    changed = false;
    for (const Delta* delta : deltas) {
      std::vector<size_t> targets = delta->Targets(cur);
      for (size_t chunk = std::max<size_t>(1, (targets.size() + 1) / 2);; chunk = std::max<size_t>(1, chunk / 2)) {
        size_t b = 0;
        while (b < targets.size()) {
          std::vector<size_t> part(targets.begin() + static_cast<long>(b),
                                   targets.begin() + static_cast<long>(std::min(targets.size(), b + chunk)));
          CandidateModel cm;
          Verdict v;
          if (try_candidate(delta->Apply(cur, part), &cm, &v)) {
            const size_t before = cur.kept();
            accept(std::move(cm), std::move(v));
            log(std::string(delta->name()) + ": " + std::to_string(part.size()) + " node(s) from " + Label(g.nodes[part.front()]) +
                ", " + std::to_string(before) + " -> " + std::to_string(cur.kept()) + " nodes");
            changed = true;
            targets = delta->Targets(cur);  // the chunk is gone: the next one starts at b
          } else {
            b += chunk;
          }
        }
        if (chunk == 1 || targets.empty()) break;
      }
    }
  }

  res.candidate = cur;
  res.final_description = cur_verdict.description;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    switch (cur.fate[i]) {
      case NodeFate::kKept: res.kept_nodes.push_back(Label(g.nodes[i])); break;
      case NodeFate::kReplaced: ++res.replaced; break;
      case NodeFate::kBypassed: ++res.bypassed; break;
      case NodeFate::kDead: ++res.dead; break;
    }
  }
  res.reduced = std::move(cur_model);
  return res;
}

}  // namespace kiln::verify
