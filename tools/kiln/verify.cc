// kiln verify MODEL [--provider cpu] [--opt-level L] [--threads N]
//                   [--input NAME=FILE]... [--shape NAME=DIMS]... [--seed S]
//                   [--inputs random|position] [--per-node] [--sweep]
//                   [--json FILE] [--rtol R] [--atol A] [--tol NAME=RTOL,ATOL]...
// Runs the model through an ordinary session of the provider and through a
// reference session built from its own copy of the model as loaded, on the
// same inputs, and prints the compare table per output (compare_report.h).
// --per-node taps the provider's plan and names the node that introduced an
// error (src/verify/verify.h); --sweep repeats the check per opt level and
// with each suspect node on the reference provider. This file only reads
// arguments and prints.
// Exit codes: 0 every output (and with --per-node every tapped value) agrees,
// 1 a mismatch or a failed provider run, 2 bad arguments or a model that
// cannot be loaded.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>

#include "cli_util.h"
#include "commands.h"
#include "compare_report.h"
#include "onnx/onnx_io.h"
#include "verify/verify.h"

namespace kiln::cli {
namespace {

using verify::FormatNumber;

struct VerifyArgs {
  std::string model;
  std::string provider = "cpu";
  std::string opt_level = "all";
  int threads = 0;
  FeedArgs feed;
  std::string inputs = "random";
  bool per_node = false;
  bool sweep = false;
  bool strict_nodes = false;
  std::string json;
  double rtol = 0, atol = 0;
  CLI::Option* rtol_opt = nullptr;
  CLI::Option* atol_opt = nullptr;
  std::vector<std::string> tols;
};

Result<verify::ToleranceOverrides> ParseOverrides(const VerifyArgs& a, const ir::Graph& g) {
  verify::ToleranceOverrides o;
  for (const auto& [opt, value, slot] : {std::tuple{a.rtol_opt, a.rtol, &o.rtol}, std::tuple{a.atol_opt, a.atol, &o.atol}}) {
    if (opt->count() == 0) continue;
    if (!std::isfinite(value) || value < 0)
      return InvalidArgument(opt->get_name() + " " + FormatNumber(value) + ": a tolerance must be a finite number >= 0");
    *slot = value;
  }
  // --tol may name any value of the graph (intermediate ones matter with --per-node).
  std::set<std::string> values;
  for (const auto& v : g.outputs) values.insert(v.name);
  for (const auto& n : g.nodes)
    for (const auto& out : n.outputs) values.insert(out);
  for (const std::string& item : a.tols) {
    KILN_ASSIGN_OR_RETURN(auto assignment, verify::ParseToleranceAssignment(item));
    if (!values.count(assignment.first)) {
      std::string names;
      for (const auto& v : g.outputs) names += (names.empty() ? "" : ", ") + v.name;
      return InvalidArgument("--tol '" + item + "': the model has no value named '" + assignment.first + "' (outputs: " + names + ")");
    }
    o.per_output[assignment.first] = assignment.second;
  }
  return o;
}

// --inputs position: every generated float input becomes the position probe.
Status ApplyPositionInputs(const ir::Graph& g, const FeedArgs& a, std::map<std::string, Datum>* feeds) {
  KILN_ASSIGN_OR_RETURN(auto files, ParseAssignments(a.inputs, "--input"));
  for (auto& [name, d] : *feeds) {
    if (files.count(name) || !d.is_tensor()) continue;
    const DType dt = d.tensor().dtype();
    if (dt != DType::kFloat32 && dt != DType::kFloat64 && dt != DType::kFloat16 && dt != DType::kBFloat16) continue;
    KILN_ASSIGN_OR_RETURN(Tensor t, verify::PositionTensor(dt, d.tensor().shape()));
    d = Datum(std::move(t));
  }
  return Status::Ok();
}

ReportEntry ToEntry(const verify::ValueCheck& v) {
  ReportEntry e;
  e.name = v.name;
  e.result = v.result;
  e.has_diagnosis = v.has_diagnosis;
  e.diagnosis = v.diagnosis;
  return e;
}

nlohmann::json ValueJson(const verify::ValueCheck& v) {
  nlohmann::json j;
  if (v.has_reference && v.is_tensor) j = EntryJson(ToEntry(v));
  else j = {{"name", v.name}, {"verdict", "not compared"}, {"ok", true}};
  j["has_reference"] = v.has_reference;
  j["is_tensor"] = v.is_tensor;
  if (!v.layout.empty()) j["layout"] = v.layout;
  return j;
}

nlohmann::json PerNodeJson(const verify::PerNodeReport& rep) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const verify::NodeCheck& nc : rep.nodes) {
    nlohmann::json outs = nlohmann::json::array(), alone = nlohmann::json::array();
    for (const auto& v : nc.outputs) outs.push_back(ValueJson(v));
    for (const auto& v : nc.alone_outputs) alone.push_back(ValueJson(v));
    nodes.push_back({{"index", nc.index}, {"name", nc.name}, {"op_type", nc.op_type}, {"domain", nc.domain},
                     {"provider", nc.provider}, {"inputs", nc.inputs}, {"input_layouts", nc.input_layouts},
                     {"outputs", outs}, {"absorbed", nc.absorbed}, {"ok", nc.tapped_ok() && !nc.introduces_error},
                     {"alone", {{"ran", nc.alone_ran}, {"error", nc.alone_error}, {"provider", nc.alone_provider},
                                {"outputs", alone}, {"introduces_error", nc.introduces_error},
                                {"reference_ran", nc.reference_alone_ran}, {"reference_ok", nc.reference_alone_ok},
                                {"blame", nc.blame}}}});
  }
  nlohmann::json absorbed = nlohmann::json::array(), folded = nlohmann::json::array();
  for (const auto& a : rep.absorbed) {
    const char* how = a.how == verify::AbsorbedValue::How::kFused ? "fused" : a.how == verify::AbsorbedValue::How::kFolded ? "folded" : "removed";
    absorbed.push_back({{"name", a.name}, {"producer", a.producer}, {"producer_op", a.producer_op}, {"how", how},
                        {"into", a.into < 0 ? nlohmann::json(nullptr) : nlohmann::json(a.into_name)}, {"into_op", a.into_op},
                        {"text", a.text}});
  }
  for (const auto& v : rep.folded) folded.push_back(ValueJson(v));
  auto node_ref = [&](int i) -> nlohmann::json {
    if (i < 0) return nullptr;
    const auto& nc = rep.nodes[static_cast<size_t>(i)];
    return {{"position", i}, {"name", nc.name}, {"op_type", nc.op_type}, {"provider", nc.provider}, {"blame", nc.blame}};
  };
  return {{"ok", rep.ok()}, {"compared", rep.compared}, {"mismatched", rep.mismatched}, {"nodes", nodes},
          {"absorbed", absorbed}, {"folded", folded}, {"first_mismatch", node_ref(rep.first_mismatch)},
          {"first_divergence", node_ref(rep.first_divergence)}, {"summary", rep.summary}};
}

