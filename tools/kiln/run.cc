// kiln run MODEL [--provider NAME] [--input NAME=FILE]... [--shape NAME=DIMS]...
//                [--output-dir DIR] [--seed N] [--save-inputs DIR]
// Runs a model once. Inputs come from .npy, .pb (TensorProto) or raw .bin
// files; the others are generated from the seed (see GenerateInput). Prints
// one summary line per output and, with --output-dir, writes each output as
// <output name>.npy.
//
// kiln gen-inputs MODEL [--shape NAME=DIMS]... [--seed N] --output-dir DIR
// Writes the inputs `kiln run` would generate, as .npy, without running
// (so other runtimes can be fed exactly the same values).
#include <cstdio>
#include <filesystem>

#include "cli_util.h"
#include "commands.h"
#include "onnx/onnx_io.h"
#include "runtime/profile.h"
#include "runtime/session_internal.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

struct RunArgs {
  std::string model;
  std::string provider = "reference";
  std::string opt_level = "all";
  FeedArgs feed;
  std::string output_dir;
  std::string save_inputs;
  int threads = 0;
  int profile = 0;  // runs to profile; 0 = off
  uint64_t memory_limit = 0;
  CacheOptions cache;
};

Status EnsureDir(const std::string& dir, const char* option) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) return IoError(std::string(option) + " '" + dir + "': cannot create the folder");
  return Status::Ok();
}

Status SaveFeeds(const std::map<std::string, Datum>& feeds, const std::string& dir) {
  KILN_RETURN_IF_ERROR(EnsureDir(dir, "--save-inputs"));
  for (const auto& [n, d] : feeds) {
    if (!d.is_tensor()) continue;
    std::string note;
    KILN_RETURN_IF_ERROR(WriteTensorNpy((fs::path(dir) / (SafeFileName(n) + ".npy")).string(), d.tensor(), &note));
  }
  return Status::Ok();
}

int DoRun(const RunArgs& a) {
  SessionOptions opts;
  opts.provider = a.provider;
  opts.opt_level = a.opt_level;
  opts.threads = a.threads;
  opts.memory_limit = a.memory_limit;
  ApplyCacheOptions(a.cache, opts);
  auto session = Session::Create(a.model, opts);
  if (!session.ok()) return ReportError("run", session.status(), kExitUsage);
  const Session& s = **session;
  auto feeds = MakeFeeds(s.inputs(), a.feed);
  if (!feeds.ok()) return ReportError("run", feeds.status(), kExitUsage);
  if (!a.save_inputs.empty()) {
    Status st = SaveFeeds(*feeds, a.save_inputs);
    if (!st.ok()) return ReportError("run", st, kExitUsage);
  }
  if (!a.output_dir.empty()) {
    Status st = EnsureDir(a.output_dir, "--output-dir");
    if (!st.ok()) return ReportError("run", st, kExitUsage);
  }
  auto outs = s.RunDatums(*feeds);
  if (!outs.ok()) return ReportError("run", outs.status(), kExitRunError);
  if (a.profile > 0) {
    auto prof = ProfileRuns(s, *feeds, a.profile);
    if (!prof.ok()) return ReportError("run", prof.status(), kExitRunError);
    std::fputs(FormatProfile(*prof).c_str(), stderr);
  }
  for (size_t i = 0; i < outs->size(); ++i) {
    const std::string& name = s.outputs()[i].name;
    const Datum& d = (*outs)[i];
    if (d.is_sequence()) {
      std::printf("%s  %s\n", name.c_str(), d.Describe().c_str());
      for (size_t k = 0; k < d.sequence().size(); ++k)
        std::printf("  %s\n", SummaryLine("[" + std::to_string(k) + "]", d.sequence()[k]).c_str());
    } else {
      std::printf("%s\n", SummaryLine(name, d).c_str());
    }
    if (a.output_dir.empty()) continue;
    std::vector<std::pair<std::string, Tensor>> files;
    const std::string base = (fs::path(a.output_dir) / SafeFileName(name)).string();
    if (d.is_tensor()) files.push_back({base + ".npy", d.tensor()});
    for (size_t k = 0; d.is_sequence() && k < d.sequence().size(); ++k)
      files.push_back({base + "." + std::to_string(k) + ".npy", d.sequence()[k]});
    for (const auto& [path, t] : files) {
      std::string note;
      Status st = WriteTensorNpy(path, t, &note);
      if (!st.ok()) return ReportError("run", st, kExitRunError);
      if (!note.empty() && !a.feed.quiet) std::fprintf(stderr, "%s\n", note.c_str());
    }
  }
  return 0;
}

