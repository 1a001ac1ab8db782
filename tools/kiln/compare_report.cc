#include "compare_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln::cli {

using verify::FormatNumber;

nlohmann::json Num(double v) {
  if (std::isfinite(v)) return v;
  return FormatNumber(v);
}

nlohmann::json EntryJson(const ReportEntry& e) {
  const verify::CompareResult& r = e.result;
  nlohmann::json j = {
      {"name", e.name},
      {"verdict", r.ok ? "ok" : "MISMATCH"},
      {"ok", r.ok},
      {"reason", r.reason},
      {"ref", {{"dtype", DTypeName(r.ref_dtype)}, {"shape", r.ref_shape}}},
      {"test", {{"dtype", DTypeName(r.test_dtype)}, {"shape", r.test_shape}}},
      {"tolerance", {{"rtol", r.tol.rtol}, {"atol", r.tol.atol}}},
      {"metrics", nullptr},
      {"diagnosis", nullptr},
  };
  if (!e.ref_path.empty()) j["ref_file"] = e.ref_path;
  if (!e.test_path.empty()) j["test_file"] = e.test_path;
  if (r.has_metrics) {
    const verify::Metrics& m = r.metrics;
    j["metrics"] = {
        {"count", m.count},
        {"max_abs_ref", Num(m.max_abs_ref)},
        {"max_abs_diff", Num(m.max_abs_diff)},
        {"mean_abs_diff", Num(m.mean_abs_diff)},
        {"rel_error", Num(m.rel_error)},
        {"sorted_max_diff", Num(m.sorted_max_diff)},
        {"rms", Num(m.rms)},
        {"cosine", Num(m.cosine)},
        {"nan", {{"ref", m.ref_nan}, {"test", m.test_nan}}},
        {"inf", {{"ref", m.ref_inf}, {"test", m.test_inf}}},
        {"bad_count", m.bad_count},
        {"worst", m.worst_flat < 0 ? nlohmann::json(nullptr)
                                   : nlohmann::json{{"index", m.worst_index}, {"ref", Num(m.worst_ref)}, {"test", Num(m.worst_test)}}},
        {"min_atol", Num(m.min_atol)},
        {"min_rtol", Num(m.min_rtol)},
    };
  }
  if (e.has_diagnosis) {
    const verify::Diagnosis& d = e.diagnosis;
    nlohmann::json dj = {{"kind", verify::DiagnosisKindName(d.kind)}, {"text", d.text},
                         {"sorted_values_agree", d.sorted_values_agree}, {"bad_count", d.bad_count}, {"map", nullptr}};
    if (d.has_map) {
      dj["map"] = {{"type", verify::IndexMapTypeName(d.map.type)}, {"perm", d.map.perm}, {"axis", d.map.axis},
                   {"axis2", d.map.axis2}, {"shift", d.map.shift}};
      if (!d.map.perm.empty()) dj["map"]["layout"] = verify::LayoutName(static_cast<int>(r.ref_shape.size()), d.map.perm);
    }
    if (d.kind == verify::DiagnosisKind::kScaled) dj["scale"] = Num(d.scale);
    if (d.kind == verify::DiagnosisKind::kOffset) dj["offset"] = Num(d.offset);
    if (!d.region.empty()) {
      nlohmann::json box = nlohmann::json::array();
      for (const auto& [lo, hi] : d.region) box.push_back({lo, hi});
      dj["region"] = box;
    }
    j["diagnosis"] = dj;
  }
  return j;
}

// 4 significant digits keep the table's columns aligned (at most 10
// characters); the lines below it and --json give full precision.
std::string Short(double v) {
  if (!std::isfinite(v)) return FormatNumber(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

void PrintReport(const std::vector<ReportEntry>& entries) {
  size_t name_w = 6, type_w = 11;
  std::vector<std::string> types;
  for (const ReportEntry& e : entries) {
    name_w = std::max(name_w, e.name.size());
    std::string t = std::string(DTypeName(e.result.ref_dtype)) + ShapeToString(e.result.ref_shape);
    type_w = std::max(type_w, t.size());
    types.push_back(std::move(t));
  }
  const int nw = static_cast<int>(name_w), tw = static_cast<int>(type_w);
  std::printf("%-*s  %-*s  %10s  %10s  %10s  %10s  %10s  %10s  %10s  %s\n", nw, "output", tw, "ref", "max|ref|", "max|diff|",
              "mean|diff|", "rel err", "sorted", "rms", "cosine", "verdict");
  for (size_t i = 0; i < entries.size(); ++i) {
    const verify::CompareResult& r = entries[i].result;
    const char* verdict = r.ok ? "ok" : "MISMATCH";
    if (!r.has_metrics) {
      std::printf("%-*s  %-*s  %10s  %10s  %10s  %10s  %10s  %10s  %10s  %s\n", nw, entries[i].name.c_str(), tw, types[i].c_str(),
                  "-", "-", "-", "-", "-", "-", "-", verdict);
      continue;
    }
    const verify::Metrics& m = r.metrics;
    std::printf("%-*s  %-*s  %10s  %10s  %10s  %10s  %10s  %10s  %10s  %s\n", nw, entries[i].name.c_str(), tw, types[i].c_str(),
                Short(m.max_abs_ref).c_str(), Short(m.max_abs_diff).c_str(), Short(m.mean_abs_diff).c_str(), Short(m.rel_error).c_str(),
                Short(m.sorted_max_diff).c_str(), Short(m.rms).c_str(), Short(m.cosine).c_str(), verdict);
  }
  for (const ReportEntry& e : entries) {
    const verify::CompareResult& r = e.result;
    std::printf("\n%s: %s", e.name.c_str(), r.ok ? "ok" : "MISMATCH");
    if (!r.reason.empty()) std::printf(" (%s)", r.reason.c_str());
    std::printf("  [rtol %s atol %s]\n", FormatNumber(r.tol.rtol).c_str(), FormatNumber(r.tol.atol).c_str());
    if (r.has_metrics) {
      const verify::Metrics& m = r.metrics;
      std::printf("  nan ref %lld test %lld, inf ref %lld test %lld\n", static_cast<long long>(m.ref_nan),
                  static_cast<long long>(m.test_nan), static_cast<long long>(m.ref_inf), static_cast<long long>(m.test_inf));
      if (m.worst_flat >= 0)
        std::printf("  worst %s: ref %s, test %s\n", verify::IndexToString(m.worst_index).c_str(), FormatNumber(m.worst_ref).c_str(),
                    FormatNumber(m.worst_test).c_str());
      std::printf("  passes with atol >= %s (rtol %s) or rtol >= %s (atol %s)\n", FormatNumber(m.min_atol).c_str(),
                  FormatNumber(r.tol.rtol).c_str(), FormatNumber(m.min_rtol).c_str(), FormatNumber(r.tol.atol).c_str());
    }
    if (e.has_diagnosis) std::printf("  diagnosis: %s\n", e.diagnosis.text.c_str());
  }
}

}  // namespace kiln::cli
