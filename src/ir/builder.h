// A small API to build ir::Models in code: the seed models, the CLI's demo,
// tests. Values are named by the caller or generated ("<node>_out<i>").
//
//   ir::GraphBuilder b(/*opset=*/17);
//   auto x = b.AddInput("x", DType::kFloat32, {1, 3, 40, 40});
//   auto w = b.AddRandomInitializer("w", DType::kFloat32, {16, 3, 3, 3}, -0.5, 0.5);
//   auto y = b.AddNode("Conv", {x, w}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})});
//   b.AddOutput(y);
//   KILN_ASSIGN_OR_RETURN(ir::Model m, b.Build());
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ir {

// Deterministic, platform-independent random numbers (SplitMix64): the same
// seed gives the same values on every compiler and library, unlike the
// <random> distributions. Used for seeded weights and generated inputs.
class SeededRng {
 public:
  explicit SeededRng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [0, 1) with 53 random bits.
  double Uniform();
  // Uniform in [lo, hi).
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  // Uniform integer in [lo, hi) (hi > lo).
  int64_t UniformInt(int64_t lo, int64_t hi);

 private:
  uint64_t state_;
};

// Mixes a seed with a name (FNV-1a), so each named stream is independent of
// the others: input "x" gets the same values whatever other inputs exist.
uint64_t SeedFor(uint64_t seed, const std::string& name);

// Fills a tensor of any numeric dtype with seeded values: floats uniform in
// [lo, hi), integers uniform in [lo, hi) rounded down (bool: 0/1 at random).
Result<Tensor> RandomTensor(DType dtype, const Shape& shape, SeededRng& rng, double lo, double hi);

class GraphBuilder {
 public:
  explicit GraphBuilder(int64_t opset = 17, std::string graph_name = "main", uint64_t seed = 0);

  // Graph input with a fixed shape, or with symbolic/unknown dims.
  std::string AddInput(const std::string& name, DType dtype, const Shape& shape);
  std::string AddInput(const std::string& name, DType dtype, const Dims& dims);
  std::string AddInitializer(const std::string& name, Tensor value);
  // Initializer with seeded values in [lo, hi) from the builder's RNG (so a
  // model built twice with the same seed has the same weights).
  std::string AddRandomInitializer(const std::string& name, DType dtype, const Shape& shape, double lo, double hi);
  // A node with `num_outputs` generated output names; returns them.
  std::vector<std::string> AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                                   const std::vector<Attribute>& attrs, size_t num_outputs,
                                   const std::string& name = "", const std::string& domain = "");
  // Single-output form.
  std::string AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                      const std::vector<Attribute>& attrs = {}, const std::string& name = "");
  // A node with explicit output names.
  void AddNodeWithOutputs(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::vector<Attribute>& attrs = {},
                          const std::string& name = "", const std::string& domain = "");
  // Graph output; the type may stay unknown (inference fills it).
  void AddOutput(const std::string& name, TypeInfo type = {});
  void SetOpset(const std::string& domain, int64_t version) { model_.opsets[domain] = version; }
  void SetProducer(const std::string& name, const std::string& version);

  SeededRng& rng() { return rng_; }
  Graph& graph() { return model_.graph; }

  // The model; fails when the graph has a cycle, a dangling input or a
  // duplicate value name (the checks an ONNX checker would make).
  Result<Model> Build() const;

 private:
  std::string FreshNodeName(const std::string& op_type);
  Model model_;
  SeededRng rng_;
  int counter_ = 0;
};

}  // namespace kiln::ir
