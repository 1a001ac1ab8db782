// `kiln fuzz`: differential graph fuzzing. Graph i of a run is the graph of
// seed S + i (fuzz_grammar.h), so a graph is identified by its seed alone.
// Each graph runs on the reference provider (the oracle, the model as
// generated) and on the provider under test at each requested opt level, on
// the same seeded inputs; every output is compared (compare.h) under the
// dtype's default tolerance (float32: rtol 1e-3, atol 1e-4). On a mismatch
// the graph, its inputs and the reference's outputs are written as an ONNX
// backend-test folder (model.onnx, test_data_set_0/input_<i>.pb,
// output_<j>.pb: `kiln conformance DIR --provider P` replays it at opt level
// all), the failure is diagnosed (diagnose.h) and, where verify's per-node
// run can name it, the first divergent node is reported.
//
// With an output folder, a failing graph is then shrunk by `kiln reduce`
// (reduce.h) at the first failing level: OUT/seed_<S>/ is the reduced
// reproducer (backend-test folder plus README.txt naming the level and
// threads to replay it with), OUT/seed_<S>/full/ the whole generated graph.
// When the reduction cannot run (the reference itself fails, or the failure
// does not reproduce on the reduced candidates), OUT/seed_<S>/ holds the
// whole graph and README.txt says why it is not reduced.
//
// Each graph runs in a forked child by default, so a crash or a hang in a
// kernel is one failed graph, not the end of the run.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "verify/fuzz_grammar.h"

namespace kiln::verify {

// "all-levels" (or "all_levels") -> disable, basic, extended, all; a
// comma-separated list of levels otherwise.
Result<std::vector<std::string>> ParseFuzzLevels(const std::string& text);

struct FuzzConfig {
  uint64_t seed = 1;
  int64_t count = 100;
  std::string provider = "cpu";
  std::vector<std::string> levels = {"all"};
  int threads = 0;                 // the provider session's threads (0 = the cores available)
  std::string out_dir;             // reproducers go to OUT/seed_<S>/; "" = not written
  std::string emit_dir;            // every graph (with the reference's outputs) to EMIT/seed_<S>/; "" = none
  std::set<uint64_t> skip_seeds;   // known bugs, not run (counted as skipped)
  FuzzOptions graph;
  bool find_divergence = true;     // on a mismatch, verify --per-node names the first divergent node
  bool reduce = true;              // with out_dir: shrink each failing graph (reduce.h)
  int max_reduce_checks = 400;     // oracle calls per reduction
  bool isolate = true;             // one forked child per graph
  int timeout_s = 120;             // per graph, when isolated
};

struct FuzzFailure {
  uint64_t seed = 0;
  std::string level;       // the opt level; "reference" when the oracle itself failed (a generator or reference bug)
  std::string output;      // the output that disagrees; "" for a failed session or run
  std::string what;        // compare's reason and the diagnosis, or the error
  std::string divergence;  // verify's first-divergence summary, "" when not found
  std::string reproducer;  // the folder written, "" when none
  std::string reduction;   // "reduced from 31 to 3 nodes at level basic", or why not reduced; "" when nothing was written
};

struct FuzzGraphResult {
  uint64_t seed = 0;
  bool skipped = false;
  std::string productions;  // the grammar's record of the graph
  std::vector<FuzzFailure> failures;
  bool ok() const { return failures.empty(); }
};

// One graph, in this process.
FuzzGraphResult FuzzGraph(uint64_t seed, const FuzzConfig& config);

struct FuzzSummary {
  int64_t passed = 0, failed = 0, skipped = 0;  // graphs
  double seconds = 0;
  std::vector<FuzzFailure> failures;
};

// The whole run; `on_graph` sees each graph's result as it completes.
FuzzSummary RunFuzz(const FuzzConfig& config, const std::function<void(const FuzzGraphResult&)>& on_graph = {});

// "seed 17 level extended output 'Conv_3_out0': 12 of 60 elements outside ...; misplaced values ...
//  | first divergence: ... | reproducer DIR (reduced from 31 to 3 nodes at level all)"
std::string FormatFuzzFailure(const FuzzFailure& f);

// Writes an ONNX backend-test folder: DIR/model.onnx,
// DIR/test_data_set_0/input_<i>.pb (the graph's real inputs in order) and
// output_<j>.pb (`outputs`, the graph's outputs in order).
Status WriteBackendTestFolder(const ir::Model& model, const std::map<std::string, Tensor>& feeds,
                              const std::vector<Tensor>& outputs, const std::string& dir);

}  // namespace kiln::verify
