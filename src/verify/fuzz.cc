#include "verify/fuzz.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "kiln/session.h"
#include "onnx/onnx_io.h"
#include "runtime/session_internal.h"
#include "support/isolate.h"
#include "verify/compare.h"
#include "verify/diagnose.h"
#include "verify/reduce.h"
#include "verify/verify.h"

namespace kiln::verify {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kAllLevels = {"disable", "basic", "extended", "all"};

// ---- the child's result, sent back through a pipe ---------------------------
// Fields separated by \x1f, records by \x1e (neither occurs in messages).
std::string Serialize(const FuzzGraphResult& r) {
  std::string s = std::to_string(r.seed) + "\x1f" + (r.skipped ? "1" : "0") + "\x1f" + r.productions + "\x1e";
  for (const FuzzFailure& f : r.failures)
    s += std::to_string(f.seed) + "\x1f" + f.level + "\x1f" + f.output + "\x1f" + f.what + "\x1f" + f.divergence + "\x1f" +
         f.reproducer + "\x1f" + f.reduction + "\x1e";
  return s;
}

std::vector<std::string> SplitOn(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

bool Deserialize(const std::string& s, FuzzGraphResult* r) {
  std::vector<std::string> records = SplitOn(s, '\x1e');
  if (records.empty() || !records.back().empty()) return false;
  records.pop_back();
  if (records.empty()) return false;
  std::vector<std::string> head = SplitOn(records[0], '\x1f');
  if (head.size() != 3) return false;
  r->seed = std::stoull(head[0]);
  r->skipped = head[1] == "1";
  r->productions = head[2];
  for (size_t i = 1; i < records.size(); ++i) {
    std::vector<std::string> f = SplitOn(records[i], '\x1f');
    if (f.size() != 7) return false;
    r->failures.push_back({std::stoull(f[0]), f[1], f[2], f[3], f[4], f[5], f[6]});
  }
  return true;
}

std::string ReplayLines(const FuzzConfig& c, uint64_t seed, const std::string& dir, const std::string& level);

// The whole graph of `seed` with the reference's outputs as OUT/seed_<S>/,
// for a graph whose child died (nothing of it came back to reduce).
Status WriteWholeGraph(uint64_t seed, const FuzzConfig& config, const std::string& why) {
  KILN_ASSIGN_OR_RETURN(ir::Model model, GenerateGraph(seed, config.graph));
  KILN_ASSIGN_OR_RETURN(auto feeds, GenerateFeeds(model, seed));
  SessionOptions ro;
  ro.provider = "reference";
  ro.opt_level = "disable";
  ro.threads = 1;
  KILN_ASSIGN_OR_RETURN(auto ref, CreateSessionFromModel(DeepCopy(model), ro));
  std::vector<std::string> names;
  for (const ir::Value& v : model.graph.outputs) names.push_back(v.name);
  KILN_ASSIGN_OR_RETURN(auto want, ref->Run(feeds, names));
  const fs::path dir = fs::path(config.out_dir) / ("seed_" + std::to_string(seed));
  std::error_code ec;
  fs::remove_all(dir, ec);
  KILN_RETURN_IF_ERROR(WriteBackendTestFolder(model, feeds, want, dir.string()));
  std::ofstream readme(dir / "README.txt");
  readme << "kiln fuzz reproducer: seed " << seed << ", provider " << config.provider << ", not reduced: " << why << "\n"
         << "graph: " << model.metadata["kiln.fuzz.productions"] << "\n"
         << ReplayLines(config, seed, dir.string(), "all")
         << "reduce a crash with: kiln reduce " << (dir / "model.onnx").string()
         << " --check 'CMD' (CMD exits 0 while the crash remains)\n";
  return Status::Ok();
}

FuzzGraphResult RunIsolated(uint64_t seed, const FuzzConfig& config) {
  auto run = kiln::RunIsolated(config.timeout_s, [&] { return Serialize(FuzzGraph(seed, config)); });
  if (!run) return FuzzGraph(seed, config);
  FuzzGraphResult r;
  r.seed = seed;
  if (run->message && Deserialize(*run->message, &r)) return r;
  FuzzFailure f;
  f.seed = seed;
  f.level = "?";
  f.what = run->message ? "child sent a malformed result" : run->failure;
  if (run->failure.rfind("child exited", 0) != 0 && !run->message)
    f.what += "; rerun with --no-isolate --seed " + std::to_string(seed) + " --count 1 to see where";
  if (!config.out_dir.empty()) {
    // In a child of its own too: the reference may be what died.
    auto w = kiln::RunIsolated(config.timeout_s, [&] {
      Status st = WriteWholeGraph(seed, config, f.what);
      return st.ok() ? std::string("written") : st.ToString();
    });
    if (w && w->message && *w->message == "written") {
      f.reproducer = (fs::path(config.out_dir) / ("seed_" + std::to_string(seed))).string();
      f.reduction = "not reduced: the child died";
    }
  }
  r.failures.push_back(f);
  return r;
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string LevelsText(const FuzzConfig& c) {
  std::string t;
  for (const std::string& l : c.levels) t += (t.empty() ? "" : ",") + l;
  return t;
}

std::string ReplayLines(const FuzzConfig& c, uint64_t seed, const std::string& dir, const std::string& level) {
  return "regenerate: kiln fuzz --seed " + std::to_string(seed) + " --count 1 --provider " + c.provider + " --opt-level " +
         LevelsText(c) + (c.threads ? " --threads " + std::to_string(c.threads) : "") +
         (c.graph.float16_probability > 0 ? " --float16 " + FormatNumber(c.graph.float16_probability) : "") + "\n" +
         "replay: kiln conformance " + dir + " --provider " + c.provider + " --opt-level " + level + "\n";
}

// After a failing graph: shrinks it with kiln reduce at the first level with
// a wrong output (else the first whose session or run failed, and then a
// candidate whose run fails counts as failing) and writes OUT/seed_<S>/ (the
// reduced reproducer) and OUT/seed_<S>/full/ (the graph as generated). When
// no reduction is made, OUT/seed_<S>/ is the whole graph.
void WriteReproducers(const ir::Model& model, const std::map<std::string, Tensor>& feeds, const std::vector<Tensor>& want,
                      const FuzzConfig& config, FuzzGraphResult* r) {
  const fs::path dir = fs::path(config.out_dir) / ("seed_" + std::to_string(r->seed));
  std::error_code ec;
  fs::remove_all(dir, ec);  // an earlier run's reproducer of this seed
  std::string level;
  bool run_error = false;
  for (const FuzzFailure& f : r->failures)
    if (f.level != "reference" && !f.output.empty()) {
      level = f.level;
      break;
    }
  for (const FuzzFailure& f : r->failures)
    if (level.empty() && f.level != "reference") {
      level = f.level;
      run_error = true;
    }
  std::string reduction;
  std::optional<ReduceResult> reduced;
  if (!config.reduce) {
    reduction = "not reduced (reduction off)";
  } else if (level.empty()) {
    reduction = "not reduced: only the reference side failed";
  } else {
    std::map<std::string, Datum> datum_feeds(feeds.begin(), feeds.end());
    ReduceOptions ro;
    ro.provider = config.provider;
    ro.opt_level = level;
    ro.threads = config.threads;
    ro.count_run_errors = run_error;
    ro.max_oracle_calls = config.max_reduce_checks;
    auto res = Reduce(model, datum_feeds, ro);
    if (!res.ok()) reduction = "not reduced: " + res.status().ToString();
    else if (!res->failed_initially) reduction = "not reduced: verify at level " + level + " does not see the failure";
    else reduced = std::move(res).value();
  }
  const fs::path full = reduced ? dir / "full" : dir;
  Status st = WriteBackendTestFolder(model, feeds, want, full.string());
  if (st.ok() && reduced) {
    st = WriteReproducer(reduced->reduced, dir.string());
    reduction = "reduced from " + std::to_string(reduced->original_nodes) + " to " +
                std::to_string(reduced->reduced.model.graph.nodes.size()) + " nodes at level " + level;
  }
  if (st.ok()) {
    std::ofstream readme(dir / "README.txt");
    readme << "kiln fuzz reproducer: seed " << r->seed << ", provider " << config.provider << ", threads "
           << (config.threads ? std::to_string(config.threads) : std::string("all cores")) << ", " << reduction << "\n"
           << "graph: " << r->productions << "\n";
    if (reduced) {
      readme << "kept nodes:";
      for (const std::string& n : reduced->kept_nodes) readme << " " << n;
      readme << "\nreduced graph fails as: " << reduced->final_description << "\n"
             << "whole graph (full/) failed as: " << reduced->initial_description << "\n";
    }
    readme << ReplayLines(config, r->seed, dir.string(), level.empty() ? "all" : level);
    for (const FuzzFailure& f : r->failures) readme << FormatFuzzFailure(f) << "\n";
  }
  for (FuzzFailure& f : r->failures) {
    f.reproducer = st.ok() ? dir.string() : "(not written: " + st.ToString() + ")";
    f.reduction = st.ok() ? reduction : "";
  }
}

}  // namespace

Result<std::vector<std::string>> ParseFuzzLevels(const std::string& text) {
  if (text == "all-levels" || text == "all_levels") return kAllLevels;
  std::vector<std::string> levels;
  for (const std::string& l : SplitOn(text, ',')) {
    if (std::find(kAllLevels.begin(), kAllLevels.end(), l) == kAllLevels.end())
      return InvalidArgument("unknown opt level '" + l + "' (disable, basic, extended, all, or all-levels)");
    levels.push_back(l);
  }
  return levels;
}

Status WriteBackendTestFolder(const ir::Model& model, const std::map<std::string, Tensor>& feeds,
                              const std::vector<Tensor>& outputs, const std::string& dir) {
  std::error_code ec;
  const fs::path set = fs::path(dir) / "test_data_set_0";
  fs::create_directories(set, ec);
  if (ec) return InvalidArgument("cannot create '" + set.string() + "': " + ec.message());
  KILN_RETURN_IF_ERROR(onnx_io::SaveModelFile(model, (fs::path(dir) / "model.onnx").string()));
  size_t i = 0;
  for (const ir::Value* v : model.graph.RealInputs()) {
    auto it = feeds.find(v->name);
    if (it == feeds.end()) return InvalidArgument("no feed for input '" + v->name + "'");
    KILN_RETURN_IF_ERROR(onnx_io::WriteDatumFile((set / ("input_" + std::to_string(i++) + ".pb")).string(), it->second, v->name));
  }
  for (size_t j = 0; j < outputs.size() && j < model.graph.outputs.size(); ++j)
    KILN_RETURN_IF_ERROR(onnx_io::WriteDatumFile((set / ("output_" + std::to_string(j) + ".pb")).string(), outputs[j],
                                                 model.graph.outputs[j].name));
  return Status::Ok();
}

FuzzGraphResult FuzzGraph(uint64_t seed, const FuzzConfig& config) {
  FuzzGraphResult r;
  r.seed = seed;
  if (config.skip_seeds.count(seed)) {
    r.skipped = true;
    return r;
  }
  auto fail = [&](const std::string& level, const std::string& output, const std::string& what) {
    FuzzFailure f;
    f.seed = seed;
    f.level = level;
    f.output = output;
    f.what = what;
    r.failures.push_back(f);
  };
  auto model = GenerateGraph(seed, config.graph);
  if (!model.ok()) {
    fail("reference", "", "generate: " + model.status().ToString());
    return r;
  }
  r.productions = model->metadata["kiln.fuzz.productions"];
  auto feeds = GenerateFeeds(*model, seed);
  if (!feeds.ok()) {
    fail("reference", "", "inputs: " + feeds.status().ToString());
    return r;
  }
  std::vector<std::string> names;
  for (const ir::Value& v : model->graph.outputs) names.push_back(v.name);

  // The oracle: the model as generated, its own copy.
  SessionOptions ro;
  ro.provider = "reference";
  ro.opt_level = "disable";
  ro.threads = 1;
  std::vector<Tensor> want;
  {
    auto ref = CreateSessionFromModel(DeepCopy(*model), ro);
    auto out = ref.ok() ? (*ref)->Run(*feeds, names) : Result<std::vector<Tensor>>(ref.status());
    if (!out.ok()) {
      fail("reference", "", (ref.ok() ? "run: " : "create: ") + out.status().ToString());
      // The graph and its inputs, without expected outputs: a generator or reference bug.
      if (!config.out_dir.empty()) {
        const std::string dir = (fs::path(config.out_dir) / ("seed_" + std::to_string(seed))).string();
        if (WriteBackendTestFolder(*model, *feeds, {}, dir).ok()) r.failures.back().reproducer = dir;
      }
      return r;
    }
    want = std::move(out).value();
  }
  if (!config.emit_dir.empty()) {
    Status st = WriteBackendTestFolder(*model, *feeds, want, (fs::path(config.emit_dir) / ("seed_" + std::to_string(seed))).string());
    if (!st.ok()) fail("reference", "", "emit: " + st.ToString());
  }
  std::map<std::string, Datum> datum_feeds;
  for (const auto& [k, v] : *feeds) datum_feeds[k] = v;

  for (const std::string& level : config.levels) {
    const size_t before = r.failures.size();
    SessionOptions so;
    so.provider = config.provider;
    so.opt_level = level;
    so.threads = config.threads;
    auto s = CreateSessionFromModel(DeepCopy(*model), so);
    if (!s.ok()) {
      fail(level, "", "create: " + s.status().ToString());
      continue;
    }
    auto got = (*s)->Run(*feeds, names);
    if (!got.ok()) {
      fail(level, "", "run: " + got.status().ToString());
      continue;
    }
    for (size_t j = 0; j < names.size(); ++j) {
      const Tensor& e = want[j];
      const Tensor& a = (*got)[j];
      const Tolerance tol = DefaultTolerance(e.dtype());
      CompareResult c = Compare(e, a, tol);
      if (c.ok) continue;
      std::string what = c.reason;
      if (c.has_metrics) what += " (max |diff| " + FormatNumber(c.metrics.max_abs_diff) + ", max |ref| " + FormatNumber(c.metrics.max_abs_ref) + ")";
      if (e.numel() == a.numel()) {
        Diagnosis d = Diagnose(e, a, tol);
        if (!d.text.empty()) what += "; " + d.text;
      }
      fail(level, names[j], what);
    }
    if (r.failures.size() == before || !config.find_divergence) continue;
    VerifyOptions vo;
    vo.provider = config.provider;
    vo.opt_level = level;
    vo.threads = config.threads;
    vo.per_node = true;
    auto v = Verify(*model, datum_feeds, vo);
    std::string div = v.ok() ? FirstLine(v->nodes.summary) : "verify failed: " + v.status().ToString();
    for (size_t i = before; i < r.failures.size(); ++i) r.failures[i].divergence = div;
  }
  if (!r.failures.empty() && !config.out_dir.empty()) WriteReproducers(*model, *feeds, want, config, &r);
  return r;
}

FuzzSummary RunFuzz(const FuzzConfig& config, const std::function<void(const FuzzGraphResult&)>& on_graph) {
  FuzzSummary s;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < config.count; ++i) {
    const uint64_t seed = config.seed + static_cast<uint64_t>(i);
    FuzzGraphResult r = config.isolate && !config.skip_seeds.count(seed) ? RunIsolated(seed, config) : FuzzGraph(seed, config);
    if (r.skipped) ++s.skipped;
    else if (r.ok()) ++s.passed;
    else ++s.failed;
    s.failures.insert(s.failures.end(), r.failures.begin(), r.failures.end());
    if (on_graph) on_graph(r);
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

std::string FormatFuzzFailure(const FuzzFailure& f) {
  std::string s = "FAIL seed " + std::to_string(f.seed) + " level " + f.level;
  if (!f.output.empty()) s += " output '" + f.output + "'";
  s += ": " + f.what;
  if (!f.divergence.empty()) s += " | " + f.divergence;
  if (!f.reproducer.empty()) s += " | reproducer " + f.reproducer + (f.reduction.empty() ? "" : " (" + f.reduction + ")");
  return s;
}

}  // namespace kiln::verify
