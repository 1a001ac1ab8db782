#include "examples/seed.h"

#include <cmath>

#include "ir/builder.h"

namespace kiln::examples {
namespace {

// Weights are drawn in float32 and rounded for float16, so both variants
// share one set of values (up to float16 rounding).
Tensor Cast(const Tensor& f32, DType dtype) {
  if (dtype == DType::kFloat32) return f32;
  Tensor out = Tensor::Zeros(dtype, f32.shape());
  for (int64_t i = 0; i < f32.numel(); ++i) out.SetFromDouble(i, f32.GetAsDouble(i));
  return out;
}

}  // namespace

Shape SeedInputShape(SeedLayout layout) {
  return layout == SeedLayout::kNhwc ? Shape{1, 40, 40, 3} : Shape{1, 3, 40, 40};
}

Result<SeedLayout> ParseSeedLayout(const std::string& s) {
  if (s == "nhwc") return SeedLayout::kNhwc;
  if (s == "nchw") return SeedLayout::kNchw;
  return InvalidArgument("unknown seed layout '" + s + "' (use nhwc or nchw)");
}

const char* SeedLayoutName(SeedLayout layout) { return layout == SeedLayout::kNhwc ? "nhwc" : "nchw"; }

Result<ir::Model> BuildSeedModel(const SeedOptions& options) {
  if (options.dtype != DType::kFloat32 && options.dtype != DType::kFloat16)
    return InvalidArgument(std::string("the seed model exists in float32 and float16, not ") + DTypeName(options.dtype));
  const DType dt = options.dtype;
  ir::GraphBuilder b(17, std::string("seed_") + SeedLayoutName(options.layout), options.weight_seed);
  b.SetProducer("kiln example seed", "1");

  // Draw every weight first, in a fixed order, so the layout cannot change them.
  ir::SeededRng& rng = b.rng();
  auto draw = [&](const Shape& s, double bound) {
    auto t = ir::RandomTensor(DType::kFloat32, s, rng, -bound, bound);
    return Cast(t.value(), dt);
  };
  // Bounds 1/sqrt(fan_in) keep activations near unit scale.
  Tensor w1 = draw({16, 3, 3, 3}, 1.0 / std::sqrt(27.0));
  Tensor b1 = draw({16}, 0.1);
  Tensor w2 = draw({32, 16, 3, 3}, 1.0 / std::sqrt(144.0));
  Tensor b2 = draw({32}, 0.1);

  std::string x = b.AddInput(kSeedInputName, dt, SeedInputShape(options.layout));
  if (options.layout == SeedLayout::kNhwc)
    x = b.AddNode("Transpose", {x}, {ir::Attribute::Ints("perm", {0, 3, 1, 2})}, "to_nchw");
  const std::vector<ir::Attribute> conv_attrs = {
      ir::Attribute::Ints("kernel_shape", {3, 3}), ir::Attribute::Ints("strides", {2, 2}),
      ir::Attribute::Ints("pads", {1, 1, 1, 1}), ir::Attribute::Ints("dilations", {1, 1}), ir::Attribute::Int("group", 1)};
  b.AddInitializer("conv1.weight", w1);
  b.AddInitializer("conv1.bias", b1);
  b.AddInitializer("conv2.weight", w2);
  b.AddInitializer("conv2.bias", b2);
  b.AddInitializer("resize.scales", Tensor::FromVector<float>(DType::kFloat32, {4}, {1, 1, 2, 2}));
  std::string h = b.AddNode("Conv", {x, "conv1.weight", "conv1.bias"}, conv_attrs, "conv1");
  h = b.AddNode("Relu", {h}, {}, "relu1");
  h = b.AddNode("Conv", {h, "conv2.weight", "conv2.bias"}, conv_attrs, "conv2");
  b.AddNodeWithOutputs("Resize", {h, "", "resize.scales"}, {kSeedOutputName},
                       {ir::Attribute::String("mode", "nearest"),
                        ir::Attribute::String("coordinate_transformation_mode", "asymmetric"),
                        ir::Attribute::String("nearest_mode", "floor")},
                       "upsample");
  b.AddOutput(kSeedOutputName, ir::TypeInfo::Tensor(dt, ir::DimsFromShape(SeedOutputShape())));
  return b.Build();
}

}  // namespace kiln::examples
