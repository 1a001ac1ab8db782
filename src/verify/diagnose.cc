#include "verify/diagnose.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

namespace kiln::verify {
namespace {

// Permutation search is exhaustive over the axes larger than 1 (unit axes
// stay in place: moving them does not move any element). 6 such axes are
// 2 x 720 candidates, each usually rejected within its first elements.
constexpr size_t kMaxPermutedAxes = 6;
// Cyclic shifts: every shift of an axis up to this size, else |s| <= this.
constexpr int64_t kMaxShift = 8;

const char* AxisLetters(int rank) {
  switch (rank) {
    case 2: return "HW";
    case 3: return "CHW";
    case 4: return "NCHW";
    case 5: return "NCDHW";
    default: return nullptr;
  }
}

std::string AxisName(int rank, int axis) {
  const char* letters = AxisLetters(rank);
  std::string s = "axis " + std::to_string(axis);
  if (letters) s += std::string(" (") + letters[axis] + ")";
  return s;
}

// The layout that moves the channel axis last: NHWC, NDHWC, HWC.
std::vector<int64_t> ChannelsLastPerm(int rank) {
  std::vector<int64_t> p;
  if (rank == 3) return {1, 2, 0};
  if (rank < 4) return p;
  p.push_back(0);
  for (int k = 2; k < rank; ++k) p.push_back(k);
  p.push_back(1);
  return p;
}

// Calls fn(index, flat) for each multi-index of `shape` in row-major order;
// stops at the first false and returns it.
template <typename F>
bool ForEachIndex(const Shape& shape, F&& fn) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    if (!fn(idx, flat)) return false;
    for (size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return true;
}

struct Data {
  const std::vector<double>& r;
  const std::vector<double>& t;
  const Shape& shape;  // ref's
  const Tolerance& tol;
  std::vector<int64_t> strides;  // ref's row-major strides
};

// test's i-th element (row-major over iter_shape) against ref at
// base + sum idx[k] * src_strides[k].
bool MatchesAffine(const Data& d, const Shape& iter_shape, const std::vector<int64_t>& src_strides, int64_t base) {
  return ForEachIndex(iter_shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
    int64_t src = base;
    for (size_t k = 0; k < idx.size(); ++k) src += idx[k] * src_strides[k];
    return WithinTolerance(d.r[static_cast<size_t>(src)], d.t[static_cast<size_t>(flat)], d.tol);
  });
}

bool MatchesMap(const Data& d, const IndexMap& m) {
  const size_t rank = d.shape.size();
  switch (m.type) {
    case IndexMap::Type::kTransposedReadAsRef: {
      // test's buffer is ref.transpose(perm) in row-major order.
      Shape it(rank);
      std::vector<int64_t> st(rank);
      for (size_t k = 0; k < rank; ++k) it[k] = d.shape[m.perm[k]], st[k] = d.strides[m.perm[k]];
      return MatchesAffine(d, it, st, 0);
    }
    case IndexMap::Type::kRefReadAsTransposed: {
      // Element i of test (ref's shape) was read at the position of
      // (i[perm[0]], i[perm[1]], ...) in a row-major buffer of shape[perm].
      Shape permuted(rank);
      for (size_t k = 0; k < rank; ++k) permuted[k] = d.shape[m.perm[k]];
      const std::vector<int64_t> cs = ContiguousStrides(permuted);
      std::vector<int64_t> st(rank);
      for (size_t k = 0; k < rank; ++k) st[m.perm[k]] = cs[k];
      return MatchesAffine(d, d.shape, st, 0);
    }
    case IndexMap::Type::kSwapAxes: {
      std::vector<int64_t> st = d.strides;
      std::swap(st[m.axis], st[m.axis2]);
      return MatchesAffine(d, d.shape, st, 0);
    }
    case IndexMap::Type::kFlip: {
      std::vector<int64_t> st = d.strides;
      st[m.axis] = -st[m.axis];
      return MatchesAffine(d, d.shape, st, (d.shape[m.axis] - 1) * d.strides[m.axis]);
    }
    case IndexMap::Type::kShift: {
      const int64_t dim = d.shape[m.axis], stride = d.strides[m.axis];
      return ForEachIndex(d.shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
        const int64_t from = ((idx[m.axis] - m.shift) % dim + dim) % dim;
        const int64_t src = flat + (from - idx[m.axis]) * stride;
        return WithinTolerance(d.r[static_cast<size_t>(src)], d.t[static_cast<size_t>(flat)], d.tol);
      });
    }
  }
  return false;
}

