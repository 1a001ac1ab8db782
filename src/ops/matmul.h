// Matrix-product family: Gemm, MatMul, MatMulInteger, QLinearMatMul, Einsum,
// Det. Attribute structs and shape plans shared by shape inference
// (ops/matmul*.cc) and the reference kernels (providers/reference/matmul*.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

struct GemmAttrs {
  bool trans_a = false;
  bool trans_b = false;
  float alpha = 1.0f;
  float beta = 1.0f;
  // Opset < 7: C broadcasts only when the `broadcast` attribute is 1, else it
  // must have the output's shape. From opset 7 C always broadcasts
  // unidirectionally to [M, N].
  bool broadcast_c = true;
};
Result<GemmAttrs> ParseGemm(const ir::Node& node, int64_t opset);

// numpy matmul of shapes a and b: 1-D operands get a 1 prepended (a) or
// appended (b) and removed from the result; batch dims broadcast.
struct MatMulPlan {
  int64_t m = 1, k = 1, n = 1;
  Shape batch;                       // broadcast batch shape
  std::vector<int64_t> a_batch_strides, b_batch_strides;  // per batch dim, in matrices (0 = broadcast)
  Shape out;
};
Result<MatMulPlan> PlanMatMul(const ir::Node& node, const Shape& a, const Shape& b);
// The same for inference dims (unknown dims allowed).
Result<ir::Dims> MatMulDims(const ir::Node& node, const ir::Dims& a, const ir::Dims& b);

// Einsum equation, parsed for given input ranks. Labels are ids: 'A'-'Z' are
// 0-25, 'a'-'z' 26-51 (so id order is ASCII order, which orders the implicit
// output), and ellipsis dims get ids from kEllipsisLabel on, aligned from the
// right across inputs so they broadcast like numpy.
struct EinsumSpec {
  static constexpr int kEllipsisLabel = 52;
  std::vector<std::vector<int>> inputs;  // label of each axis of each input
  std::vector<int> output;               // label of each output axis
  int num_labels = 0;                    // ids are < num_labels
};
Result<EinsumSpec> ParseEinsum(const ir::Node& node, const std::string& equation, const std::vector<int64_t>& ranks);
// Size of every label (-1 where unused), checking that the inputs agree
// (size-1 dims broadcast).
Result<std::vector<int64_t>> EinsumLabelSizes(const ir::Node& node, const EinsumSpec& spec,
                                              const std::vector<Shape>& shapes);

}  // namespace kiln::ops
