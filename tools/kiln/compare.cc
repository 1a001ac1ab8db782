// kiln compare REF TEST [--rtol R] [--atol A] [--tol NAME=RTOL,ATOL]... [--json FILE]
// Compares two tensor files (.npy or .pb TensorProto), or two folders of
// such files matched by file stem (the stem is the output name, as `kiln run
// --output-dir` writes them). Prints a table of the metrics per output, the
// worst element, the smallest tolerance that would pass and, for each
// mismatch, the diagnosis (verify/diagnose.h: misplaced values and the index
// map that explains them, scale, offset, region, noise). The computation
// lives in src/verify so `kiln verify` prints the same figures; this file
// only reads files and prints.
// Exit codes: 0 every output ok, 1 a mismatch (or an output missing on one
// side), 2 bad arguments or a file that cannot be read.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "commands.h"
#include "compare_report.h"
#include "onnx/onnx_io.h"
#include "support/npy.h"
#include "verify/compare.h"
#include "verify/diagnose.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;
using verify::FormatNumber;

struct CompareArgs {
  std::string ref;
  std::string test;
  double rtol = 0;
  double atol = 0;
  CLI::Option* rtol_opt = nullptr;
  CLI::Option* atol_opt = nullptr;
  std::vector<std::string> tols;
  std::string json;
};

using Entry = ReportEntry;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool IsTensorFile(const fs::path& p) {
  const std::string ext = Lower(p.extension().string());
  return ext == ".npy" || ext == ".pb";
}

Result<Tensor> ReadTensorFile(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound("'" + path + "' does not exist");
  if (!fs::is_regular_file(path, ec)) return InvalidArgument("'" + path + "' is not a file");
  const std::string ext = Lower(fs::path(path).extension().string());
  if (ext == ".npy") return npy::ReadFile(path);
  if (ext == ".pb") {
    KILN_ASSIGN_OR_RETURN(Datum d, onnx_io::ReadDatumFile(path, ir::TypeInfo::Kind::kTensor));
    if (!d.is_tensor()) return InvalidArgument("'" + path + "' holds " + d.Describe() + ", not a tensor");
    return d.tensor();
  }
  return InvalidArgument("'" + path + "': unknown extension '" + ext + "' (use .npy or .pb)");
}

// stem -> path of the tensor files of a folder. Two files of one stem
// (y.npy and y.pb) are ambiguous: an error rather than a guess.
Result<std::map<std::string, std::string>> ListTensorFiles(const std::string& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec) || !IsTensorFile(it->path())) continue;
    const std::string stem = it->path().stem().string();
    auto [pos, inserted] = files.emplace(stem, it->path().string());
    if (!inserted)
      return InvalidArgument("folder '" + dir + "' holds two files for output '" + stem + "': '" + pos->second + "' and '" +
                             it->path().string() + "'");
  }
  if (ec) return IoError("cannot list folder '" + dir + "': " + ec.message());
  if (files.empty()) return InvalidArgument("folder '" + dir + "' holds no .npy or .pb file");
  return files;
}

