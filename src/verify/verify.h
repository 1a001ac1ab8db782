// `kiln verify`: runs a model through an ordinary session of a provider and
// through the reference provider on the same inputs, and compares every
// output (compare.h metrics and verdict, diagnose.h diagnosis).
//
// The reference session is built from its own deep copy of the model as
// loaded: nothing of the provider's passes, folded constants, packed weights
// or layouts is shared with it (DESIGN.md rule 3).
//
// Per node (VerifyOptions::per_node): the provider's session is run once
// more with a tap (RunWithTap) — the plan a user's session runs, no rebuilt
// program, no added outputs — and the reference session with a tap too.
// Every value the plan computes is converted to its canonical layout and
// compared with the reference's value of the same ONNX name; values of the
// original graph the plan no longer computes are reported as fused into (or
// folded, or removed by) the plan node that absorbed them. Then each planned
// node is run alone — a one-node model of the node, its opset imports, its
// constant inputs as initializers and its other inputs as graph inputs fed
// the reference's values laid out as the plan held them (so a kernel that
// fails only on channels-last data fails alone too), on a session of the
// same provider at opt level disable. A node whose output disagrees alone
// introduced the error; the first such node in execution order is the first
// divergence. The same one-node model on the reference provider tells a
// wrong kernel (reference agrees) from a wrong graph rewrite (the optimized
// node itself computes something else).
//
// Sweep: the check repeated at every opt level, and at the user's level with
// each suspect node forced onto the reference provider, to say which choice
// makes the mismatch appear or vanish.
//
// Computation only: the CLI (tools/kiln/verify.cc) prints.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/datum.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "verify/compare.h"
#include "verify/diagnose.h"

namespace kiln::verify {

struct VerifyOptions {
  std::string provider = "cpu";
  std::string opt_level = "all";
  int threads = 0;
  bool per_node = false;
  ToleranceOverrides tolerances;
  // Per-node values (tapped, and nodes alone; not the graph outputs, which
  // keep the plain rule) compare with atol raised to rtol * max |ref| of the
  // value: the intermediate values of a deep network carry float32 rounding
  // that the oracle's double accumulation does not, and an element near zero
  // among large ones would fail on rounding alone. Misplaced or wrong values
  // are off by the value's own scale and still fail. A --tol on the value's
  // name replaces the rule. False: the plain rule everywhere.
  bool scale_node_tolerance = true;
};

// One value compared: a graph output, a tapped value, a node's output alone.
struct ValueCheck {
  std::string name;
  // False when the reference has no value of this name (a value the passes
  // created): nothing to compare, not a mismatch.
  bool has_reference = true;
  bool is_tensor = true;    // sequences and optionals are not compared
  std::string layout;       // the plan's storage of the value: "NHWC", "row-major", ...
  CompareResult result;     // when has_reference && is_tensor
  bool has_diagnosis = false;
  Diagnosis diagnosis;      // when the comparison failed on equal element counts
  bool ok() const { return !has_reference || !is_tensor || result.ok; }
};

// Compare, then Diagnose when it fails with equal element counts.
ValueCheck CheckValue(const std::string& name, const Tensor& ref, const Tensor& test, const Tolerance& tol);

// A value of the original graph that the plan does not compute.
struct AbsorbedValue {
  std::string name;
  std::string producer, producer_op;  // its node in the original graph
  enum class How { kFused, kFolded, kRemoved } how = How::kFused;
  // kFused: the plan node that computes it implicitly (the first plan node
  // downstream of it in the original graph): "fused into node 'Conv_3' (FusedConv)".
  int into = -1;  // index into PerNodeReport::nodes
  std::string into_name, into_op;
  std::string text;  // "fused into node 'Conv_3' (FusedConv)", "folded to a constant", "removed (dead code)"
};

// One node of the provider's plan, in execution order.
struct NodeCheck {
  size_t index = 0;  // into the plan graph's nodes
  std::string name, op_type, domain;
  std::string provider;                     // who ran it (the provider, or its fallback)
  std::vector<std::string> inputs;          // value names ("" = omitted)
  std::vector<std::string> input_layouts;   // as the kernel received each ("" = absent or not a tensor)
  std::vector<ValueCheck> outputs;          // tapped in the plan's run, vs the reference
  std::vector<std::string> absorbed;        // original values fused into this node

