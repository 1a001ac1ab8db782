// kiln demo: kiln's main job on an embedded model, no files needed. Builds
// the seed network in memory in both layouts (NHWC with a Transpose inside
// the graph, and NCHW), runs each on the reference provider with the same
// seeded image, prints the output summaries and checks that the two layouts
// agree: the check that would have caught the bug in DESIGN.md.
#include <cmath>
#include <cstdio>

#include "cli_util.h"
#include "commands.h"
#include "examples/seed.h"
#include "ir/builder.h"
#include "runtime/session_internal.h"

namespace kiln::cli {
namespace {

struct DemoArgs {
  std::string provider = "reference";
  uint64_t seed = 0;
};

int DoDemo(const DemoArgs& a) {
  SessionOptions opts;
  opts.provider = a.provider;
  // One seeded NHWC image; the NCHW model gets the same pixels transposed.
  ir::SeededRng rng(ir::SeedFor(a.seed, examples::kSeedInputName));
  auto image = ir::RandomTensor(DType::kFloat32, examples::SeedInputShape(examples::SeedLayout::kNhwc), rng, -1.0, 1.0);
  if (!image.ok()) return ReportError("demo", image.status(), kExitRunError);
  const Tensor nchw_image = image->Permuted({0, 3, 1, 2}).Contiguous();

  std::printf("kiln demo: seed model (Conv 3x3/2 -> Relu -> Conv 3x3/2 -> Resize nearest x2), provider %s, seed %llu\n",
              a.provider.c_str(), static_cast<unsigned long long>(a.seed));
  std::vector<Tensor> results;
  for (examples::SeedLayout layout : {examples::SeedLayout::kNhwc, examples::SeedLayout::kNchw}) {
    examples::SeedOptions so;
    so.layout = layout;
    auto model = examples::BuildSeedModel(so);
    if (!model.ok()) return ReportError("demo", model.status(), kExitRunError);
    auto session = CreateSessionFromModel(std::move(model).value(), opts);
    if (!session.ok()) return ReportError("demo", session.status(), kExitRunError);
    const Tensor& x = layout == examples::SeedLayout::kNhwc ? *image : nchw_image;
    auto outs = (*session)->Run({{examples::kSeedInputName, x}});
    if (!outs.ok()) return ReportError("demo", outs.status(), kExitRunError);
    std::printf("  %s input %s\n    %s\n", examples::SeedLayoutName(layout), ShapeToString(x.shape()).c_str(),
                SummaryLine(examples::kSeedOutputName, (*outs)[0]).c_str());
    results.push_back((*outs)[0]);
  }
  double max_diff = 0;
  for (int64_t i = 0; i < results[0].numel(); ++i)
    max_diff = std::max(max_diff, std::fabs(results[0].GetAsDouble(i) - results[1].GetAsDouble(i)));
  const bool same = results[0].shape() == results[1].shape() && max_diff <= 1e-5;
  std::printf("  nhwc vs nchw: max |diff| = %.3g -> %s\n", max_diff, same ? "the layouts agree" : "MISMATCH");
  return same ? 0 : kExitRunError;
}

}  // namespace

void AddDemoCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<DemoArgs>();
  CLI::App* sub = app.add_subcommand("demo", "run the embedded seed model in both layouts and compare");
  sub->add_option("--provider", a->provider, "execution provider (default reference)");
  sub->add_option("--seed", a->seed, "seed of the input image (default 0)");
  cmds.Add(sub, [a] { return DoDemo(*a); });
}

}  // namespace kiln::cli