nlohmann::json SweepJson(const verify::SweepResult& s) {
  auto rows = [](const std::vector<verify::SweepRow>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& r : v)
      a.push_back({{"what", r.what}, {"ran", r.ran}, {"error", r.error}, {"ok", r.ok}, {"max_abs_diff", Num(r.max_abs_diff)},
                   {"worst_output", r.worst_output}});
    return a;
  };
  return {{"levels", rows(s.levels)}, {"without_pass", rows(s.without_pass)}, {"forced", rows(s.forced)}, {"conclusions", s.conclusions}};
}

std::string AloneText(const verify::NodeCheck& nc) {
  if (!nc.alone_ran) return nc.alone_error.empty() ? "-" : "error";
  if (!nc.introduces_error) return "ok";
  return nc.blame.empty() ? "MISMATCH" : "MISMATCH (" + nc.blame + ")";
}

void PrintPerNode(const verify::PerNodeReport& rep, const std::string& provider) {
  std::printf("\nper node: %zu nodes in the %s plan, %zu values compared with the reference, %zu disagree\n", rep.nodes.size(),
              provider.c_str(), rep.compared, rep.mismatched);
  size_t nw = 4, ow = 2, pw = 2, vw = 5;
  for (const auto& nc : rep.nodes) {
    nw = std::max(nw, nc.name.size());
    ow = std::max(ow, nc.op_type.size());
    pw = std::max(pw, nc.provider.size());
    for (const auto& v : nc.outputs) vw = std::max(vw, v.name.size());
  }
  const int inw = static_cast<int>(nw), iow = static_cast<int>(ow), ipw = static_cast<int>(pw), ivw = static_cast<int>(vw);
  std::printf("%4s  %-*s  %-*s  %-*s  %-9s  %-*s  %-9s  %10s  %-8s  %s\n", "#", inw, "node", iow, "op", ipw, "on", "in layout", ivw,
              "value", "layout", "max|diff|", "verdict", "alone");
  for (size_t i = 0; i < rep.nodes.size(); ++i) {
    const auto& nc = rep.nodes[i];
    std::string in_layout;
    for (const auto& l : nc.input_layouts)
      if (!l.empty()) { in_layout = l; break; }
    const size_t rows = std::max<size_t>(1, nc.outputs.size());
    for (size_t k = 0; k < rows; ++k) {
      std::string value = "-", layout = "-", diff = "-", verdict = "-";
      if (k < nc.outputs.size()) {
        const auto& v = nc.outputs[k];
        value = v.name;
        layout = v.layout.empty() ? "-" : v.layout;
        if (!v.has_reference) verdict = "plan only";
        else if (!v.is_tensor) verdict = "not tensor";
        else {
          verdict = v.result.ok ? "ok" : "MISMATCH";
          if (v.result.has_metrics) diff = Short(v.result.metrics.max_abs_diff);
        }
      }
      std::printf("%4zu  %-*s  %-*s  %-*s  %-9s  %-*s  %-9s  %10s  %-8s  %s\n", i, inw, k ? "" : nc.name.c_str(), iow,
                  k ? "" : nc.op_type.c_str(), ipw, k ? "" : nc.provider.c_str(), k ? "" : in_layout.c_str(), ivw, value.c_str(),
                  layout.c_str(), diff.c_str(), verdict.c_str(), k ? "" : AloneText(nc).c_str());
    }
  }
  if (!rep.absorbed.empty()) {
    // Constant nodes (weights) are counted, not listed: --json has them all.
    size_t constants = 0;
    std::printf("\nvalues of the original graph the plan does not compute:\n");
    for (const auto& a : rep.absorbed) {
      if (a.producer_op == "Constant") {
        ++constants;
        continue;
      }
      std::printf("  '%s' (%s '%s'): %s\n", a.name.c_str(), a.producer_op.c_str(), a.producer.c_str(), a.text.c_str());
    }
    if (constants) std::printf("  and %zu values of Constant nodes, folded into initializers or into the nodes that read them\n", constants);
  }
  for (const auto& v : rep.folded)
    if (!v.ok()) std::printf("  folded constant '%s' disagrees with the reference: %s\n", v.name.c_str(), v.result.reason.c_str());
  // Details of what disagrees: at most a few values each.
  size_t shown = 0;
  for (const auto& nc : rep.nodes) {
    for (const auto& v : nc.outputs) {
      if (v.ok() || shown >= 8) continue;
      if (!shown++) std::printf("\nvalues that disagree:\n");
      std::printf("  '%s' of node '%s' (%s): %s\n", v.name.c_str(), nc.name.c_str(), nc.op_type.c_str(), v.result.reason.c_str());
      if (v.has_diagnosis) std::printf("    diagnosis: %s\n", v.diagnosis.text.c_str());
    }
    if (!nc.alone_error.empty()) std::printf("  node '%s' (%s) alone: %s\n", nc.name.c_str(), nc.op_type.c_str(), nc.alone_error.c_str());
  }
  if (!rep.summary.empty()) std::printf("\n%s\n", rep.summary.c_str());
}