  // The node alone on the reference's inputs (same provider, opt level disable).
  bool alone_ran = false;
  std::string alone_error;                  // why it could not be run alone, or failed
  std::string alone_provider;               // who ran it alone (should equal `provider`)
  // vs the reference's values (or, for values the original graph has no name
  // for, vs the same node alone on the reference provider). Outputs that
  // agree carry the verdict only (no metrics: they would sort every value).
  std::vector<ValueCheck> alone_outputs;
  bool introduces_error = false;            // alone, an output disagrees (or the run failed)
  // When introduces_error: the same one-node model on the reference provider.
  bool reference_alone_ran = false;
  bool reference_alone_ok = false;          // agrees with the reference's values: the kernel is wrong
  std::string blame;                        // "kernel" (the provider's kernel), "graph" (the optimized node), "" unknown

  bool tapped_ok() const;
  bool alone_ok() const;
};

struct PerNodeReport {
  std::vector<NodeCheck> nodes;            // the plan, in execution order
  std::vector<AbsorbedValue> absorbed;     // original values the plan does not compute
  std::vector<ValueCheck> folded;          // constants the passes folded from original values, vs the reference
  size_t compared = 0, mismatched = 0;     // tapped values with a reference value, and those that disagree
  int first_mismatch = -1;                 // first node (in `nodes`) with a tapped output that disagrees
  int first_divergence = -1;               // first node that introduces an error alone
  // "first divergence: node 'Resize_7' (Resize) on cpu, input layout NHWC, output misplaced values: ..."
  // (or why none could be named); empty when everything agrees.
  std::string summary;
  bool ok() const;
};

struct VerifyResult {
  std::string provider, opt_level;
  std::vector<std::string> pass_notes;     // what the provider's passes did
  std::vector<ValueCheck> outputs;         // per graph output, graph order
  std::string provider_error;              // the provider's run failed (a mismatch)
  bool per_node = false;
  PerNodeReport nodes;                     // when per_node
  // When per_node: each tensor the provider's run stored in another layout
  // than its plan says (`kiln inspect --plan`), as "value: planned NHWC, ran
  // NCHW". The values are still right (every kernel reads the strides it
  // gets), so this is a finding, not a mismatch: a drift means a conversion
  // or a strided copy the plan did not count.
  std::vector<std::string> layout_drift;
  bool outputs_ok() const;
  bool ok() const;                         // outputs, and with per_node every tapped value
};

// Fails (load errors, exit 2 in the CLI) when a session cannot be created,
// a feed is rejected, or the reference run fails; a failing provider run is
// a result (provider_error), not an error. `model` is not modified.
Result<VerifyResult> Verify(const ir::Model& model, const std::map<std::string, Datum>& feeds, const VerifyOptions& options);

// A deep copy: tensors (initializers, attribute tensors) and subgraphs are
// copied, so passes on the copy cannot reach the original.
ir::Model DeepCopy(const ir::Model& model);

// The probe of `--inputs position`: element k (row-major) holds k / 2^e,
// 2^e the smallest power of two >= numel, so values lie in [0, 1) and are
// exact in float32 up to 2^24 elements (float16 2^11, bfloat16 2^8; beyond,
// neighbours round together); a value v names element v * 2^e. Float dtypes
// only.
Result<Tensor> PositionTensor(DType dtype, const Shape& shape);
// The 2^e of PositionTensor for `numel` elements.
int64_t PositionScale(int64_t numel);

// ---- sweep ------------------------------------------------------------------

struct SweepRow {
  std::string what;       // "opt level basic", "node 'Resize_7' (Resize) on reference"
  bool ran = false;
  std::string error;      // when !ran, or the run failed
  bool ok = false;        // every output agrees with the reference
  double max_abs_diff = 0;  // worst output's max |diff|
  std::string worst_output;
};

struct SweepResult {
  std::vector<SweepRow> levels;   // disable, basic, extended, all
  std::vector<SweepRow> without_pass;  // at the user's level, each of its passes disabled in turn
  std::vector<SweepRow> forced;   // at the user's level, one suspect node on the reference provider
  std::vector<std::string> conclusions;  // "the mismatch appears at opt level extended", ...
};

// `suspects`: plan node names to force onto the reference provider one at a
// time (verify's first divergence and other nodes that introduce errors);
// empty: the nodes whose alone runs disagree are found first (a per-node run).
Result<SweepResult> Sweep(const ir::Model& model, const std::map<std::string, Datum>& feeds, const VerifyOptions& options,
                          std::vector<std::string> suspects = {});

}  // namespace kiln::verify
