// kiln conformance [DIR...] [--provider NAME] [--opt-level L] [--filter REGEX]
//                  [--json FILE] [--expected-failures FILE] [--errata DIR]
// Runs the ONNX backend test suite (default: the installed one) and closes
// with "N passed, N failed, N skipped". With --expected-failures, exits 0 only
// when the failures are exactly the listed ones (so the list only shrinks).
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "commands.h"
#include "verify/conformance.h"

namespace kiln::cli {
namespace {

struct ConformanceArgs {
  std::vector<std::string> dirs;
  std::string provider = "reference";
  std::string opt_level = "all";
  std::string filter;
  std::string json;
  std::string expected;
  std::string errata = KILN_CONFORMANCE_ERRATA_DIR;
  bool no_isolate = false;
  bool verbose = false;
  int timeout = 120;
};

// "suite/test reason..." per line; '#' starts a comment line.
std::map<std::string, std::string> ReadExpected(const std::string& path, bool* ok) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  *ok = static_cast<bool>(in);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t sp = line.find_first_of(" \t");
    std::string key = line.substr(0, sp);
    std::string reason = sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", sp));
    out[key] = reason;
  }
  return out;
}

int RunConformance(const ConformanceArgs& a) {
  std::vector<std::string> dirs = a.dirs.empty() ? verify::DefaultSuiteDirs() : a.dirs;
  auto cases = verify::DiscoverCases(dirs);
  if (!cases.ok()) {
    std::cerr << "kiln conformance: " << cases.status().ToString() << "\n";
    return 2;
  }
  std::map<std::string, std::string> expected;
  if (!a.expected.empty()) {
    bool ok = false;
    expected = ReadExpected(a.expected, &ok);
    if (!ok) {
      std::cerr << "kiln conformance: cannot read '" << a.expected << "'\n";
      return 2;
    }
  }
  std::regex re;
  try {
    re = std::regex(a.filter.empty() ? ".*" : a.filter);
  } catch (const std::regex_error& e) {
    std::cerr << "kiln conformance: bad --filter regex: " << e.what() << "\n";
    return 2;
  }
  verify::ConformanceOptions opts;
  opts.provider = a.provider;
  opts.opt_level = a.opt_level;
  opts.isolate = !a.no_isolate;
  opts.timeout_s = a.timeout;
  opts.errata_dir = a.errata;
  int passed = 0, failed = 0, skipped = 0, by_property = 0, against_erratum = 0, unexpected = 0, fixed = 0;
  std::map<std::string, int> per_suite_pass, per_suite_total;
  nlohmann::json results = nlohmann::json::array();
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& c : *cases) {
    if (!std::regex_search(c.name, re) && !std::regex_search(c.suite + "/" + c.name, re)) continue;
    verify::ConformanceResult r = verify::RunCase(c, opts);
    const std::string key = c.suite + "/" + c.name;
    const bool listed = expected.count(key) != 0;
    ++per_suite_total[c.suite];
    switch (r.outcome) {
      case verify::Outcome::kPassed:
      case verify::Outcome::kPassedByProperty:
      case verify::Outcome::kPassedAgainstErratum:
        ++passed;
        ++per_suite_pass[c.suite];
        if (r.outcome == verify::Outcome::kPassedByProperty) {
          ++by_property;
          std::cout << "PASS-BY-PROPERTY " << key << ": " << r.reason << "\n";
        } else if (r.outcome == verify::Outcome::kPassedAgainstErratum) {
          ++against_erratum;
          std::cout << "PASS-AGAINST-ERRATUM " << key << ": " << r.reason << "\n";
        } else if (a.verbose) {
          std::cout << "PASS " << key << "\n";
        }
        if (listed) {
          ++fixed;
          std::cout << "UNEXPECTED PASS " << key << ": remove it from " << a.expected << "\n";
        }
        break;
      case verify::Outcome::kFailed:
        ++failed;
        if (!listed) ++unexpected;
        std::cout << (listed ? "FAIL (expected) " : "FAIL ") << key << ": " << r.reason << "\n";
        break;
      case verify::Outcome::kSkipped:
        ++skipped;
        std::cout << "SKIP " << key << ": " << r.reason << "\n";
        break;
    }
    results.push_back({{"suite", c.suite}, {"name", c.name}, {"outcome", verify::OutcomeName(r.outcome)},
                       {"reason", r.reason}, {"seconds", r.seconds}});
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& [suite, total] : per_suite_total)
    std::cout << "  " << suite << ": " << per_suite_pass[suite] << "/" << total << " passed\n";
  if (by_property) std::cout << "  (" << by_property << " random-op tests passed by property)\n";
  if (against_erratum)
    std::cout << "  (" << against_erratum << " tests with known ONNX 1.12 data errata passed against corrected data from "
              << a.errata << ")\n";
  if (!a.expected.empty())
    std::cout << "  " << unexpected << " unexpected failures, " << fixed << " unexpected passes (" << a.expected << ")\n";
  std::cout << "  " << secs << " s\n";
  if (!a.json.empty()) {
    std::ofstream out(a.json);
    out << nlohmann::json{{"provider", a.provider}, {"results", results}}.dump(1) << "\n";
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  if (!a.expected.empty()) return unexpected == 0 && fixed == 0 ? 0 : 1;
  return failed == 0 ? 0 : 1;
}

}  // namespace

void AddConformanceCommand(CLI::App& app, Commands& cmds) {
  auto args = std::make_shared<ConformanceArgs>();
  CLI::App* sub = app.add_subcommand("conformance", "Run the ONNX backend test suite");
  sub->add_option("dirs", args->dirs, "Test folders (default: the installed suite)");
  sub->add_option("--provider", args->provider, "Execution provider");
  sub->add_option("--opt-level", args->opt_level, "disable, basic, extended or all (default)");
  sub->add_option("--filter", args->filter, "Only tests whose name (or suite/name) matches this regex");
  sub->add_option("--json", args->json, "Write per-test results as JSON");
  sub->add_option("--expected-failures", args->expected, "File listing the tests not yet passing, with reasons");
  sub->add_option("--errata", args->errata,
                  "Folder of corrected outputs for the known ONNX 1.12 data errata ('' for none; default: the source tree's)");
  sub->add_option("--timeout", args->timeout, "Seconds per test before it counts as failed");
  sub->add_flag("--no-isolate", args->no_isolate, "Run tests in this process (no fork per test)");
  sub->add_flag("-v,--verbose", args->verbose, "Print passing tests too");
  cmds.Add(sub, [args] { return RunConformance(*args); });
}

}  // namespace kiln::cli