// Shift without wrap-around: the elements the shift uncovered (the border)
// are not checked. Accepted only when some bad element lies off the border,
// else the border alone is wrong and "region" says it better.
bool MatchesBorderShift(const Data& d, const std::vector<bool>& bad, int axis, int64_t shift) {
  const int64_t dim = d.shape[axis], stride = d.strides[axis];
  bool bad_inside = false;
  const bool match = ForEachIndex(d.shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
    const int64_t from = idx[axis] - shift;
    if (from < 0 || from >= dim) return true;
    if (bad[static_cast<size_t>(flat)]) bad_inside = true;
    return WithinTolerance(d.r[static_cast<size_t>(flat + (from - idx[axis]) * stride)], d.t[static_cast<size_t>(flat)], d.tol);
  });
  return match && bad_inside;
}

// Shifts to try on an axis, smallest first: +1, -1, +2, -2, ...
std::vector<int64_t> ShiftsFor(int64_t dim, bool cyclic) {
  std::vector<int64_t> out;
  const int64_t limit = cyclic ? (dim <= 2 * kMaxShift + 1 ? dim / 2 : kMaxShift) : std::min(kMaxShift, dim / 2);
  for (int64_t s = 1; s <= limit; ++s) {
    out.push_back(s);
    // On a cyclic axis of even size, +dim/2 and -dim/2 are the same roll.
    if (!(cyclic && 2 * s == dim)) out.push_back(-s);
  }
  return out;
}

// Axis permutations of the non-unit axes (unit axes stay in place), channels
// last first, identity excluded.
std::vector<std::vector<int64_t>> CandidatePerms(const Shape& shape) {
  std::vector<int64_t> moving;
  for (size_t k = 0; k < shape.size(); ++k)
    if (shape[k] > 1) moving.push_back(static_cast<int64_t>(k));
  std::vector<std::vector<int64_t>> out;
  if (moving.size() < 2 || moving.size() > kMaxPermutedAxes) return out;
  std::vector<int64_t> order = moving;
  while (std::next_permutation(order.begin(), order.end())) {
    std::vector<int64_t> p(shape.size());
    std::iota(p.begin(), p.end(), 0);
    for (size_t k = 0; k < moving.size(); ++k) p[moving[k]] = order[k];
    out.push_back(p);
  }
  const std::vector<int64_t> cl = ChannelsLastPerm(static_cast<int>(shape.size()));
  std::stable_partition(out.begin(), out.end(), [&](const std::vector<int64_t>& p) { return p == cl; });
  return out;
}

std::string MapText(const IndexMap& m, const Shape& ref_shape, const Shape& test_shape) {
  const int rank = static_cast<int>(ref_shape.size());
  std::vector<int64_t> id(ref_shape.size());
  std::iota(id.begin(), id.end(), 0);
  const std::string ref_layout = LayoutName(rank, id);
  const bool channels_last = m.perm == ChannelsLastPerm(rank) && !m.perm.empty();
  switch (m.type) {
    case IndexMap::Type::kTransposedReadAsRef: {
      std::string s = "test equals ref's " + LayoutName(rank, m.perm) + " data read as " + ref_layout;
      if (channels_last) s += " (a channels-last buffer read with channels-first strides)";
      Shape permuted;
      for (int64_t a : m.perm) permuted.push_back(ref_shape[a]);
      if (test_shape == permuted) s += "; test's shape is that layout's, so test is ref transposed to " + LayoutName(rank, m.perm);
      return s;
    }
    case IndexMap::Type::kRefReadAsTransposed: {
      std::string s = "test equals ref's " + ref_layout + " data read as " + LayoutName(rank, m.perm);
      if (channels_last) s += " (a channels-first buffer read with channels-last strides)";
      return s;
    }
    case IndexMap::Type::kSwapAxes: {
      const bool spatial = rank >= 3 && m.axis >= rank - 2 && m.axis2 >= rank - 2;
      return std::string("test equals ref with ") + (spatial ? "spatial " : "") + AxisName(rank, m.axis) + " and " +
             AxisName(rank, m.axis2) + " swapped";
    }
    case IndexMap::Type::kFlip: return "test equals ref flipped along " + AxisName(rank, m.axis);
    case IndexMap::Type::kShift: {
      const std::string sh = (m.shift > 0 ? "+" : "") + std::to_string(m.shift);
      return "test equals ref rolled by " + sh + " along " + AxisName(rank, m.axis) + " (test[i] = ref[(i - " + sh + ") mod " +
             std::to_string(ref_shape[m.axis]) + "])";
    }
  }
  return "";
}

// Bounding box of the bad elements, per axis [lo, hi].
std::vector<std::pair<int64_t, int64_t>> BadBox(const std::vector<bool>& bad, const Shape& shape, int64_t* volume) {
  std::vector<std::pair<int64_t, int64_t>> box(shape.size(), {INT64_MAX, -1});
  ForEachIndex(shape, [&](const std::vector<int64_t>& idx, int64_t flat) {
    if (!bad[static_cast<size_t>(flat)]) return true;
    for (size_t k = 0; k < idx.size(); ++k) box[k] = {std::min(box[k].first, idx[k]), std::max(box[k].second, idx[k])};
    return true;
  });
  *volume = 1;
  for (const auto& [lo, hi] : box) *volume *= hi - lo + 1;
  return box;
}

