// The compare table and its JSON, shared by `kiln compare` (two tensor files
// or folders) and `kiln verify` (a provider's session against the reference):
// one table row of metrics per output, then per output its verdict, NaN/Inf
// counts, worst element, the smallest passing tolerance and the diagnosis.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "verify/compare.h"
#include "verify/diagnose.h"

namespace kiln::cli {

struct ReportEntry {
  std::string name;
  std::string ref_path, test_path;  // files compared (`kiln compare`); empty: not written to the JSON
  verify::CompareResult result;
  bool has_diagnosis = false;
  verify::Diagnosis diagnosis;
};

// JSON has no infinity or NaN: those become the strings "inf", "-inf", "nan".
nlohmann::json Num(double v);
// Every metric, the verdict and the diagnosis of one entry.
nlohmann::json EntryJson(const ReportEntry& e);
// 4 significant digits (table columns); "nan", "inf" as FormatNumber.
std::string Short(double v);
// The table, then the per-output lines, on stdout.
void PrintReport(const std::vector<ReportEntry>& entries);

}  // namespace kiln::cli
