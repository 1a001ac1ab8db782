// Rewriting the weights of a Conv or ConvTranspose per output channel, for
// the folding passes (fold_batchnorm.cc, fold_conv_affine.cc).
//   Conv:          W [M, C/group, k...]   output channel m = W's row m
//   ConvTranspose: W [C, M/group, k...]   output channel m = group g, column j
//                  (m = g * M/group + j), read by the C/group input channels of g
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "kiln/tensor.h"
#include "passes/graph_util.h"

namespace kiln::passes {

// A Conv or ConvTranspose of the default domain whose W (and B, if any) are
// float32/float64 constants, with one output: what the folds rewrite.
struct FoldableConv {
  const Tensor* w = nullptr;
  const Tensor* b = nullptr;  // nullptr when the node has no B
  int64_t out_channels = 0;
};
std::optional<FoldableConv> MatchFoldableConv(const ir::Node& n, const GraphIndex& index);

// W with output channel m multiplied by scale[m] (computed in double, stored
// once in W's dtype).
Tensor ScaleOutputChannels(const ir::Node& conv, const Tensor& w, const std::vector<double>& scale);

// A constant added or multiplied elementwise to an output of rank `rank` with
// `m` channels on axis 1, that changes one value per channel at most (every
// other dim 1, rank at most `rank`): its value for each channel.
std::optional<std::vector<double>> PerChannelValues(const Tensor* c, size_t rank, int64_t m);

// Elements as doubles; a float tensor of the given dtype from doubles.
std::vector<double> Doubles(const Tensor& t);
Tensor FromDoubles(DType dtype, const Shape& shape, const std::vector<double>& v);

}  // namespace kiln::passes
