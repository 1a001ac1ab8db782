// Diagnosis of a failed comparison: what kind of error turns ref into test.
// The bug kiln exists for (DESIGN.md) produced exactly the right values in
// the wrong places, from a channels-last buffer read with channels-first
// strides; so the first question is whether the sorted values agree
// ("misplaced values"), and the second which simple index map explains the
// placement: an axis permutation read with another layout's strides (in both
// directions), a flip, a cyclic shift, swapped axes. Failing that the error is
// classified as a shift with a wrong border, a scale, an offset, a bad region
// (the bounding box of the bad elements) or noise.
//
// Works on the flat row-major data when only the shapes differ (same element
// count), so a [1,3,4,5] against a [1,4,5,3] is diagnosed as well.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/tensor.h"
#include "verify/compare.h"

namespace kiln::verify {

enum class DiagnosisKind {
  kNone,          // test agrees with ref within the tolerance: nothing to explain
  kIndexMap,      // test is ref with its elements moved by a simple index map (`map`)
  kMisplaced,     // test's values are ref's (sorted values agree) but no simple map places them
  kBorderShift,   // test is ref shifted along one axis, except the border the shift uncovered
  kScaled,        // test ~= scale * ref
  kOffset,        // test ~= ref + offset
  kRegion,        // the bad elements lie in a box much smaller than the tensor
  kNoise,         // bad elements spread over the tensor, no structure found
  kIncomparable,  // different element counts, or non-numeric data
};
const char* DiagnosisKindName(DiagnosisKind k);  // "index_map", "misplaced", ...

struct IndexMap {
  enum class Type {
    // ref's data in layout `perm` (ref.transpose(perm), row-major), read with
    // ref's shape: "test equals ref's NHWC data read as NCHW".
    kTransposedReadAsRef,
    // ref's buffer read as if it held layout `perm` (shape ref.shape[perm])
    // and transposed back: "test equals ref's NCHW data read as NHWC".
    kRefReadAsTransposed,
    kSwapAxes,  // test[..i..j..] = ref[..j..i..] (axes of equal size); `perm` swaps axis and axis2
    kFlip,      // test = ref reversed along `axis`
    kShift,     // test = ref rolled by `shift` along `axis`: test[i] = ref[(i - shift) mod dim]
  };
  Type type = Type::kFlip;
  std::vector<int64_t> perm;
  int axis = -1;
  int axis2 = -1;
  int64_t shift = 0;
};
const char* IndexMapTypeName(IndexMap::Type t);  // "transposed_read_as_ref", ...

struct Diagnosis {
  DiagnosisKind kind = DiagnosisKind::kNone;
  // The sorted values agree within the tolerance: test holds ref's values,
  // only placed differently.
  bool sorted_values_agree = false;
  bool has_map = false;
  IndexMap map;               // kIndexMap, and kBorderShift (a kShift map)
  double scale = 1;           // kScaled
  double offset = 0;          // kOffset
  // kRegion: per axis of ref, the inclusive range [lo, hi] of the bad
  // elements' bounding box.
  std::vector<std::pair<int64_t, int64_t>> region;
  int64_t bad_count = 0;      // elements outside the tolerance
  int64_t count = 0;
  // One line for people: "misplaced values: test equals ref's NCHW data read
  // as NHWC (a channels-first buffer read with channels-last strides)".
  std::string text;
};

// Diagnoses test against ref under `tol` (the same rule as Compare). Never
// fails; kIncomparable says why it could not look.
Diagnosis Diagnose(const Tensor& ref, const Tensor& test, const Tolerance& tol);

// Axis letters used in the text: NCHW for rank 4, CHW for 3, HW for 2,
// NCDHW for 5; "d0 d1 ..." style otherwise. LayoutName(rank, perm) spells a
// permutation of them ("NHWC" for {0,2,3,1} at rank 4).
std::string LayoutName(int rank, const std::vector<int64_t>& perm);

}  // namespace kiln::verify
