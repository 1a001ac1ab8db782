// Runs one node on the reference provider, for op unit tests:
//   auto out = RunNode("Relu", {x}, {}, 1);
//   auto out = RunNode("Conv", {x, w}, {Attribute::Ints("pads", {1,1,1,1})}, 1, 17);
// Inputs given as undefined Tensors are omitted optional inputs.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/datum.h"
#include "kiln/tensor.h"

namespace kiln::testing {

Result<std::vector<Tensor>> RunNode(const std::string& op_type, const std::vector<Tensor>& inputs,
                                    const std::vector<ir::Attribute>& attrs, size_t num_outputs,
                                    int64_t opset = 18, const std::string& domain = "");
// The same with datum inputs/outputs (sequences, optionals).
Result<std::vector<Datum>> RunNodeDatums(const std::string& op_type, const std::vector<Datum>& inputs,
                                         const std::vector<ir::Attribute>& attrs, size_t num_outputs,
                                         int64_t opset = 18, const std::string& domain = "");

// Tensor builders.
Tensor F32(const Shape& shape, const std::vector<float>& v);
Tensor I64(const Shape& shape, const std::vector<int64_t>& v);
// Elements as floats/doubles, row-major (for EXPECT_THAT(..., ElementsAre(...))).
std::vector<float> ToFloats(const Tensor& t);
std::vector<double> ToDoubles(const Tensor& t);
std::vector<int64_t> ToInts(const Tensor& t);

}  // namespace kiln::testing
