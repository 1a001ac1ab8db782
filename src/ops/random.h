// Random ops (RandomUniform, RandomNormal, their *Like forms, Bernoulli,
// Multinomial, Dropout): typed attributes shared by inference and kernels.
//
// kiln's random numbers are deterministic by design: each run of a node
// draws from a fresh std::mt19937_64 whose seed is SeedFor(node, seed):
//   - with a seed attribute: SplitMix64 of the attribute (the float seed's
//     IEEE-754 bit pattern for the float `seed` of RandomUniform & co., the
//     integer itself for Dropout's int `seed`);
//   - without one: SplitMix64 of the FNV-1a hash of the node's first output
//     name, a fixed default that still differs between nodes.
// So the same model with the same inputs gives the same outputs on every
// run, on every platform (the distributions are computed by kiln, not by
// <random>'s implementation-defined distribution classes).
#pragma once

#include <cstdint>
#include <optional>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// The seed of a node's generator (see above). `seed_bits` is the attribute
// as 64 raw bits, nullopt when absent.
uint64_t SeedFor(const ir::Node& node, std::optional<uint64_t> seed_bits);

// RandomUniform / RandomNormal and their *Like forms.
struct RandomAttrs {
  bool normal = false;            // RandomNormal*: a = mean, b = scale
  bool like = false;              // *Like: shape from input 0
  double a = 0.0, b = 1.0;        // uniform: low, high; normal: mean, scale
  std::optional<DType> dtype;     // non-Like default float32; Like default input dtype
  std::optional<uint64_t> seed;   // float seed's bits
  Shape shape;                    // non-Like only
};
Result<RandomAttrs> ParseRandom(const ir::Node& node, int64_t opset);
// The output dtype given the input dtype (kUndefined for non-Like ops).
Result<DType> RandomOutputDType(const ir::Node& node, const RandomAttrs& a, DType input);

// Bernoulli (15): output dtype defaults to the input's.
struct BernoulliAttrs {
  std::optional<DType> dtype;
  std::optional<uint64_t> seed;
};
Result<BernoulliAttrs> ParseBernoulli(const ir::Node& node, int64_t opset);

// Multinomial (7): int32 (default) or int64 class indices.
struct MultinomialAttrs {
  DType dtype = DType::kInt32;
  int64_t sample_size = 1;
  std::optional<uint64_t> seed;
};
Result<MultinomialAttrs> ParseMultinomial(const ir::Node& node, int64_t opset);

// Dropout: ratio is an attribute before opset 12, input 1 from 12 on
// (training_mode input 2). Before opset 7, is_test=0 means training.
struct DropoutAttrs {
  float ratio = 0.5f;             // the attribute (opset < 12)
  bool attr_training = false;     // opset < 7 with is_test = 0
  std::optional<uint64_t> seed;   // opset 12+ int seed
};
Result<DropoutAttrs> ParseDropout(const ir::Node& node, int64_t opset);
// The mask's dtype: the data's before opset 10, bool from 10 on.
inline DType DropoutMaskDType(int64_t opset, DType data) { return opset < 10 ? data : DType::kBool; }

}  // namespace kiln::ops
