// The conformance runner's errata path: a known ONNX 1.12 data erratum passes
// only against the corrected data (scripts/make-conformance-errata.py), fails
// with the erratum named without it, and fails when the corrected data is wrong.
#include "verify/conformance.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace kiln::verify {
namespace {

namespace fs = std::filesystem;

const char* kCast = "/usr/share/libonnx-testdata/data/node/test_cast_FLOAT_to_BFLOAT16";
const std::string kErrata = std::string(KILN_SOURCE_DIR) + "/tests/conformance/errata";

ConformanceResult RunCast(const std::string& errata) {
  ConformanceOptions o;
  o.isolate = false;
  o.errata_dir = errata;
  return RunCase({"test_cast_FLOAT_to_BFLOAT16", "node", kCast}, o);
}

TEST(ConformanceErrata, CastToBFloat16PassesOnlyAgainstCorrectedData) {
  if (!fs::exists(kCast)) GTEST_SKIP() << "libonnx-testdata is not installed";
  ConformanceResult fixed = RunCast(kErrata);
  EXPECT_EQ(fixed.outcome, Outcome::kPassedAgainstErratum) << fixed.reason;
  EXPECT_NE(fixed.reason.find("onnx#4193"), std::string::npos) << fixed.reason;

  ConformanceResult plain = RunCast("");
  EXPECT_EQ(plain.outcome, Outcome::kFailed);
  EXPECT_NE(plain.reason.find("data erratum"), std::string::npos) << plain.reason;

  // Corrected data that is itself wrong (the 1.12 data, i.e. truncation) fails.
  const fs::path bad = fs::temp_directory_path() / "kiln_conformance_errata_test";
  fs::remove_all(bad);
  const fs::path set = bad / "node" / "test_cast_FLOAT_to_BFLOAT16" / "test_data_set_0";
  fs::create_directories(set);
  fs::copy_file(fs::path(kCast) / "test_data_set_0" / "output_0.pb", set / "output_0.pb");
  ConformanceResult wrong = RunCast(bad.string());
  EXPECT_EQ(wrong.outcome, Outcome::kFailed);
  EXPECT_NE(wrong.reason.find("against the corrected data"), std::string::npos) << wrong.reason;
  fs::remove_all(bad);
}

}  // namespace
}  // namespace kiln::verify
