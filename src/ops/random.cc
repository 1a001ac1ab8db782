// Random ops: attributes and shape inference of RandomUniform,
// RandomNormal, RandomUniformLike, RandomNormalLike, Bernoulli, Multinomial
// and Dropout. The seeding scheme is documented in ops/random.h.
#include "ops/random.h"

#include <bit>
#include <cstring>

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Float `seed` attribute as its bit pattern.
Result<std::optional<uint64_t>> FloatSeed(const ir::Node& node) {
  if (!node.FindAttr("seed")) return std::optional<uint64_t>();
  KILN_ASSIGN_OR_RETURN(float s, node.GetFloat("seed", 0.0f));
  return std::optional<uint64_t>(std::bit_cast<uint32_t>(s));
}

Result<std::optional<DType>> OptionalDType(const ir::Node& node) {
  if (!node.FindAttr("dtype")) return std::optional<DType>();
  KILN_ASSIGN_OR_RETURN(int64_t dt, node.GetInt("dtype", 0));
  if (!DTypeIsKnown(static_cast<int>(dt))) return node.Invalid("attribute 'dtype' = " + std::to_string(dt) + " is not a known dtype");
  return std::optional<DType>(static_cast<DType>(dt));
}

Status CheckFloatOutput(const ir::Node& node, DType t) {
  if (!DTypeIsFloat(t))
    return node.Invalid(std::string("output dtype must be a floating point type, got ") + DTypeName(t));
  return Status::Ok();
}

}  // namespace

uint64_t SeedFor(const ir::Node& node, std::optional<uint64_t> seed_bits) {
  if (seed_bits) return SplitMix64(*seed_bits);
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  const std::string& name = node.outputs.empty() ? node.name : node.outputs[0];
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return SplitMix64(h);
}

Result<RandomAttrs> ParseRandom(const ir::Node& node, int64_t opset) {
  RandomAttrs a;
  a.normal = node.op_type.rfind("RandomNormal", 0) == 0;
  a.like = node.op_type.size() > 4 && node.op_type.compare(node.op_type.size() - 4, 4, "Like") == 0;
  float x, y;
  if (a.normal) {
    KILN_ASSIGN_OR_RETURN(x, node.GetFloat("mean", 0.0f));
    KILN_ASSIGN_OR_RETURN(y, node.GetFloat("scale", 1.0f));
  } else {
    KILN_ASSIGN_OR_RETURN(x, node.GetFloat("low", 0.0f));
    KILN_ASSIGN_OR_RETURN(y, node.GetFloat("high", 1.0f));
    if (!(x <= y)) return node.Invalid("low " + std::to_string(x) + " must not exceed high " + std::to_string(y));
  }
  a.a = x;
  a.b = y;
  KILN_ASSIGN_OR_RETURN(a.dtype, OptionalDType(node));
  if (a.dtype) KILN_RETURN_IF_ERROR(CheckFloatOutput(node, *a.dtype));
  KILN_ASSIGN_OR_RETURN(a.seed, FloatSeed(node));
  if (!a.like) {
    if (!node.FindAttr("shape")) return node.Invalid("missing required attribute 'shape'");
    KILN_ASSIGN_OR_RETURN(a.shape, node.GetInts("shape"));
    for (int64_t d : a.shape)
      if (d < 0) return node.Invalid("attribute 'shape' " + ShapeToString(a.shape) + " has a negative dimension");
  }
  return a;
}

Result<DType> RandomOutputDType(const ir::Node& node, const RandomAttrs& a, DType input) {
  if (a.dtype) return *a.dtype;
  if (!a.like) return DType::kFloat32;
  if (input == DType::kUndefined) return DType::kUndefined;
  KILN_RETURN_IF_ERROR(CheckFloatOutput(node, input));
  return input;
}

Result<BernoulliAttrs> ParseBernoulli(const ir::Node& node, int64_t opset) {
  BernoulliAttrs a;
  KILN_ASSIGN_OR_RETURN(a.dtype, OptionalDType(node));
  if (a.dtype && *a.dtype == DType::kString) return node.Invalid("attribute 'dtype' cannot be string");
  KILN_ASSIGN_OR_RETURN(a.seed, FloatSeed(node));
  return a;
}