// The outputs to compare (matched by name) and the names found on one side only.
Status PairInputs(const CompareArgs& a, std::vector<Entry>* entries, std::vector<std::string>* missing_in_test,
                  std::vector<std::string>* missing_in_ref) {
  std::error_code ec;
  for (const std::string& p : {a.ref, a.test})
    if (!fs::exists(p, ec)) return NotFound("'" + p + "' does not exist");
  const bool ref_dir = fs::is_directory(a.ref, ec), test_dir = fs::is_directory(a.test, ec);
  if (ref_dir != test_dir)
    return InvalidArgument("REF and TEST must both be files or both be folders: '" + (ref_dir ? a.ref : a.test) +
                           "' is a folder, '" + (ref_dir ? a.test : a.ref) + "' is not");
  if (!ref_dir) {
    Entry e;
    e.name = fs::path(a.ref).stem().string();
    e.ref_path = a.ref;
    e.test_path = a.test;
    entries->push_back(std::move(e));
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(auto ref_files, ListTensorFiles(a.ref));
  KILN_ASSIGN_OR_RETURN(auto test_files, ListTensorFiles(a.test));
  for (const auto& [name, path] : ref_files) {
    auto it = test_files.find(name);
    if (it == test_files.end()) {
      missing_in_test->push_back(name);
      continue;
    }
    Entry e;
    e.name = name;
    e.ref_path = path;
    e.test_path = it->second;
    entries->push_back(std::move(e));
  }
  for (const auto& [name, path] : test_files)
    if (!ref_files.count(name)) missing_in_ref->push_back(name);
  return Status::Ok();
}

Result<verify::ToleranceOverrides> ParseOverrides(const CompareArgs& a, const std::vector<Entry>& entries,
                                                  const std::vector<std::string>& ref_only) {
  verify::ToleranceOverrides o;
  for (const auto& [opt, value, slot] : {std::tuple{a.rtol_opt, a.rtol, &o.rtol}, std::tuple{a.atol_opt, a.atol, &o.atol}}) {
    if (opt->count() == 0) continue;
    if (!std::isfinite(value) || value < 0)
      return InvalidArgument(opt->get_name() + " " + FormatNumber(value) + ": a tolerance must be a finite number >= 0");
    *slot = value;
  }
  for (const std::string& item : a.tols) {
    KILN_ASSIGN_OR_RETURN(auto assignment, verify::ParseToleranceAssignment(item));
    bool known = std::find(ref_only.begin(), ref_only.end(), assignment.first) != ref_only.end();
    std::string names;
    for (const Entry& e : entries) {
      known = known || e.name == assignment.first;
      names += (names.empty() ? "" : ", ") + e.name;
    }
    if (!known) return InvalidArgument("--tol '" + item + "': no output named '" + assignment.first + "' (outputs: " + names + ")");
    o.per_output[assignment.first] = assignment.second;
  }
  return o;
}

int DoCompare(const CompareArgs& a) {
  std::vector<Entry> entries;
  std::vector<std::string> missing_in_test, missing_in_ref;
  Status s = PairInputs(a, &entries, &missing_in_test, &missing_in_ref);
  if (!s.ok()) return ReportError("compare", s, kExitUsage);
  auto overrides = ParseOverrides(a, entries, missing_in_test);
  if (!overrides.ok()) return ReportError("compare", overrides.status(), kExitUsage);
  for (Entry& e : entries) {
    auto ref = ReadTensorFile(e.ref_path);
    if (!ref.ok()) return ReportError("compare", ref.status().WithContext("output '" + e.name + "' (ref)"), kExitUsage);
    auto test = ReadTensorFile(e.test_path);
    if (!test.ok()) return ReportError("compare", test.status().WithContext("output '" + e.name + "' (test)"), kExitUsage);
    const verify::Tolerance tol = verify::ResolveTolerance(e.name, ref->dtype(), *overrides);
    e.result = verify::Compare(*ref, *test, tol);
    if (!e.result.ok && ref->numel() == test->numel()) {
      e.diagnosis = verify::Diagnose(*ref, *test, tol);
      e.has_diagnosis = true;
    }
  }
  size_t failed = 0;
  for (const Entry& e : entries) failed += e.result.ok ? 0 : 1;
  const bool ok = failed == 0 && missing_in_test.empty() && missing_in_ref.empty();

  if (!entries.empty()) PrintReport(entries);
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  if (!missing_in_test.empty()) std::printf("\nmissing in test: %s\n", join(missing_in_test).c_str());
  if (!missing_in_ref.empty()) std::printf("%smissing in ref: %s\n", missing_in_test.empty() ? "\n" : "", join(missing_in_ref).c_str());
  std::printf("\nverdict: %s (%zu of %zu outputs ok", ok ? "ok" : "MISMATCH", entries.size() - failed, entries.size());
  if (!missing_in_test.empty() || !missing_in_ref.empty())
    std::printf(", %zu missing on one side", missing_in_test.size() + missing_in_ref.size());
  std::printf(")\n");

  if (!a.json.empty()) {
    nlohmann::json j = {{"ref", a.ref}, {"test", a.test}, {"verdict", ok ? "ok" : "MISMATCH"}, {"ok", ok},
                        {"outputs", nlohmann::json::array()}, {"missing_in_test", missing_in_test}, {"missing_in_ref", missing_in_ref}};
    for (const Entry& e : entries) j["outputs"].push_back(EntryJson(e));
    std::ofstream out(a.json);
    out << j.dump(1) << "\n";
    if (!out) return ReportError("compare", IoError("--json '" + a.json + "': cannot write the file"), kExitUsage);
  }
  return ok ? 0 : kExitRunError;
}

}  // namespace

void AddCompareCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<CompareArgs>();
  CLI::App* sub = app.add_subcommand("compare", "compare tensors (files or folders of outputs): metrics, verdict, diagnosis");
  sub->add_option("REF", a->ref, "reference: a .npy / .pb tensor file, or a folder of them (file stem = output name)")->required();
  sub->add_option("TEST", a->test, "tensor file or folder to check against REF")->required();
  a->rtol_opt = sub->add_option("--rtol", a->rtol, "relative tolerance of every float output (default per dtype)");
  a->atol_opt = sub->add_option("--atol", a->atol, "absolute tolerance of every float output (default per dtype)");
  sub->add_option("--tol", a->tols, "NAME=RTOL,ATOL: tolerances of one output (any dtype); repeatable");
  sub->add_option("--json", a->json, "also write every metric, verdict and diagnosis to FILE as JSON");
  sub->footer(
      "An element passes when |ref - test| <= atol + rtol * |ref| (NaN equals NaN, an infinity only itself).\n"
      "Defaults: float32/float64 rtol 1e-3 atol 1e-4; float16/bfloat16 rtol 1e-2 atol 1e-2; integers and bool exact.\n"
      "--rtol/--atol apply to float outputs; --tol NAME=RTOL,ATOL overrides both for one output.\n"
      "A dtype or shape difference is a MISMATCH (the metrics and diagnosis still run on the flat data when the\n"
      "element counts agree). Folders are matched by file stem (a pair of files is named by REF's stem, for --tol);\n"
      "a name on one side only is a MISMATCH.\n"
      "Exit codes: 0 all ok, 1 a mismatch, 2 bad arguments or an unreadable file.");
  cmds.Add(sub, [a] { return DoCompare(*a); });
}

}  // namespace kiln::cli
