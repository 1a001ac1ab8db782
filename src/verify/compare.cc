#include "verify/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace kiln::verify {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool IsIntegerLike(DType t) { return DTypeIsSignedInt(t) || DTypeIsUnsignedInt(t) || t == DType::kBool; }

Result<double> ParseTolValue(const std::string& s, const std::string& what, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < 0)
    return InvalidArgument("--tol '" + text + "': " + what + " '" + s + "' is not a finite number >= 0");
  return v;
}

// String tensors: equal or not, element by element.
void CompareStrings(const Tensor& ref, const Tensor& test, CompareResult& r) {
  if (ref.shape() != test.shape()) {
    r.reason = "shape " + ShapeToString(test.shape()) + ", expected " + ShapeToString(ref.shape());
    return;
  }
  Tensor a = ref.Contiguous(), b = test.Contiguous();
  int64_t differ = 0, first = -1;
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (a.data<std::string>()[i] == b.data<std::string>()[i]) continue;
    if (first < 0) first = i;
    ++differ;
  }
  r.ok = differ == 0;
  if (!r.ok)
    r.reason = std::to_string(differ) + " of " + std::to_string(a.numel()) + " strings differ, first at " +
               IndexToString(UnravelIndex(first, ref.shape()));
}

// Under an exact tolerance, integer tensors of one dtype are equal only when
// their bits are: doubles cannot tell int64 values above 2^53 apart.
void MarkRawIntegerDifferences(const Tensor& ref, const Tensor& test, std::vector<bool>& bad) {
  Tensor a = ref.Contiguous(), b = test.Contiguous();
  const size_t size = DTypeSize(ref.dtype());
  const auto* pa = static_cast<const unsigned char*>(a.raw());
  const auto* pb = static_cast<const unsigned char*>(b.raw());
  for (size_t i = 0; i < bad.size(); ++i)
    if (std::memcmp(pa + i * size, pb + i * size, size) != 0) bad[i] = true;
}

void ComputeMetrics(const std::vector<double>& r, const std::vector<double>& t, const Tolerance& tol, const Shape& shape,
                    CompareResult& out) {
  Metrics& m = out.metrics;
  const size_t n = r.size();
  m.count = static_cast<int64_t>(n);
  out.bad.assign(n, false);
  double sum_abs = 0, sum_sq = 0, dot = 0, norm_r = 0, norm_t = 0;
  int64_t finite_pairs = 0;
  int64_t worst = -1;
  double worst_diff = -1;
  bool worst_nonfinite = false;
  for (size_t i = 0; i < n; ++i) {
    const double a = r[i], b = t[i];
    if (std::isnan(a)) ++m.ref_nan;
    if (std::isinf(a)) ++m.ref_inf;
    if (std::isnan(b)) ++m.test_nan;
    if (std::isinf(b)) ++m.test_inf;
    if (std::isfinite(a)) m.max_abs_ref = std::max(m.max_abs_ref, std::fabs(a));
    out.bad[i] = !WithinTolerance(a, b, tol);
    if (out.bad[i]) ++m.bad_count;
    if (!std::isfinite(a) || !std::isfinite(b)) {
      if (out.bad[i]) {
        ++m.nonfinite_mismatches;
        m.min_atol = m.min_rtol = kInf;
        if (!worst_nonfinite) worst = static_cast<int64_t>(i), worst_nonfinite = true;
      }
      continue;
    }
    const double d = std::fabs(a - b);
    ++finite_pairs;
    sum_abs += d;
    sum_sq += d * d;
    dot += a * b;
    norm_r += a * a;
    norm_t += b * b;
    m.max_abs_diff = std::max(m.max_abs_diff, d);
    if (!worst_nonfinite && d > worst_diff) worst = static_cast<int64_t>(i), worst_diff = d;
    m.min_atol = std::max(m.min_atol, d - tol.rtol * std::fabs(a));
    if (d > tol.atol) m.min_rtol = std::max(m.min_rtol, a == 0 ? kInf : (d - tol.atol) / std::fabs(a));
  }
  if (finite_pairs > 0) {
    m.mean_abs_diff = sum_abs / static_cast<double>(finite_pairs);
    m.rms = std::sqrt(sum_sq / static_cast<double>(finite_pairs));
  }
  if (norm_r == 0 && norm_t == 0) m.cosine = 1;
  else if (norm_r == 0 || norm_t == 0) m.cosine = 0;
  else m.cosine = dot / (std::sqrt(norm_r) * std::sqrt(norm_t));
  if (m.max_abs_ref > 0) m.rel_error = m.max_abs_diff / m.max_abs_ref;
  else m.rel_error = m.max_abs_diff > 0 ? kInf : 0;
  m.sorted_max_diff = SortedMaxDiff(SortedValues(r), SortedValues(t));
  if (worst >= 0) {
    m.worst_flat = worst;
    m.worst_index = UnravelIndex(worst, shape);
    m.worst_ref = r[static_cast<size_t>(worst)];
    m.worst_test = t[static_cast<size_t>(worst)];
  }
}

}  // namespace

