// The ONNX backend test suite runner: loads each test folder (model.onnx +
// test_data_set_*/input_*.pb, output_*.pb), runs it on a provider and
// compares with the backend rule |actual - expected| <= atol + rtol*|expected|.
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::verify {

struct ConformanceCase {
  std::string name;    // test folder name, e.g. "test_conv_with_strides_padding"
  std::string suite;   // parent folder name, e.g. "node"
  std::string dir;
};

// kPassedAgainstErratum: a test whose ONNX 1.12 data is known to be wrong
// (KnownDataErratum) matched the corrected data of the errata folder instead.
enum class Outcome { kPassed, kPassedByProperty, kPassedAgainstErratum, kFailed, kSkipped };
const char* OutcomeName(Outcome o);

struct ConformanceResult {
  ConformanceCase test;
  Outcome outcome = Outcome::kFailed;
  std::string reason;  // why it failed / was skipped / passed by property
  double seconds = 0;
};

struct ConformanceOptions {
  std::string provider = "reference";
  std::string opt_level = "all";  // the provider session's (kiln fuzz reproducers name theirs)
  double rtol = 1e-3;
  double atol = 1e-7;
  // Run each test in a forked child so a crash or hang becomes a failure
  // of that test, not of the whole run.
  bool isolate = true;
  int timeout_s = 120;
  // Corrected expected outputs (<suite>/<test>/test_data_set_N/output_J.pb,
  // made by scripts/make-conformance-errata.py) for the known data errata;
  // empty: none, and those tests fail with the erratum named.
  std::string errata_dir;
};

// The installed suite's folders (node, pytorch-converted, pytorch-operator, simple).
std::vector<std::string> DefaultSuiteDirs();
// Test folders under each dir (a dir that itself holds model.onnx is one test).
Result<std::vector<ConformanceCase>> DiscoverCases(const std::vector<std::string>& dirs);
ConformanceResult RunCase(const ConformanceCase& c, const ConformanceOptions& options);

}  // namespace kiln::verify