// NumPy-style: [0, 1, 1:3, 2:4].
std::string BoxText(const std::vector<std::pair<int64_t, int64_t>>& box) {
  std::string s = "[";
  for (size_t k = 0; k < box.size(); ++k) {
    if (k) s += ", ";
    s += box[k].first == box[k].second ? std::to_string(box[k].first)
                                       : std::to_string(box[k].first) + ":" + std::to_string(box[k].second + 1);
  }
  return s + "]";
}

bool AllWithin(const std::vector<double>& r, const std::vector<double>& t, const Tolerance& tol, double k, double c) {
  for (size_t i = 0; i < r.size(); ++i)
    if (!WithinTolerance(k * r[i] + c, t[i], tol)) return false;
  return true;
}

bool FindIndexMap(const Data& d, IndexMap* found) {
  const int rank = static_cast<int>(d.shape.size());
  IndexMap m;
  m.type = IndexMap::Type::kSwapAxes;  // equal-sized axes exchanged, before the general permutations
  for (int a = 0; a < rank; ++a)
    for (int b = a + 1; b < rank; ++b) {
      if (d.shape[a] != d.shape[b] || d.shape[a] < 2) continue;
      m.axis = a, m.axis2 = b;
      m.perm.assign(rank, 0);
      std::iota(m.perm.begin(), m.perm.end(), 0);
      std::swap(m.perm[a], m.perm[b]);
      if (MatchesMap(d, m)) return *found = m, true;
    }
  m.axis = m.axis2 = -1;
  for (const std::vector<int64_t>& p : CandidatePerms(d.shape)) {
    m.perm = p;
    for (IndexMap::Type type : {IndexMap::Type::kRefReadAsTransposed, IndexMap::Type::kTransposedReadAsRef}) {
      m.type = type;
      if (MatchesMap(d, m)) return *found = m, true;
    }
  }
  m.perm.clear();
  m.type = IndexMap::Type::kFlip;
  for (int a = 0; a < rank; ++a) {
    if (d.shape[a] < 2) continue;
    m.axis = a;
    if (MatchesMap(d, m)) return *found = m, true;
  }
  m.type = IndexMap::Type::kShift;
  for (int a = 0; a < rank; ++a) {
    m.axis = a;
    for (int64_t s : ShiftsFor(d.shape[a], true)) {
      m.shift = s;
      if (MatchesMap(d, m)) return *found = m, true;
    }
  }
  return false;
}

}  // namespace

const char* DiagnosisKindName(DiagnosisKind k) {
  switch (k) {
    case DiagnosisKind::kNone: return "none";
    case DiagnosisKind::kIndexMap: return "index_map";
    case DiagnosisKind::kMisplaced: return "misplaced";
    case DiagnosisKind::kBorderShift: return "border_shift";
    case DiagnosisKind::kScaled: return "scaled";
    case DiagnosisKind::kOffset: return "offset";
    case DiagnosisKind::kRegion: return "region";
    case DiagnosisKind::kNoise: return "noise";
    case DiagnosisKind::kIncomparable: return "incomparable";
  }
  return "?";
}

const char* IndexMapTypeName(IndexMap::Type t) {
  switch (t) {
    case IndexMap::Type::kTransposedReadAsRef: return "transposed_read_as_ref";
    case IndexMap::Type::kRefReadAsTransposed: return "ref_read_as_transposed";
    case IndexMap::Type::kSwapAxes: return "swap_axes";
    case IndexMap::Type::kFlip: return "flip";
    case IndexMap::Type::kShift: return "shift";
  }
  return "?";
}

std::string LayoutName(int rank, const std::vector<int64_t>& perm) {
  const char* letters = AxisLetters(rank);
  std::string s;
  if (letters) {
    for (int64_t a : perm) s += letters[a];
    return s;
  }
  s = "axes(";
  for (size_t k = 0; k < perm.size(); ++k) s += (k ? "," : "") + std::to_string(perm[k]);
  return s + ")";
}