Tolerance DefaultTolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
    case DType::kFloat64: return {1e-3, 1e-4};
    case DType::kFloat16:
    case DType::kBFloat16: return {1e-2, 1e-2};
    default: return {0, 0};
  }
}

Tolerance ResolveTolerance(const std::string& output, DType dtype, const ToleranceOverrides& o) {
  auto it = o.per_output.find(output);
  if (it != o.per_output.end()) return it->second;
  Tolerance t = DefaultTolerance(dtype);
  if (DTypeIsFloat(dtype)) {
    if (o.rtol) t.rtol = *o.rtol;
    if (o.atol) t.atol = *o.atol;
  }
  return t;
}

Result<std::pair<std::string, Tolerance>> ParseToleranceAssignment(const std::string& text) {
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidArgument("--tol '" + text + "': expected NAME=RTOL,ATOL (e.g. logits=1e-2,1e-3)");
  const std::string name = text.substr(0, eq), value = text.substr(eq + 1);
  const size_t comma = value.find(',');
  if (comma == std::string::npos)
    return InvalidArgument("--tol '" + text + "': expected NAME=RTOL,ATOL, the value has no ','");
  Tolerance t;
  KILN_ASSIGN_OR_RETURN(t.rtol, ParseTolValue(value.substr(0, comma), "rtol", text));
  KILN_ASSIGN_OR_RETURN(t.atol, ParseTolValue(value.substr(comma + 1), "atol", text));
  return std::make_pair(name, t);
}

bool WithinTolerance(double ref, double test, const Tolerance& tol) {
  if (std::isnan(ref) || std::isnan(test)) return std::isnan(ref) && std::isnan(test);
  if (std::isinf(ref) || std::isinf(test)) return ref == test;
  return std::fabs(ref - test) <= tol.atol + tol.rtol * std::fabs(ref);
}

std::vector<double> FlatValues(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.GetAsDouble(static_cast<int64_t>(i));
  return v;
}

std::vector<double> SortedValues(std::vector<double> values) {
  auto nan_last = std::stable_partition(values.begin(), values.end(), [](double v) { return !std::isnan(v); });
  std::sort(values.begin(), nan_last);
  return values;
}

double SortedMaxDiff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  const size_t n = std::min(a.size(), b.size());
  for (size_t k = 0; k < n; ++k) {
    const double x = a[k], y = b[k];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
      if (!same) return kInf;
      continue;
    }
    worst = std::max(worst, std::fabs(x - y));
  }
  return a.size() == b.size() ? worst : kInf;
}

CompareResult Compare(const Tensor& ref, const Tensor& test, const Tolerance& tol) {
  CompareResult r;
  r.ref_dtype = ref.dtype();
  r.test_dtype = test.dtype();
  r.ref_shape = ref.shape();
  r.test_shape = test.shape();
  r.tol = tol;
  const bool ref_numeric = ref.defined() && ref.dtype() != DType::kString;
  const bool test_numeric = test.defined() && test.dtype() != DType::kString;
  if (ref.dtype() != test.dtype())
    r.reason = std::string("dtype ") + DTypeName(test.dtype()) + ", expected " + DTypeName(ref.dtype());
  if (ref.dtype() == DType::kString && test.dtype() == DType::kString) {
    CompareStrings(ref, test, r);
    return r;
  }
  if (!ref_numeric || !test_numeric) {
    if (r.reason.empty()) r.reason = "tensor is undefined";
    return r;
  }
  if (ref.shape() != test.shape()) {
    std::string s = "shape " + ShapeToString(test.shape()) + ", expected " + ShapeToString(ref.shape());
    r.reason = r.reason.empty() ? s : r.reason + "; " + s;
  }
  if (ref.numel() != test.numel()) return r;
  r.has_metrics = true;
  ComputeMetrics(FlatValues(ref), FlatValues(test), tol, ref.shape(), r);
  if (ref.dtype() == test.dtype() && IsIntegerLike(ref.dtype()) && tol.rtol == 0 && tol.atol == 0) {
    MarkRawIntegerDifferences(ref, test, r.bad);
    r.metrics.bad_count = std::count(r.bad.begin(), r.bad.end(), true);
  }
  if (!r.reason.empty()) return r;  // dtype or shape differ: a MISMATCH whatever the values
  r.ok = r.metrics.bad_count == 0;
  if (!r.ok)
    r.reason = std::to_string(r.metrics.bad_count) + " of " + std::to_string(r.metrics.count) + " elements outside rtol " +
               FormatNumber(tol.rtol) + " atol " + FormatNumber(tol.atol);
  return r;
}

std::vector<int64_t> UnravelIndex(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] <= 0) continue;
    idx[k] = flat % shape[k];
    flat /= shape[k];
  }
  return idx;
}

std::string IndexToString(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t k = 0; k < index.size(); ++k) s += (k ? "," : "") + std::to_string(index[k]);
  return s + "]";
}

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace kiln::verify
