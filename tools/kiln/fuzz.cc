// kiln fuzz [--seed S] [--count N] [--provider cpu] [--opt-level L|all-levels]
//           [--threads T] [--out DIR] [--no-reduce] [--emit DIR] [--skip S,...] [--no-isolate]
// Differential graph fuzzing (src/verify/fuzz.h): graph i is the graph of
// seed S+i; each runs on the reference provider and on the provider at each
// opt level, and every output is compared. One line per failure, then
// "N passed, N failed". Exit codes: 0 all passed, 1 a failure, 2 bad arguments.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "verify/fuzz.h"

namespace kiln::cli {
namespace {

struct FuzzArgs {
  uint64_t seed = 1;
  int64_t count = 100;
  std::string provider = "cpu";
  std::string opt_level = "all";
  int threads = 0;
  std::string out;
  std::string emit;
  std::vector<std::string> skip;
  bool no_isolate = false;
  bool no_divergence = false;
  bool no_reduce = false;
  int max_reduce_checks = 400;
  bool verbose = false;
  int max_ops = 0;
  int max_channels = 0;
  double float16 = 0;
  int timeout = 120;
};

int DoFuzz(const FuzzArgs& a) {
  verify::FuzzConfig c;
  c.seed = a.seed;
  c.count = a.count;
  c.provider = a.provider;
  c.threads = a.threads;
  c.out_dir = a.out;
  c.emit_dir = a.emit;
  c.isolate = !a.no_isolate;
  c.find_divergence = !a.no_divergence;
  c.reduce = !a.no_reduce;
  c.max_reduce_checks = a.max_reduce_checks;
  c.timeout_s = a.timeout;
  if (a.max_ops > 0) c.graph.max_ops = a.max_ops;
  if (a.max_channels > 0) {
    // Wider convolutions on smaller maps: a channel axis may double in a
    // Concat, and the element bound keeps a graph's run short.
    verify::FuzzLimits& l = c.graph.limits;
    l.max_channels = a.max_channels;
    l.max_dim = std::max<int64_t>(l.max_dim, 2 * a.max_channels);
    l.max_numel = std::max<int64_t>(l.max_numel, 2 * a.max_channels * 12 * 12);
  }
  c.graph.float16_probability = a.float16;
  if (c.graph.min_ops > c.graph.max_ops) c.graph.min_ops = c.graph.max_ops;
  auto levels = verify::ParseFuzzLevels(a.opt_level);
  if (!levels.ok()) {
    std::cerr << "kiln fuzz: " << levels.status().message() << "\n";
    return 2;
  }
  c.levels = *levels;
  for (const std::string& list : a.skip) {
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
      try {
        c.skip_seeds.insert(std::stoull(item));
      } catch (...) {
        std::cerr << "kiln fuzz: --skip '" << item << "' is not a seed\n";
        return 2;
      }
    }
  }
  if (a.max_reduce_checks < 1) {
    std::cerr << "kiln fuzz: --max-reduce-checks must be at least 1\n";
    return 2;
  }
  if (a.count < 0) {
    std::cerr << "kiln fuzz: --count must be >= 0\n";
    return 2;
  }
  verify::FuzzSummary s = verify::RunFuzz(c, [&](const verify::FuzzGraphResult& r) {
    if (a.verbose) std::printf("seed %llu %s: %s\n", static_cast<unsigned long long>(r.seed),
                               r.skipped ? "skipped" : r.ok() ? "ok" : "FAIL", r.productions.c_str());
    for (const verify::FuzzFailure& f : r.failures) std::printf("%s\n", verify::FormatFuzzFailure(f).c_str());
    std::fflush(stdout);
  });
  std::string levels_text;
  for (const std::string& l : c.levels) levels_text += (levels_text.empty() ? "" : ",") + l;
  std::printf("%lld passed, %lld failed", static_cast<long long>(s.passed), static_cast<long long>(s.failed));
  if (s.skipped) std::printf(", %lld skipped", static_cast<long long>(s.skipped));
  std::printf(" (seeds %llu..%llu, provider %s, levels %s, %.1f s)\n", static_cast<unsigned long long>(c.seed),
              static_cast<unsigned long long>(c.seed + static_cast<uint64_t>(a.count) - 1), c.provider.c_str(),
              levels_text.c_str(), s.seconds);
  if (s.failed && c.out_dir.empty()) std::printf("no reproducers written: pass --out DIR\n");
  if (s.failed && !c.out_dir.empty())
    std::printf("replay a reproducer with: kiln conformance %s/seed_<S> --provider %s --opt-level <its level> (see its README.txt)\n",
                c.out_dir.c_str(), c.provider.c_str());
  return s.failed ? 1 : 0;
}

}  // namespace

void AddFuzzCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<FuzzArgs>();
  CLI::App* sub = app.add_subcommand("fuzz", "random layout-stressing graphs on a provider against the reference provider");
  sub->add_option("--seed", a->seed, "seed of the first graph (graph i has seed S+i)");
  sub->add_option("--count", a->count, "number of graphs (default 100)");
  sub->add_option("--provider", a->provider, "provider to check (default cpu)");
  sub->add_option("--opt-level", a->opt_level, "disable, basic, extended, all (default), a comma list, or all-levels");
  sub->add_option("--threads", a->threads, "worker threads of the provider's sessions (0 = all cores)");
  sub->add_option("--out", a->out, "write each failing graph as an ONNX backend-test folder OUT/seed_<S>/");
  sub->add_flag("--no-reduce", a->no_reduce, "write failing graphs whole, without kiln reduce");
  sub->add_option("--max-reduce-checks", a->max_reduce_checks, "most candidate checks per reduction (default 400)");
  sub->add_option("--emit", a->emit, "write every graph, with the reference's outputs, as a backend-test folder EMIT/seed_<S>/");
  sub->add_option("--skip", a->skip, "seeds not to run (known bugs), comma-separated; repeatable");
  sub->add_option("--max-ops", a->max_ops, "most productions per graph (default 10)");
  sub->add_option("--max-channels", a->max_channels,
                  "most output channels of a generated convolution (default 32; more reaches kernels' multi-panel paths)")
      ->check(CLI::Range(1, 512));
  sub->add_option("--float16", a->float16, "probability that a graph is made float16 (default 0; 1 = all)")->check(CLI::Range(0.0, 1.0));
  sub->add_option("--timeout", a->timeout, "seconds per graph before it counts as hung (default 120)");
  sub->add_flag("--no-isolate", a->no_isolate, "run graphs in this process (a crash ends the run)");
  sub->add_flag("--no-divergence", a->no_divergence, "skip the per-node run that names the first divergent node");
  sub->add_flag("-v,--verbose", a->verbose, "one line per graph with the productions it holds");
  sub->footer(
      "Each graph runs on the reference provider (the model as generated) and on the provider at each level,\n"
      "on seeded inputs; outputs compare under the dtype's default tolerance (float32 rtol 1e-3, atol 1e-4).\n"
      "A failure line gives seed, level, output, compare's reason with the diagnosis, and the first divergent\n"
      "node from verify --per-node. With --out, each failing graph is shrunk by kiln reduce at its first\n"
      "failing level: OUT/seed_<S>/ is the reduced reproducer, OUT/seed_<S>/full/ the whole graph.");
  cmds.Add(sub, [a] { return DoFuzz(*a); });
}

}  // namespace kiln::cli