Diagnosis Diagnose(const Tensor& ref, const Tensor& test, const Tolerance& tol) {
  Diagnosis g;
  if (!ref.defined() || !test.defined() || ref.dtype() == DType::kString || test.dtype() == DType::kString) {
    g.kind = DiagnosisKind::kIncomparable;
    g.text = "no diagnosis of non-numeric tensors";
    return g;
  }
  if (ref.numel() != test.numel()) {
    g.kind = DiagnosisKind::kIncomparable;
    g.text = "no diagnosis: test has " + std::to_string(test.numel()) + " elements, ref " + std::to_string(ref.numel());
    return g;
  }
  const std::vector<double> r = FlatValues(ref), t = FlatValues(test);
  g.count = static_cast<int64_t>(r.size());
  std::vector<bool> bad(r.size());
  for (size_t i = 0; i < r.size(); ++i)
    if ((bad[i] = !WithinTolerance(r[i], t[i], tol))) ++g.bad_count;
  if (g.bad_count == 0) {
    g.text = "test agrees with ref within the tolerance";
    return g;
  }
  const std::vector<double> sr = SortedValues(r), st = SortedValues(t);
  g.sorted_values_agree = true;
  for (size_t i = 0; i < sr.size() && g.sorted_values_agree; ++i) g.sorted_values_agree = WithinTolerance(sr[i], st[i], tol);

  const Shape& shape = ref.shape();
  Data d{r, t, shape, tol, ContiguousStrides(shape)};
  int64_t box_volume = 0;
  const auto box = BadBox(bad, shape, &box_volume);
  const bool small_box = box_volume * 4 <= g.count && !shape.empty();
  const std::string bad_text = std::to_string(g.bad_count) + " of " + std::to_string(g.count) + " elements";

  if (g.sorted_values_agree) {
    if (FindIndexMap(d, &g.map)) {
      g.kind = DiagnosisKind::kIndexMap;
      g.has_map = true;
      g.text = "misplaced values: " + MapText(g.map, shape, test.shape());
      return g;
    }
    g.kind = DiagnosisKind::kMisplaced;
    g.text = "misplaced values: the sorted values agree, but no axis permutation, flip, shift or swap turns ref into test";
    if (small_box) {
      g.region = box;
      g.text += "; the " + bad_text + " out of place lie in " + BoxText(box);
    }
    return g;
  }
  // A shift that fills its border with something else (zeros, clamped
  // edges) does not keep the sorted values.
  for (int a = 0; a < static_cast<int>(shape.size()); ++a)
    for (int64_t s : ShiftsFor(shape[a], false)) {
      if (!MatchesBorderShift(d, bad, a, s)) continue;
      g.kind = DiagnosisKind::kBorderShift;
      g.has_map = true;
      g.map.type = IndexMap::Type::kShift;
      g.map.axis = a;
      g.map.shift = s;
      const std::string sh = (s > 0 ? "+" : "") + std::to_string(s);
      g.text = "shifted: test equals ref shifted by " + sh + " along axis " + std::to_string(a) +
               (AxisLetters(static_cast<int>(shape.size())) ? std::string(" (") + AxisLetters(static_cast<int>(shape.size()))[a] + ")" : "") +
               " (test[i] = ref[i - " + sh + "]), except the " + std::to_string(std::llabs(s)) + " uncovered border slice(s)";
      return g;
    }
  // Least-squares scale; then the mean offset.
  double rr = 0, rt = 0, diff_sum = 0;
  int64_t finite = 0;
  bool test_all_zero = true;
  for (size_t i = 0; i < r.size(); ++i) {
    if (t[i] != 0) test_all_zero = false;
    if (!std::isfinite(r[i]) || !std::isfinite(t[i])) continue;
    rr += r[i] * r[i], rt += r[i] * t[i], diff_sum += t[i] - r[i], ++finite;
  }
  if (test_all_zero) {
    g.kind = DiagnosisKind::kScaled;
    g.scale = 0;
    g.text = "scaled: test is all zeros (" + bad_text + " outside the tolerance)";
    return g;
  }
  if (rr > 0 && AllWithin(r, t, tol, rt / rr, 0)) {
    g.kind = DiagnosisKind::kScaled;
    g.scale = rt / rr;
    g.text = "scaled: test ~= " + FormatNumber(g.scale) + " * ref";
    return g;
  }
  if (finite > 0 && AllWithin(r, t, tol, 1, diff_sum / static_cast<double>(finite))) {
    g.kind = DiagnosisKind::kOffset;
    g.offset = diff_sum / static_cast<double>(finite);
    g.text = "offset: test ~= ref " + std::string(g.offset < 0 ? "- " : "+ ") + FormatNumber(std::fabs(g.offset));
    return g;
  }
  if (small_box) {
    g.kind = DiagnosisKind::kRegion;
    g.region = box;
    g.text = "region: the " + bad_text + " outside the tolerance lie in " + BoxText(box) + ", a box of " +
             std::to_string(box_volume) + " elements";
    return g;
  }
  g.kind = DiagnosisKind::kNoise;
  g.text = "noise: " + bad_text + " outside the tolerance, spread over " + BoxText(box) +
           ", not a permutation, shift, scale or offset of ref";
  return g;
}

}  // namespace kiln::verify
