// kiln reduce MODEL [--provider cpu] -o DIR [--check CMD] [--opt-level L]
//                   [--input NAME=FILE]... [--shape NAME=DIMS]... [--seed S]
//                   [--no-layout-producers] [--max-checks N] [-v]
// Shrinks a model that mismatches on a provider (or that satisfies --check
// CMD: CMD runs through the shell with the candidate model's path appended,
// exit 0 = still interesting) to a small subgraph by delta debugging
// (src/verify/reduce.h), and writes it as an ONNX backend test:
// DIR/model.onnx, DIR/test_data_set_0/input_*.pb (the reproducer's inputs:
// the model's own, and the recorded reference values of removed producers)
// and output_*.pb (the reference's outputs), so `kiln conformance DIR`
// replays it. Prints what it removed, what it kept and how the reproducer
// fails. This file only reads arguments and prints.
// Exit codes: 0 a reproducer was written, 1 the model does not fail (nothing
// to reduce), 2 bad arguments, a model or input that cannot be loaded, or a
// folder that cannot be written.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli_util.h"
#include "commands.h"
#include "onnx/onnx_io.h"
#include "verify/reduce.h"
#include "verify/verify.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

struct ReduceArgs {
  std::string model;
  std::string provider = "cpu";
  std::string opt_level = "all";
  std::string output;
  std::string check;
  FeedArgs feed;
  bool no_layout_producers = false;
  int max_checks = 1000;
  bool verbose = false;
};

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// How the reproducer does on the provider (the compare verdict line).
std::string ProviderVerdict(const verify::CandidateModel& c, const ReduceArgs& a) {
  auto oracle = verify::MakeMismatchOracle(a.provider, a.opt_level, {}, true);
  auto v = oracle->Check(c);
  if (!v.ok()) return "cannot verify on " + a.provider + ": " + v.status().ToString();
  if (!v->interesting) return "every output agrees with the reference on " + a.provider;
  return v->description;
}

