// kiln demo: kiln's main job on the embedded seed models, no files needed.
// Builds the seed network in memory in both layouts (NHWC with a Transpose
// inside the graph, and NCHW), runs each on the `cpu` provider (passes,
// fusion, channels-last layouts, oneDNN) and verifies it against the
// `reference` provider on the same seeded image (kiln verify's library:
// the compare table per output), then checks that the two layouts agree:
// the checks that would have caught the bug in DESIGN.md.
#include <cmath>
#include <cstdio>

#include "cli_util.h"
#include "commands.h"
#include "compare_report.h"
#include "examples/seed.h"
#include "ir/builder.h"
#include "runtime/session_internal.h"
#include "verify/verify.h"

namespace kiln::cli {
namespace {

struct DemoArgs {
  std::string provider = "cpu";
  uint64_t seed = 0;
};

int DoDemo(const DemoArgs& a) {
  // One seeded NHWC image; the NCHW model gets the same pixels transposed.
  ir::SeededRng rng(ir::SeedFor(a.seed, examples::kSeedInputName));
  auto image = ir::RandomTensor(DType::kFloat32, examples::SeedInputShape(examples::SeedLayout::kNhwc), rng, -1.0, 1.0);
  if (!image.ok()) return ReportError("demo", image.status(), kExitRunError);
  const Tensor nchw_image = image->Permuted({0, 3, 1, 2}).Contiguous();

  std::printf("kiln demo: seed model (Conv 3x3/2 -> Relu -> Conv 3x3/2 -> Resize nearest x2), provider %s verified against "
              "reference, seed %llu\n",
              a.provider.c_str(), static_cast<unsigned long long>(a.seed));
  std::vector<Tensor> results;
  bool all_ok = true;
  for (examples::SeedLayout layout : {examples::SeedLayout::kNhwc, examples::SeedLayout::kNchw}) {
    examples::SeedOptions so;
    so.layout = layout;
    auto model = examples::BuildSeedModel(so);
    if (!model.ok()) return ReportError("demo", model.status(), kExitRunError);
    const Tensor& x = layout == examples::SeedLayout::kNhwc ? *image : nchw_image;
    verify::VerifyOptions vo;
    vo.provider = a.provider;
    auto v = verify::Verify(*model, {{examples::kSeedInputName, Datum(x)}}, vo);
    if (!v.ok()) return ReportError("demo", v.status(), kExitRunError);
    std::printf("\n== model_%s: input %s\n", examples::SeedLayoutName(layout), ShapeToString(x.shape()).c_str());
    if (!v->provider_error.empty()) {
      std::printf("  the %s run failed: %s\n", a.provider.c_str(), v->provider_error.c_str());
      all_ok = false;
      continue;
    }
    std::vector<ReportEntry> entries;
    for (const auto& out : v->outputs) {
      ReportEntry e;
      e.name = out.name;
      e.result = out.result;
      e.has_diagnosis = out.has_diagnosis;
      e.diagnosis = out.diagnosis;
      entries.push_back(std::move(e));
    }
    PrintReport(entries);
    all_ok = all_ok && v->ok();
    // The provider's output, for the layout cross-check below.
    SessionOptions opts;
    opts.provider = a.provider;
    auto session = CreateSessionFromModel(std::move(model).value(), opts);
    if (!session.ok()) return ReportError("demo", session.status(), kExitRunError);
    auto outs = (*session)->Run({{examples::kSeedInputName, x}});
    if (!outs.ok()) return ReportError("demo", outs.status(), kExitRunError);
    std::printf("  %s: %s\n", a.provider.c_str(), SummaryLine(examples::kSeedOutputName, (*outs)[0]).c_str());
    results.push_back((*outs)[0]);
  }
  if (results.size() == 2) {
    double max_diff = 0;
    for (int64_t i = 0; i < results[0].numel(); ++i)
      max_diff = std::max(max_diff, std::fabs(results[0].GetAsDouble(i) - results[1].GetAsDouble(i)));
    const bool same = results[0].shape() == results[1].shape() && max_diff <= 1e-5;
    std::printf("\nnhwc vs nchw on %s: max |diff| = %.3g -> %s\n", a.provider.c_str(), max_diff, same ? "the layouts agree" : "MISMATCH");
    all_ok = all_ok && same;
  }
  std::printf("demo: %s\n", all_ok ? "ok" : "MISMATCH");
  return all_ok ? 0 : kExitRunError;
}

}  // namespace

void AddDemoCommand(CLI::App& app, Commands& cmds) {
  auto a = std::make_shared<DemoArgs>();
  CLI::App* sub = app.add_subcommand("demo", "run the embedded seed models on cpu, verified against the reference, in both layouts");
  sub->add_option("--provider", a->provider, "execution provider to verify (default cpu)");
  sub->add_option("--seed", a->seed, "seed of the input image (default 0)");
  cmds.Add(sub, [a] { return DoDemo(*a); });
}

}  // namespace kiln::cli
