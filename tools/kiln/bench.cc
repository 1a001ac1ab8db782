// kiln bench MODEL [--provider NAME] [--threads N] [--opt-level L]
//                  [--input NAME=FILE]... [--shape NAME=DIMS]... [--seed N]
//                  [--warmup N] [--runs N] [--json FILE]
// Times a model: session creation, then --warmup untimed runs and --runs
// timed ones on the same feeds. Reports latency min/median/p90/p99/mean,
// throughput and peak RSS (getrusage ru_maxrss, and its increase over the
// baseline taken before the model is loaded). Inputs are read or generated
// exactly as `kiln run` does (cli_util), so `kiln gen-inputs` files and
// generated inputs give the same values. bench/compare.sh runs it side by
// side with ONNX Runtime (bench/ort_bench.mjs, same JSON latency fields).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "commands.h"
#include "runtime/buffer_pool.h"
#include "runtime/profile.h"
#include "runtime/session_internal.h"

namespace kiln::cli {
namespace {

struct BenchArgs {
  std::string model;
  std::string provider = "reference";
  std::string opt_level = "all";
  int threads = 0;
  FeedArgs feed;
  int warmup = 3;
  int runs = 20;
  int profile = 0;  // after timing, N profiled runs (per-op and per-node times)
  std::string json;
  CacheOptions cache;
};

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Peak resident set size of this process so far, in bytes (Linux reports KiB).
int64_t PeakRssBytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

// Percentile with linear interpolation between closest ranks (NumPy's
// default); bench/ort_bench.mjs computes it the same way.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

int DoBench(const BenchArgs& a) {
  if (a.runs < 1) return ReportError("bench", InvalidArgument("--runs must be >= 1"), kExitUsage);
  if (a.warmup < 0) return ReportError("bench", InvalidArgument("--warmup must be >= 0"), kExitUsage);
  const int64_t baseline_rss = PeakRssBytes();

  SessionOptions opts;
  opts.provider = a.provider;
  opts.opt_level = a.opt_level;
  opts.threads = a.threads;
  ApplyCacheOptions(a.cache, opts);
  const auto t_create = Clock::now();
  auto session = Session::Create(a.model, opts);
  const double create_ms = MsSince(t_create);
  if (!session.ok()) return ReportError("bench", session.status(), kExitUsage);
  const Session& s = **session;
  // With the plan cache on, a second creation shows the warm time (the
  // first one wrote the entry if it was a miss).
  double warm_ms = -1;
  Session::Impl::CreateTimes warm_times;
  if (s.impl().create_times.cache != "off") {
    const auto t_warm = Clock::now();
    auto again = Session::Create(a.model, opts);
    warm_ms = MsSince(t_warm);
    if (!again.ok()) return ReportError("bench", again.status().WithContext("second session"), kExitUsage);
    warm_times = (*again)->impl().create_times;
  }
  auto feeds = MakeFeeds(s.inputs(), a.feed);
  if (!feeds.ok()) return ReportError("bench", feeds.status(), kExitUsage);

  for (int i = 0; i < a.warmup; ++i) {
    auto outs = s.RunDatums(*feeds);
    if (!outs.ok()) return ReportError("bench", outs.status().WithContext("warmup run " + std::to_string(i + 1)), kExitRunError);
  }
  std::vector<double> ms;
  ms.reserve(a.runs);
  const auto t_all = Clock::now();
  for (int i = 0; i < a.runs; ++i) {
    const auto t0 = Clock::now();
    auto outs = s.RunDatums(*feeds);
    ms.push_back(MsSince(t0));
    if (!outs.ok()) return ReportError("bench", outs.status().WithContext("run " + std::to_string(i + 1)), kExitRunError);
  }
  const double total_ms = MsSince(t_all);
  const int64_t peak_rss = PeakRssBytes();
  // The session's buffer pool: the most intermediate memory live at once,
  // and how many blocks were taken from the system (all in the first run
  // for a static-shape model).
  const auto pool = s.impl().executor->pool().stats();

  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0;
  for (double v : ms) sum += v;
  const double mean = sum / static_cast<double>(ms.size());
  const double median = Percentile(sorted, 50), p90 = Percentile(sorted, 90), p99 = Percentile(sorted, 99);
  const double throughput = total_ms > 0 ? 1000.0 * a.runs / total_ms : 0;
  const double mib = 1024.0 * 1024.0;

  std::printf("model       %s\n", a.model.c_str());
  std::printf("provider    %s  (opt-level %s, threads %d%s)\n", a.provider.c_str(), a.opt_level.c_str(), a.threads,
              a.threads == 0 ? " = cores available" : "");
  auto print_create = [](const char* label, double ms, const Session::Impl::CreateTimes& ct) {
    std::printf("%-11s %.2f ms  (plan cache %s; load %.1f, optimize %.1f, plan and pack %.1f, cache write %.1f)\n", label, ms,
                ct.cache.c_str(), ct.load_ms, ct.optimize_ms, ct.plan_ms, ct.cache_store_ms);
  };
  print_create("create", create_ms, s.impl().create_times);
  if (warm_ms >= 0) print_create("create again", warm_ms, warm_times);
  std::printf("latency ms  min %.3f  median %.3f  p90 %.3f  p99 %.3f  mean %.3f  (%d runs after %d warmup)\n", sorted.front(),
              median, p90, p99, mean, a.runs, a.warmup);
  std::printf("throughput  %.2f runs/s\n", throughput);
  std::printf("peak RSS    %.1f MiB  (+%.1f MiB over the pre-load baseline of %.1f MiB)\n", peak_rss / mib,
              (peak_rss - baseline_rss) / mib, baseline_rss / mib);
  std::printf("buffers     peak %.1f MiB live  (%llu blocks from the system, %llu reuses)\n", pool.peak_in_use / mib,
              static_cast<unsigned long long>(pool.system_allocations), static_cast<unsigned long long>(pool.reuses));

  // Every node's time goes to --json (the table prints the slowest only).
  nlohmann::json profile_nodes = nullptr;
  if (a.profile > 0) {
    auto prof = ProfileRuns(s, *feeds, a.profile);
    if (!prof.ok()) return ReportError("bench", prof.status(), kExitRunError);
    std::fputs(FormatProfile(*prof).c_str(), stdout);
    profile_nodes = nlohmann::json::array();
    for (const NodeProfile& n : prof->nodes)
      profile_nodes.push_back({{"name", n.name}, {"op_type", n.op_type}, {"provider", n.provider}, {"ms_per_run", n.total_ms / a.profile}});
  }

  if (!a.json.empty()) {
    nlohmann::json j = {
        {"runtime", "kiln"},
        {"model", a.model},
        {"provider", a.provider},
        {"opt_level", a.opt_level},
        {"threads", a.threads},
        {"warmup", a.warmup},
        {"runs", a.runs},
        {"create_ms", create_ms},
        {"create_load_ms", s.impl().create_times.load_ms},
        {"create_optimize_ms", s.impl().create_times.optimize_ms},
        {"create_plan_ms", s.impl().create_times.plan_ms},
        {"create_cache", s.impl().create_times.cache},
        {"create_again_ms", warm_ms >= 0 ? nlohmann::json(warm_ms) : nlohmann::json(nullptr)},
        {"create_again_cache", warm_ms >= 0 ? nlohmann::json(warm_times.cache) : nlohmann::json(nullptr)},
        {"latency_ms", {{"min", sorted.front()}, {"median", median}, {"p90", p90}, {"p99", p99}, {"mean", mean}, {"max", sorted.back()}}},
        {"samples_ms", ms},
        {"throughput_per_s", throughput},
        {"peak_rss_bytes", peak_rss},
        {"baseline_rss_bytes", baseline_rss},
        {"rss_increase_bytes", peak_rss - baseline_rss},
        {"buffer_peak_bytes", pool.peak_in_use},
        {"buffer_system_allocations", pool.system_allocations},
        {"profile_nodes", profile_nodes},
    };
    std::ofstream out(a.json);
    out << j.dump(1) << "\n";
    if (!out) return ReportError("bench", IoError("--json '" + a.json + "': cannot write the file"), kExitRunError);
  }
  return 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* sub = app.add_subcommand("bench", "time a model: session creation, latency percentiles, throughput, peak RSS");
  sub->add_option("MODEL", a->model, "ONNX model file")->required();
  sub->add_option("--provider", a->provider, "execution provider (default reference)");
  sub->add_option("--threads", a->threads, "worker threads; 0 = the cores available (default 0)");
  sub->add_option("--opt-level", a->opt_level, "graph optimization level: disable, basic, extended, all (default all)");
  sub->add_option("--input", a->feed.inputs, "NAME=FILE: .npy, .pb (ONNX TensorProto) or raw .bin (with --shape)");
  sub->add_option("--shape", a->feed.shapes, "NAME=DIMS (e.g. x=1x3x40x40): shape of a raw .bin input or of a generated one");
  sub->add_option("--seed", a->feed.seed, "seed of generated inputs (default 0)");
  sub->add_option("--warmup", a->warmup, "untimed runs first (default 3)");
  sub->add_option("--runs", a->runs, "timed runs (default 20)");
  sub->add_option("--profile", a->profile, "after timing, N more runs timed per node: per-op and slowest-node tables");
  sub->add_option("--json", a->json, "also write every figure (and each run's time) to FILE as JSON");
  AddCacheOptions(sub, a->cache);
  sub->footer(
      "Inputs not given are generated from --seed as `kiln run` does. Latencies are wall-clock per Run, in ms;\n"
      "percentiles interpolate linearly between ranks. Peak RSS is getrusage ru_maxrss.\n"
      "Exit codes: 0 ok, 1 a run failed, 2 bad arguments or a model/input that cannot be loaded.");
  cmds.Add(sub, [a] { return DoBench(*a); });
}

}  // namespace kiln::cli