int DoReduce(const ReduceArgs& a) {
  auto model = onnx_io::LoadModelFile(a.model);
  if (!model.ok()) return ReportError("reduce", model.status(), kExitUsage);
  auto feeds = MakeFeeds(InputInfos(model->graph), a.feed);
  if (!feeds.ok()) return ReportError("reduce", feeds.status(), kExitUsage);
  if (a.max_checks < 1) return ReportError("reduce", InvalidArgument("--max-checks must be at least 1"), kExitUsage);
  {
    std::error_code ec;
    fs::create_directories(a.output, ec);
    if (ec || !fs::is_directory(a.output))
      return ReportError("reduce", IoError("cannot create output folder '" + a.output + "'" + (ec ? ": " + ec.message() : "")), kExitUsage);
  }

  verify::ReduceOptions o;
  o.provider = a.provider;
  o.opt_level = a.opt_level;
  o.keep_layout_producers = !a.no_layout_producers;
  o.max_oracle_calls = a.max_checks;
  if (a.verbose) o.log = [](const std::string& line) { std::printf("  %s\n", line.c_str()); };

  std::unique_ptr<verify::Oracle> oracle;
  std::string scratch;
  if (!a.check.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "kiln-reduce-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) return ReportError("reduce", IoError("cannot create a scratch folder"), kExitUsage);
    scratch = tmpl;
    oracle = verify::MakeCommandOracle(a.check, scratch);
    std::printf("reduce %s: interesting = --check '%s' exits 0 on the candidate\n", a.model.c_str(), a.check.c_str());
  } else {
    std::printf("reduce %s: %s (opt level %s) against reference\n", a.model.c_str(), a.provider.c_str(), a.opt_level.c_str());
  }
  for (const auto& [n, d] : *feeds) std::printf("  input %s\n", SummaryLine(n, d).c_str());

  auto res = verify::Reduce(*model, *feeds, o, oracle.get());
  if (!scratch.empty()) {
    std::error_code ec;
    fs::remove_all(scratch, ec);
  }
  if (!res.ok()) return ReportError("reduce", res.status(), kExitUsage);
  if (!res->failed_initially) {
    if (a.check.empty())
      std::printf("\n%s does not fail on %s: every output agrees with the reference (nothing to reduce)\n", a.model.c_str(),
                  a.provider.c_str());
    else
      std::printf("\n--check '%s' does not exit 0 on %s itself (nothing to reduce)\n", a.check.c_str(), a.model.c_str());
    return kExitRunError;
  }
  std::printf("\n%s: %s\n", a.check.empty() ? "fails" : "interesting", res->initial_description.c_str());
  if (!res->failing_node.empty()) {
    std::printf("failing node: %s", res->protected_nodes.front().c_str());
    if (res->protected_nodes.size() > 1)
      std::printf("; kept with its layout producer(s) %s",
                  Join(std::vector<std::string>(res->protected_nodes.begin() + 1, res->protected_nodes.end())).c_str());
    std::printf("\n");
  }

  const verify::CandidateModel& red = res->reduced;
  std::printf("\nreduced %zu -> %zu nodes in %d checks: removed %zu (%zu replaced by inputs, %zu bypassed, %zu dead)\n",
              res->original_nodes, res->kept_nodes.size(), res->oracle_calls,
              res->replaced + res->bypassed + res->dead, res->replaced, res->bypassed, res->dead);
  std::printf("kept: %s\n", Join(res->kept_nodes).c_str());
  std::vector<std::string> ins, outs;
  for (const ir::Value* v : red.model.graph.RealInputs()) {
    const bool recorded = std::find(red.replaced_inputs.begin(), red.replaced_inputs.end(), v->name) != red.replaced_inputs.end();
    ins.push_back(v->name + " " + v->type.ToString() + (recorded ? " (recorded reference value)" : ""));
  }
  for (const ir::Value& v : red.model.graph.outputs) outs.push_back(v.name);
  std::printf("inputs: %s\noutputs: %s\n", Join(ins).c_str(), Join(outs).c_str());

  std::printf("\nreproducer: %s\n", res->final_description.c_str());
  if (!a.check.empty()) std::printf("on %s: %s\n", a.provider.c_str(), ProviderVerdict(red, a).c_str());

  Status st = verify::WriteReproducer(red, a.output);
  if (!st.ok()) return ReportError("reduce", st, kExitUsage);
  std::printf("wrote %s/model.onnx and %s/test_data_set_0 (%zu inputs, %zu outputs); replay: kiln conformance %s --provider %s\n",
              a.output.c_str(), a.output.c_str(), ins.size(), outs.size(), a.output.c_str(), a.provider.c_str());
  return 0;
}

}  // namespace

void AddReduceCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<ReduceArgs>();
  CLI::App* sub = app.add_subcommand("reduce", "shrink a failing model to a small reproducer (delta debugging)");
  sub->add_option("MODEL", a->model, "ONNX model file")->required();
  sub->add_option("--provider", a->provider, "provider under test, against the reference (default cpu)");
  sub->add_option("--opt-level", a->opt_level, "graph optimization level of the provider: disable, basic, extended, all");
  sub->add_option("-o,--output", a->output, "folder for model.onnx and test_data_set_0/")->required();
  sub->add_option("--check", a->check, "shell command; the candidate's model path is appended; exit 0 = still interesting");
  sub->add_option("--input", a->feed.inputs, "NAME=FILE: .npy, .pb (ONNX TensorProto) or raw .bin (with --shape)");
  sub->add_option("--shape", a->feed.shapes, "NAME=DIMS: shape of a raw .bin input or of a generated one");
  sub->add_option("--seed", a->feed.seed, "seed of generated inputs (default 0)");
  sub->add_flag("--no-layout-producers", a->no_layout_producers,
                "let the reducer remove the Transposes upstream of the failing node too");
  sub->add_option("--max-checks", a->max_checks, "most candidates to check (default 1000)");
  sub->add_flag("-v,--verbose", a->verbose, "print every accepted step");
  cmds.Add(sub, [a] { return DoReduce(*a); });
}

}  // namespace kiln::cli