void PrintSweep(const verify::SweepResult& s) {
  std::printf("\nsweep:\n");
  size_t w = 10;
  for (const auto* rows : {&s.levels, &s.without_pass, &s.forced})
    for (const auto& r : *rows) w = std::max(w, r.what.size());
  for (const auto* rows : {&s.levels, &s.without_pass, &s.forced})
    for (const auto& r : *rows) {
      if (!r.ran) {
        std::printf("  %-*s  error: %s\n", static_cast<int>(w), r.what.c_str(), r.error.c_str());
        continue;
      }
      std::printf("  %-*s  %-8s  max|diff| %s (%s)\n", static_cast<int>(w), r.what.c_str(), r.ok ? "ok" : "MISMATCH",
                  Short(r.max_abs_diff).c_str(), r.worst_output.c_str());
    }
  for (const auto& c : s.conclusions) std::printf("  => %s\n", c.c_str());
}

int DoVerify(const VerifyArgs& a) {
  if (a.inputs != "random" && a.inputs != "position")
    return ReportError("verify", InvalidArgument("--inputs '" + a.inputs + "': use random or position"), kExitUsage);
  auto model = onnx_io::LoadModelFile(a.model);
  if (!model.ok()) return ReportError("verify", model.status(), kExitUsage);
  auto overrides = ParseOverrides(a, model->graph);
  if (!overrides.ok()) return ReportError("verify", overrides.status(), kExitUsage);
  auto feeds = MakeFeeds(InputInfos(model->graph), a.feed);
  if (!feeds.ok()) return ReportError("verify", feeds.status(), kExitUsage);
  if (a.inputs == "position") {
    Status st = ApplyPositionInputs(model->graph, a.feed, &*feeds);
    if (!st.ok()) return ReportError("verify", st, kExitUsage);
  }
  verify::VerifyOptions o;
  o.provider = a.provider;
  o.opt_level = a.opt_level;
  o.threads = a.threads;
  o.per_node = a.per_node;
  o.tolerances = *overrides;
  o.scale_node_tolerance = !a.strict_nodes;
  auto res = verify::Verify(*model, *feeds, o);
  if (!res.ok()) return ReportError("verify", res.status(), kExitUsage);

  std::printf("verify %s: %s (opt level %s) against reference, %s inputs", a.model.c_str(), a.provider.c_str(), a.opt_level.c_str(),
              a.inputs.c_str());
  if (a.inputs == "random") std::printf(" (seed %llu)", static_cast<unsigned long long>(a.feed.seed));
  std::printf("\n");
  for (const auto& [n, d] : *feeds) std::printf("  input %s\n", SummaryLine(n, d).c_str());
  if (!res->pass_notes.empty() && res->per_node) {
    std::printf("passes:\n");
    for (const auto& n : res->pass_notes) std::printf("  %s\n", n.c_str());
  } else if (!res->pass_notes.empty()) {
    std::printf("passes: %zu changes (listed with --per-node)\n", res->pass_notes.size());
  }
  if (!res->provider_error.empty()) std::printf("\n%s run failed: %s\n", a.provider.c_str(), res->provider_error.c_str());
  std::vector<ReportEntry> entries;
  for (const auto& v : res->outputs) entries.push_back(ToEntry(v));
  if (!entries.empty()) {
    std::printf("\n");
    PrintReport(entries);
  }
  if (res->per_node) PrintPerNode(res->nodes, a.provider);
  if (!res->layout_drift.empty()) {
    std::printf("\nlayouts: %zu values ran in another layout than planned (right values; a conversion the plan did not count):\n",
                res->layout_drift.size());
    for (const auto& d : res->layout_drift) std::printf("  %s\n", d.c_str());
  }

  std::optional<verify::SweepResult> sweep;
  if (a.sweep) {
    std::vector<std::string> suspects;
    if (res->per_node)
      for (const auto& nc : res->nodes.nodes)
        if (nc.introduces_error && nc.provider == a.provider && suspects.size() < 8) suspects.push_back(nc.name);
    auto s = verify::Sweep(*model, *feeds, o, suspects);
    if (!s.ok()) return ReportError("verify", s.status().WithContext("--sweep"), kExitRunError);
    PrintSweep(*s);
    sweep = std::move(*s);
  }

  size_t failed = 0;
  for (const auto& v : res->outputs) failed += v.ok() ? 0 : 1;
  const bool ok = res->ok();
  std::printf("\nverdict: %s (%zu of %zu outputs ok", ok ? "ok" : "MISMATCH", res->outputs.size() - failed, res->outputs.size());
  if (res->per_node)
    std::printf("; %zu of %zu tapped values ok", res->nodes.compared - res->nodes.mismatched, res->nodes.compared);
  std::printf(")\n");

  if (!a.json.empty()) {
    nlohmann::json j = {{"model", a.model}, {"provider", a.provider}, {"opt_level", a.opt_level}, {"inputs", a.inputs},
                        {"seed", a.feed.seed}, {"verdict", ok ? "ok" : "MISMATCH"}, {"ok", ok},
                        {"provider_error", res->provider_error}, {"pass_notes", res->pass_notes},
                        {"layout_drift", res->layout_drift},
                        {"outputs", nlohmann::json::array()}, {"per_node", nullptr}, {"sweep", nullptr}};
    for (const auto& v : res->outputs) j["outputs"].push_back(ValueJson(v));
    if (res->per_node) j["per_node"] = PerNodeJson(res->nodes);
    if (sweep) j["sweep"] = SweepJson(*sweep);
    std::ofstream out(a.json);
    out << j.dump(1) << "\n";
    if (!out) return ReportError("verify", IoError("--json '" + a.json + "': cannot write the file"), kExitUsage);
  }
  return ok ? 0 : kExitRunError;
}

}  // namespace

void AddVerifyCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<VerifyArgs>();
  CLI::App* sub = app.add_subcommand("verify", "run a model on a provider and on the reference provider and compare (per node too)");
  sub->add_option("MODEL", a->model, "ONNX model file")->required();
  sub->add_option("--provider", a->provider, "provider to check (default cpu)");
  sub->add_option("--opt-level", a->opt_level, "optimization level of the provider's session: disable, basic, extended, all");
  sub->add_option("--threads", a->threads, "worker threads of the provider's session (0 = all cores)");
  sub->add_option("--input", a->feed.inputs, "NAME=FILE: an input from a .npy / .pb / .bin file; repeatable");
  sub->add_option("--shape", a->feed.shapes, "NAME=DIMS: shape of a generated input (1x3x224x224); repeatable");
  sub->add_option("--seed", a->feed.seed, "seed of the generated inputs");
  sub->add_option("--inputs", a->inputs, "generated inputs: random (default) or position (see below)");
  sub->add_flag("--per-node", a->per_node, "tap every value of the provider's plan, and run each node alone to find the first divergence");
  sub->add_flag("--sweep", a->sweep, "repeat the check at every opt level and with each suspect node on the reference provider");
  sub->add_flag("--strict-nodes", a->strict_nodes, "per-node values use the plain tolerance rule too (see below)");
  sub->add_option("--json", a->json, "also write every result to FILE as JSON");
  a->rtol_opt = sub->add_option("--rtol", a->rtol, "relative tolerance of every float value (default per dtype)");
  a->atol_opt = sub->add_option("--atol", a->atol, "absolute tolerance of every float value (default per dtype)");
  sub->add_option("--tol", a->tols, "NAME=RTOL,ATOL: tolerances of one output or intermediate value; repeatable");
  sub->footer(
      "The reference session runs its own copy of the model as loaded (no passes); both get the same inputs.\n"
      "--inputs position: each generated float input holds its own coordinates: element k (row-major index)\n"
      "has the value k / 2^e, 2^e the smallest power of two >= its element count, so values lie in [0, 1)\n"
      "and a value v names element v * 2^e (exact in float32 up to 2^24 elements; float16 2^11, bfloat16 2^8).\n"
      "A misplaced read then shows which element was read. Non-float inputs stay random; --input files win.\n"
      "--per-node compares every value the plan computes (in canonical layout) with the reference's value of\n"
      "the same name, reports values fused away, then runs each planned node alone on the reference's inputs\n"
      "(laid out as the plan held them) and names the first node that is wrong by itself. Per-node values\n"
      "pass with atol raised to rtol * max|ref| of the value (float32 rounding of deep intermediate values;\n"
      "misplaced values still fail); --strict-nodes keeps the plain rule, --tol NAME=... sets one value's.\n"
      "Tolerances as in `kiln compare`. Exit codes: 0 all agree, 1 a mismatch, 2 bad arguments or load errors.");
  cmds.Add(sub, [a] { return DoVerify(*a); });
}

}  // namespace kiln::cli