Result<MultinomialAttrs> ParseMultinomial(const ir::Node& node, int64_t opset) {
  MultinomialAttrs a;
  KILN_ASSIGN_OR_RETURN(int64_t dt, node.GetInt("dtype", static_cast<int64_t>(DType::kInt32)));
  if (dt != static_cast<int64_t>(DType::kInt32) && dt != static_cast<int64_t>(DType::kInt64))
    return node.Invalid("attribute 'dtype' must be int32 (6) or int64 (7), got " + std::to_string(dt));
  a.dtype = static_cast<DType>(dt);
  KILN_ASSIGN_OR_RETURN(a.sample_size, node.GetInt("sample_size", 1));
  if (a.sample_size < 1) return node.Invalid("sample_size must be >= 1, got " + std::to_string(a.sample_size));
  KILN_ASSIGN_OR_RETURN(a.seed, FloatSeed(node));
  return a;
}

Result<DropoutAttrs> ParseDropout(const ir::Node& node, int64_t opset) {
  DropoutAttrs a;
  if (opset < 12) {
    KILN_ASSIGN_OR_RETURN(a.ratio, node.GetFloat("ratio", 0.5f));
  }
  if (opset < 7) {
    KILN_ASSIGN_OR_RETURN(int64_t is_test, node.GetInt("is_test", 0));
    a.attr_training = is_test == 0;  // opset 1/6: "if nonzero, run dropout in test mode"
  }
  if (opset >= 12 && node.FindAttr("seed")) {
    KILN_ASSIGN_OR_RETURN(int64_t s, node.GetInt("seed", 0));
    a.seed = static_cast<uint64_t>(s);
  }
  return a;
}

namespace {

Status InferRandom(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(RandomAttrs a, ParseRandom(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(a.like ? 1 : 0, a.like ? 1 : 0));
  KILN_ASSIGN_OR_RETURN(DType dt, RandomOutputDType(ctx.node(), a, ctx.input_dtype(0)));
  if (!a.like) ctx.set_output(0, dt, a.shape);
  else if (const ir::Dims* d = ctx.input_dims(0)) ctx.set_output(0, dt, *d);
  else ctx.set_output(0, dt, std::nullopt);
  return Status::Ok();
}

Status InferBernoulli(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kBFloat16}));
  KILN_ASSIGN_OR_RETURN(BernoulliAttrs a, ParseBernoulli(ctx.node(), ctx.opset()));
  const ir::Dims* d = ctx.input_dims(0);
  ctx.set_output(0, a.dtype ? *a.dtype : ctx.input_dtype(0), d ? std::optional<ir::Dims>(*d) : std::nullopt);
  return Status::Ok();
}

Status InferMultinomial(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat16, DType::kFloat32, DType::kFloat64}));
  KILN_ASSIGN_OR_RETURN(MultinomialAttrs a, ParseMultinomial(ctx.node(), ctx.opset()));
  const ir::Dims* d = ctx.input_dims(0);
  if (d && d->size() != 2) return ctx.Error("input 0 must be 2-D [batch_size, class_size], got " + ir::DimsToString(*d));
  ir::Dim batch = d ? (*d)[0] : ir::Dim{};
  ctx.set_output(0, a.dtype, ir::Dims{batch, ir::Dim::Known(a.sample_size)});
  return Status::Ok();
}

Status InferDropout(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, ctx.opset() >= 12 ? 3 : 1));
  KILN_RETURN_IF_ERROR(ParseDropout(ctx.node(), ctx.opset()).status());
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 2, {DType::kBool}));
  PropagateInput(ctx, 0, 0);
  const ir::Dims* d = ctx.input_dims(0);
  ctx.set_output(1, DropoutMaskDType(ctx.opset(), ctx.input_dtype(0)), d ? std::optional<ir::Dims>(*d) : std::nullopt);
  return Status::Ok();
}

}  // namespace

void RegisterRandomOps(OpRegistry& r) {
  r.Register({"", "RandomUniform", 1, 1000, InferRandom});
  r.Register({"", "RandomNormal", 1, 1000, InferRandom});
  r.Register({"", "RandomUniformLike", 1, 1000, InferRandom});
  r.Register({"", "RandomNormalLike", 1, 1000, InferRandom});
  r.Register({"", "Bernoulli", 15, 1000, InferBernoulli});
  r.Register({"", "Multinomial", 7, 1000, InferMultinomial});
  // Dropout 1/6 (is_test), 7 (ratio attribute, mask T), 10 (mask bool),
  // 12/13 (ratio and training_mode inputs, seed).
  r.Register({"", "Dropout", 1, 1000, InferDropout});
}

}  // namespace kiln::ops
