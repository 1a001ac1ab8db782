// `kiln reduce`: delta debugging that shrinks a model to a small subgraph that
// still fails, in the shape of IREE's reducer:
//  - an Oracle says whether a candidate is still interesting (still
//    mismatches on the provider, or a user command exits 0);
//  - a Delta strategy says which nodes may go and how a set of them is
//    removed: ReplaceByInput (a removed producer whose value is still used
//    becomes a graph input fed the value it had in the original model on the
//    reference provider) or Bypass (a node whose output has the type of one
//    of its inputs is skipped: its consumers read that input);
//  - chunking: the strategy's targets are tried in chunks of half their
//    count, then quarters, ... down to single nodes; every success restarts
//    the pass; the passes repeat until none removes anything.
//
// A candidate is the original graph minus a set of nodes. It is always
// self-contained: its inputs are the original inputs it still reads and the
// values of removed producers, all with known values. Its outputs are the
// original outputs and the values of kept nodes whose consumers were all
// removed (the sinks), less the outputs the default oracle saw agree; nodes
// that reach no output are dead and dropped.
//
// Targets are tried farthest from the failing node first (undirected
// distance in the graph; nodes not connected to it first of all), so what
// remains is a short connected chain ending at the failure. The failing node
// (verify's first divergence) is never removed, and with
// keep_layout_producers neither are the Transpose nodes upstream of it that
// set its input's layout (DESIGN.md: the motivating bug appeared only behind
// the NHWC Transpose). A candidate that disconnects them from the failing
// node is rejected without asking the oracle: another producer may make the
// same layout (the cpu Conv writes channels-last), and a reproducer without
// the model's own Transpose would tell a different story.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/datum.h"
#include "kiln/status.h"
#include "verify/compare.h"

namespace kiln::verify {

// How a node of the original graph stands in a candidate.
enum class NodeFate { kKept, kReplaced, kBypassed, kDead };

struct Candidate {
  std::vector<NodeFate> fate;        // per original node (graph order)
  std::vector<int> bypass_input;     // for kBypassed: the input index its output is replaced by
  std::vector<std::string> dropped_outputs;  // values that are not outputs (they agreed)
  size_t kept() const;
};

// A candidate as a model with its feeds.
struct CandidateModel {
  ir::Model model;
  std::map<std::string, Datum> feeds;          // every real input of model.graph
  std::vector<std::string> replaced_inputs;    // inputs that stand for removed producers
  Candidate normalized;                        // the candidate with its dead nodes marked
};

struct Verdict {
  bool interesting = false;
  // Default oracle: the outputs that mismatch (the rest may be dropped), and
  // "output 'y': MISMATCH (...); misplaced values: ..." for the first of them.
  std::vector<std::string> failing_outputs;
  std::string description;
};

class Oracle {
 public:
  virtual ~Oracle() = default;
  virtual Result<Verdict> Check(const CandidateModel& candidate) = 0;
};

// Sessions of the candidate on `provider` and on the reference, fed the
// recorded values, outputs compared with compare's tolerances (Verify).
// A failed provider run counts as interesting only when `count_run_errors`.
// `threads`: the provider session's (0 = the cores available).
std::unique_ptr<Oracle> MakeMismatchOracle(const std::string& provider, const std::string& opt_level,
                                           const ToleranceOverrides& tolerances = {}, bool count_run_errors = false,
                                           int threads = 0);
// Writes the candidate as a backend-test folder (WriteReproducer) under a
// scratch folder and runs `command + " " + path/to/model.onnx` through the
// shell: exit status 0 = interesting.
std::unique_ptr<Oracle> MakeCommandOracle(const std::string& command, const std::string& scratch_dir);

struct ReduceOptions {
  // The provider under test: the default oracle compares it with the
  // reference, and the failing node is found by verify --per-node on it.
  std::string provider = "cpu";
  std::string opt_level = "all";
  int threads = 0;  // the provider session's (0 = the cores available)
  ToleranceOverrides tolerances;
  // Default oracle: a candidate whose provider run fails is interesting too
  // (for reducing a crash or an error rather than a wrong value).
  bool count_run_errors = false;
  // Keep the Transposes upstream of the failing node (within
  // layout_producer_depth nodes of it) connected to it.
  bool keep_layout_producers = true;
  int layout_producer_depth = 8;
  // Name the failing node with verify --per-node on `provider` (default
  // oracle only: with a custom oracle there is no provider to ask).
  bool find_failing_node = true;
  int max_oracle_calls = 1000;
  // Called with one line per accepted step ("" = silent).
  std::function<void(const std::string&)> log;
};

struct ReduceResult {
  bool failed_initially = false;   // false: nothing to reduce (the rest is empty)
  std::string initial_description; // how the original model fails
  size_t original_nodes = 0;
  std::string failing_node;        // "" when unknown
  std::vector<std::string> protected_nodes;  // the failing node and its layout producers
  Candidate candidate;
  CandidateModel reduced;          // the reproducer
  std::vector<std::string> kept_nodes;       // "name (Op)", graph order
  size_t replaced = 0, bypassed = 0, dead = 0;  // how the other nodes went
  int oracle_calls = 0;
  std::string final_description;   // how the reproducer fails (the oracle's last verdict)
};

// `feeds`: every real input of `model`. `oracle` null: the mismatch oracle
// of options.provider. Fails when the reference cannot run the model.
Result<ReduceResult> Reduce(const ir::Model& model, const std::map<std::string, Datum>& feeds, const ReduceOptions& options,
                            Oracle* oracle = nullptr);

// Builds the model of a candidate. `recorded`: every value of the original
// model on the reference provider (RecordReferenceValues). Fails on a
// candidate with no node or no output.
Result<CandidateModel> BuildCandidate(const ir::Model& original, const std::map<std::string, Datum>& recorded,
                                      const std::map<std::string, Datum>& feeds, const Candidate& candidate);

// Feeds, initializers and every node output of the model run on the reference provider.
Result<std::map<std::string, Datum>> RecordReferenceValues(const ir::Model& model, const std::map<std::string, Datum>& feeds);

// DIR/model.onnx and DIR/test_data_set_0/input_<i>.pb (the real inputs in
// graph order) and output_<j>.pb (the reference's outputs of the model): the
// ONNX backend-test layout that `kiln conformance DIR` replays.
Status WriteReproducer(const CandidateModel& candidate, const std::string& dir);

}  // namespace kiln::verify
