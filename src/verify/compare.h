// Comparison of a reference tensor with a test tensor: the metrics a person
// reads first when two runtimes disagree (max |ref|, max |diff|, mean |diff|,
// relative error, max diff of the sorted values, RMS, cosine, NaN/Inf counts,
// the worst element, the smallest tolerance that would pass) and the verdict
// under the rule |ref - test| <= atol + rtol * |ref| (NaN equals NaN, an
// infinity equals only itself). Pure computation on in-memory tensors: `kiln
// compare` reads files and prints, `kiln verify` compares session outputs.
// The diagnosis of a failure (which index map or distortion explains it)
// lives in diagnose.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::verify {

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

// float32/float64: rtol 1e-3 atol 1e-4; float16/bfloat16: 1e-2 and 1e-2
// (their own epsilon is ~1e-3 and ~8e-3); integers, bool and strings: exact.
Tolerance DefaultTolerance(DType dtype);

// What the user said about tolerances: global --rtol/--atol (each replaces the
// dtype default of float outputs only, since a tolerance on indices or masks
// is almost always a mistake) and per-output --tol NAME=RTOL,ATOL (any dtype:
// naming the output makes it deliberate).
struct ToleranceOverrides {
  std::optional<double> rtol;
  std::optional<double> atol;
  std::map<std::string, Tolerance> per_output;
};
Tolerance ResolveTolerance(const std::string& output, DType dtype, const ToleranceOverrides& overrides);

// "NAME=RTOL,ATOL" -> {NAME, {rtol, atol}}. The last '=' splits, so a name may
// hold '='. Tolerances must be finite and >= 0.
Result<std::pair<std::string, Tolerance>> ParseToleranceAssignment(const std::string& text);

// One element under the rule: both NaN agree; an infinity agrees only with
// the same infinity; otherwise |ref - test| <= atol + rtol * |ref|.
bool WithinTolerance(double ref, double test, const Tolerance& tol);

// Elements in row-major order as double (any strides). Integers above 2^53
// lose precision here; Compare checks integer equality on the raw values.
std::vector<double> FlatValues(const Tensor& t);

// Ascending order with every NaN last; the sorted-values figures use it.
std::vector<double> SortedValues(std::vector<double> values);
// max_k |a[k] - b[k]| of two sorted arrays of one length; equal non-finite
// pairs (NaN with NaN, +inf with +inf) count 0, unequal ones +inf.
double SortedMaxDiff(const std::vector<double>& sorted_a, const std::vector<double>& sorted_b);

struct Metrics {
  int64_t count = 0;            // elements compared
  double max_abs_ref = 0;       // over finite ref values
  double max_abs_diff = 0;      // over elements where both sides are finite
  double mean_abs_diff = 0;     // idem
  double rel_error = 0;         // max_abs_diff / max_abs_ref (0 when both are 0, inf when only max_abs_ref is)
  double sorted_max_diff = 0;   // SortedMaxDiff of both sides: 0 when test is a permutation of ref
  double rms = 0;               // sqrt(mean diff^2), finite pairs
  double cosine = 1;            // <ref,test> / (|ref| |test|), finite pairs; 1 when both are all zero
  int64_t ref_nan = 0, ref_inf = 0, test_nan = 0, test_inf = 0;
  int64_t nonfinite_mismatches = 0;  // elements where NaN/Inf on one side is not matched on the other
  int64_t bad_count = 0;        // elements outside the tolerance
  // The worst element: a non-finite mismatch if there is one, else the
  // largest |diff|. As a multi-index of ref's shape.
  std::vector<int64_t> worst_index;
  int64_t worst_flat = -1;      // -1 when count is 0
  double worst_ref = 0, worst_test = 0;
  // Smallest atol that passes with the rtol in use, and smallest rtol that
  // passes with the atol in use; +inf when none can (a NaN mismatch, or an
  // rtol that would need |ref| > 0 where ref is 0).
  double min_atol = 0;
  double min_rtol = 0;
};

struct CompareResult {
  bool ok = false;
  // Why it is a MISMATCH: "dtype float16, expected float32", "shape [..],
  // expected [..]", "12 of 60 elements outside rtol 0.001 atol 0.0001".
  std::string reason;
  DType ref_dtype = DType::kUndefined, test_dtype = DType::kUndefined;
  Shape ref_shape, test_shape;
  Tolerance tol;
  // Metrics are computed whenever both sides are numeric and have the same
  // element count, even when dtype or shape differ (a [1,3,4,5] against a
  // [1,4,5,3] is compared on the flat data, as the diagnosis is).
  bool has_metrics = false;
  Metrics metrics;
  std::vector<bool> bad;  // per element (flat), when has_metrics: outside the tolerance
};

// Compares test against ref. Never fails: every difference is a MISMATCH
// with its reason. String tensors are compared for equality only.
CompareResult Compare(const Tensor& ref, const Tensor& test, const Tolerance& tol);

// Multi-index of a row-major flat index: [0,3,5,7].
std::vector<int64_t> UnravelIndex(int64_t flat, const Shape& shape);
std::string IndexToString(const std::vector<int64_t>& index);
// "%.6g" (and "nan", "inf", "-inf").
std::string FormatNumber(double v);

}  // namespace kiln::verify
