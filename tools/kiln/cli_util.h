// Helpers shared by the CLI subcommands: reading input files, generating
// seeded inputs, summarizing and writing outputs, reporting errors.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/datum.h"
#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::cli {

// Exit codes: usage and load errors (bad arguments, missing or malformed
// model or input files) are 2; failures while running are 1.
inline constexpr int kExitRunError = 1;
inline constexpr int kExitUsage = 2;

// Prints "kiln <cmd>: error: <status>" as one line on stderr; returns `code`.
int ReportError(const std::string& cmd, const Status& s, int code);

// "1x3x40x40" -> {1,3,40,40}. "" or "scalar" is a rank-0 shape.
Result<Shape> ParseShape(const std::string& text);
// "NAME=VALUE" -> {NAME, VALUE}; the first '=' splits (paths may contain '=').
Result<std::pair<std::string, std::string>> SplitAssignment(const std::string& text, const std::string& option);

// IoInfo of a graph's inputs straight from the IR (no session needed).
std::vector<IoInfo> InputInfos(const ir::Graph& g);

// Reads an input file: .npy, .pb (ONNX TensorProto/SequenceProto, the backend
// test format) or raw little-endian .bin (dtype from the model, shape from
// `shape` or from the model when fully static).
Result<Datum> ReadInputFile(const std::string& path, const IoInfo& io, const Shape* shape);

// Seeded input for a model input. Floats uniform in [-1, 1), integers uniform
// in [0, 10), bool 0/1 at random, strings "s<k>"; dynamic dims are 1 unless
// `shape` is given. `note` receives a line to show the user when a default
// was chosen (empty otherwise).
Result<Tensor> GenerateInput(const IoInfo& io, uint64_t seed, const Shape* shape, std::string* note);

// A file-system-safe name for a value: [A-Za-z0-9._-] kept, others '_';
// never empty, never "." or "..".
std::string SafeFileName(const std::string& name);

// "name  float32[1,32,20,20]  min=... max=... mean=..." (nan=/inf= counts
// when present).
std::string SummaryLine(const std::string& name, const Tensor& t);
std::string SummaryLine(const std::string& name, const Datum& d);

// Writes a tensor as .npy; bfloat16 is widened to float32 (NumPy has no
// bfloat16) and `note` says so.
Status WriteTensorNpy(const std::string& path, const Tensor& t, std::string* note);

// Parses "--input NAME=FILE" / "--shape NAME=DIMS" lists into maps.
Result<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& items, const std::string& option);
Result<std::map<std::string, Shape>> ParseShapeAssignments(const std::vector<std::string>& items);

// What the user said about a model's inputs: --input NAME=FILE, --shape
// NAME=DIMS, --seed.
struct FeedArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  uint64_t seed = 0;
  bool quiet = false;  // no notes on stderr
};

// The feeds of every non-optional input (and of optional ones named by
// --input): read with ReadInputFile, else generated with GenerateInput.
// Names that are not inputs of the model are errors listing the inputs.
// `generate_only` skips the inputs given as files (kiln gen-inputs).
Result<std::map<std::string, Datum>> MakeFeeds(const std::vector<IoInfo>& inputs, const FeedArgs& a, bool generate_only = false);

}  // namespace kiln::cli
