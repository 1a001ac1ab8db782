// kiln example seed --layout nhwc|nchw [--dtype float32|float16] -o FILE
// Writes one of kiln's built-in example models (src/examples) as ONNX.
#include <cstdio>

#include "cli_util.h"
#include "commands.h"
#include "examples/seed.h"
#include "onnx/onnx_io.h"

namespace kiln::cli {
namespace {

struct ExampleArgs {
  std::string name;
  std::string layout = "nhwc";
  std::string dtype = "float32";
  std::string output;
  uint64_t weight_seed = examples::SeedOptions{}.weight_seed;
};

int DoExample(const ExampleArgs& a) {
  if (a.name != "seed") return ReportError("example", InvalidArgument("unknown example '" + a.name + "' (available: seed)"), kExitUsage);
  examples::SeedOptions opts;
  auto layout = examples::ParseSeedLayout(a.layout);
  if (!layout.ok()) return ReportError("example", layout.status(), kExitUsage);
  opts.layout = *layout;
  if (a.dtype == "float32") opts.dtype = DType::kFloat32;
  else if (a.dtype == "float16") opts.dtype = DType::kFloat16;
  else return ReportError("example", InvalidArgument("unknown --dtype '" + a.dtype + "' (use float32 or float16)"), kExitUsage);
  opts.weight_seed = a.weight_seed;
  auto model = examples::BuildSeedModel(opts);
  if (!model.ok()) return ReportError("example", model.status(), kExitRunError);
  Status st = onnx_io::SaveModelFile(*model, a.output);
  if (!st.ok()) return ReportError("example", st, kExitRunError);
  std::printf("wrote %s: seed model, %s, %s, input %s%s -> output %s%s\n", a.output.c_str(), a.layout.c_str(), a.dtype.c_str(),
              a.dtype.c_str(), ShapeToString(examples::SeedInputShape(opts.layout)).c_str(), a.dtype.c_str(),
              ShapeToString(examples::SeedOutputShape()).c_str());
  return 0;
}

}  // namespace

void AddExampleCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<ExampleArgs>();
  CLI::App* sub = app.add_subcommand("example", "write a built-in example model (seed) as an ONNX file");
  sub->add_option("NAME", a->name, "example name: seed")->required();
  sub->add_option("--layout", a->layout, "nhwc (Transpose inside the graph) or nchw (default nhwc)");
  sub->add_option("--dtype", a->dtype, "float32 or float16 (weights and I/O; default float32)");
  sub->add_option("--weight-seed", a->weight_seed, "seed of the weights");
  sub->add_option("-o,--output", a->output, "output .onnx file")->required();
  cmds.Add(sub, [a] { return DoExample(*a); });
}

}  // namespace kiln::cli