int DoGenInputs(const RunArgs& a) {
  // Loading the model file only (no session): the inputs are known even
  // when kiln cannot run the model.
  auto model = onnx_io::LoadModelFile(a.model);
  if (!model.ok()) return ReportError("gen-inputs", model.status(), kExitUsage);
  auto feeds = MakeFeeds(InputInfos(model->graph), a.feed, true);
  if (!feeds.ok()) return ReportError("gen-inputs", feeds.status(), kExitUsage);
  Status st = SaveFeeds(*feeds, a.output_dir);
  if (!st.ok()) return ReportError("gen-inputs", st, kExitUsage);
  for (const auto& [n, d] : *feeds) std::printf("%s\n", SummaryLine(n, d).c_str());
  return 0;
}

void AddCommonOptions(CLI::App* sub, RunArgs& a) {
  sub->add_option("MODEL", a.model, "ONNX model file")->required();
  sub->add_option("--shape", a.feed.shapes, "NAME=DIMS (e.g. x=1x3x40x40): shape of a raw .bin input or of a generated one");
  sub->add_option("--seed", a.feed.seed, "seed of generated inputs (default 0)");
}

}  // namespace

void AddRunCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "run a model once and summarize its outputs");
  AddCommonOptions(sub, *a);
  sub->add_option("--provider", a->provider, "execution provider (default reference)");
  sub->add_option("--opt-level", a->opt_level, "graph optimization level: disable, basic, extended, all");
  sub->add_option("--input", a->feed.inputs, "NAME=FILE: .npy, .pb (ONNX TensorProto) or raw .bin (with --shape)");
  sub->add_option("--output-dir", a->output_dir, "write each output as DIR/<name>.npy");
  sub->add_option("--save-inputs", a->save_inputs, "write the inputs used (given or generated) as DIR/<name>.npy");
  sub->add_flag("--quiet", a->feed.quiet, "no notes on stderr");
  sub->add_option("--threads", a->threads, "worker threads (default: the cores available)");
  sub->add_option("--memory-limit", a->memory_limit, "most bytes of tensors the run may hold at once (default: no limit)");
  sub->add_option("--profile", a->profile, "after the run, time N more runs per node and print the profile on stderr");
  AddCacheOptions(sub, a->cache);
  sub->footer(
      "Inputs not given are generated from --seed: floats uniform in [-1, 1), integers uniform in [0, 10),\n"
      "bool 0/1 at random; dynamic dims are 1 unless --shape sets them.\n"
      "Exit codes: 0 ok, 1 the run failed, 2 bad arguments or a model/input that cannot be loaded.");
  cmds.Add(sub, [a] { return DoRun(*a); });
}

void AddGenInputsCommand(CLI::App& app, Commands& cmds) {
  auto g = std::make_shared<RunArgs>();
  CLI::App* gen = app.add_subcommand("gen-inputs", "write the seeded inputs `kiln run` would generate, as .npy");
  AddCommonOptions(gen, *g);
  gen->add_option("--output-dir", g->output_dir, "folder for <input name>.npy")->required();
  cmds.Add(gen, [g] { return DoGenInputs(*g); });
}

}  // namespace kiln::cli
