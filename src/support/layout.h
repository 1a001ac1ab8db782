// Memory layouts of dense tensors, as a dim order.
//
// kiln keeps every tensor's shape logical (NCHW for a 4-D image tensor, as
// the model means it) and expresses the layout through strides. A dense
// tensor's layout is its DimOrder: the logical dims listed from outermost to
// innermost in memory. {} and {0,1,2,3} are row-major (NCHW); {0,2,3,1} is
// channels-last (NHWC) storage of a logical NCHW tensor. A kernel that
// indexes through the strides it was handed reads any layout correctly; a
// kernel that assumes one must declare it (runtime::KernelLayouts), and the
// executor converts everything else before the kernel sees it.
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

// Outermost first. Empty = row-major of whatever rank.
using DimOrder = std::vector<int>;

inline const DimOrder kRowMajor = {};
inline const DimOrder kChannelsLast = {0, 2, 3, 1};  // NHWC storage, NCHW shape

// The explicit order of rank r ({} -> 0..r-1).
DimOrder ResolveOrder(const DimOrder& order, int rank);
// Same layout for a tensor of `rank` (row-major {} equals {0,1,...}).
bool SameOrder(const DimOrder& a, const DimOrder& b, int rank);

// Strides of a dense tensor of `shape` stored in `order`.
std::vector<int64_t> StridesInOrder(const Shape& shape, const DimOrder& order);

// Whether t is dense and laid out in `order`. Dims of size 1 are ignored
// (their stride does not matter), so a 1xCx1x1 tensor is in every order.
bool IsDenseInOrder(const Tensor& t, const DimOrder& order);

// The layout t is stored in, when it is dense in some order (row-major
// preferred, then channels-last, then the order of its strides); false for
// views with gaps or overlaps.
bool FindOrder(const Tensor& t, DimOrder* order);

// A new dense tensor with t's logical shape and values, stored in `order`
// (t itself when it is already).
Tensor ToOrder(const Tensor& t, const DimOrder& order);

// Copies t's values into `dst`, a dense tensor of t's dtype and logical
// shape stored in `order` (e.g. from AllocateInOrder or a buffer pool).
// Not for strings (their storage holds objects): use ToOrder.
void CopyToOrder(const Tensor& t, const DimOrder& order, const Tensor& dst);

// Allocates a dense tensor of logical `shape` stored in `order`.
Result<Tensor> AllocateInOrder(DType dtype, const Shape& shape, const DimOrder& order);

// The order a Transpose(perm) produces from an input stored in `in`:
// output dim i is input dim perm[i], so its position in memory is that of
// perm[i]. A zero-copy transpose of channels-last NCHW by (0,2,3,1) is
// row-major NHWC.
DimOrder PermutedOrder(const DimOrder& in, const std::vector<int64_t>& perm);

// "NCHW", "NHWC" for the rank-4 cases, "row-major" for others, else the
// order as "(0,2,1)".
std::string OrderName(const DimOrder& order, int rank);

}  // namespace kiln
