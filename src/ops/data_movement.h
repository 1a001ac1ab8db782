// Data movement ops (Concat, Split, Slice, Transpose, Tile, Pad,
// DepthToSpace, SpaceToDepth, ReverseSequence, Trilu, Compress): attributes
// and the index/shape computations that shape inference and the reference
// kernels share, so both agree on every output shape.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "ops/op_registry.h"

namespace kiln::ops {

struct ConcatAttrs {
  int64_t axis = 1;  // required from opset 4 (default 1 in Concat-1)
};
Result<ConcatAttrs> ParseConcat(const ir::Node& node, int64_t opset);

struct SplitAttrs {
  int64_t axis = 0;
  std::optional<std::vector<int64_t>> split;  // the attribute of opset 1-12
  std::optional<int64_t> num_outputs;         // opset 18
};
Result<SplitAttrs> ParseSplit(const ir::Node& node, int64_t opset);
// Sizes of the outputs along the axis of size `dim`. `split` is the split
// list (attribute or input) when given; otherwise equal parts, the last one
// smaller with num_outputs (opset 18).
Result<std::vector<int64_t>> SplitSizes(const ir::Node& node, const SplitAttrs& a,
                                        const std::optional<std::vector<int64_t>>& split, int64_t dim, size_t outputs);
// The same at run time: `split_input` is input 1 (nullptr when absent; an
// empty tensor means none, as exporters emit it), else the attribute.
Result<std::vector<int64_t>> SplitSizesOf(const ir::Node& node, const SplitAttrs& a, const Tensor* split_input, int64_t dim,
                                          size_t outputs);

struct SliceAttrs {
  // Attributes of opset 1-9 (inputs from opset 10).
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes;
};
Result<SliceAttrs> ParseSlice(const ir::Node& node, int64_t opset);
// One sliced axis once clamped against its dim: the first index, the step
// and the number of elements taken.
struct SliceAxis {
  int64_t start = 0, step = 1, count = 0;
};
SliceAxis ResolveSliceAxis(int64_t start, int64_t end, int64_t step, int64_t dim);
// Checks starts/ends/axes/steps agree in length and normalizes axes against
// rank (negative from opset 10); steps default to 1, axes to 0..n-1.
struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};
Result<SliceSpec> MakeSliceSpec(const ir::Node& node, std::vector<int64_t> starts, std::vector<int64_t> ends,
                                std::optional<std::vector<int64_t>> axes, std::optional<std::vector<int64_t>> steps,
                                int64_t rank);
// A Slice's spec at run time: the attributes below opset 10, from opset 10
// inputs 1-4 (starts, ends, axes, steps; nullptr when absent).
Result<SliceSpec> SliceSpecOf(const ir::Node& node, int64_t opset, const SliceAttrs& a, const std::array<const Tensor*, 4>& inputs,
                              int64_t rank);
// The elements a Slice takes of x as a view of x's storage: x's own strides
// times the steps, so it holds for x in any layout. `empty` when it takes
// none (then only `shape` means anything).
struct SliceView {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  bool empty = false;
};
SliceView ViewOfSlice(const SliceSpec& spec, const Tensor& x);

struct TransposeAttrs {
  std::optional<std::vector<int64_t>> perm;  // default: reversed axes
};
Result<TransposeAttrs> ParseTranspose(const ir::Node& node, int64_t opset);
Result<std::vector<int64_t>> TransposePerm(const ir::Node& node, const TransposeAttrs& a, int64_t rank);

enum class PadMode { kConstant, kReflect, kEdge, kWrap };
struct PadAttrs {
  PadMode mode = PadMode::kConstant;
  std::optional<std::vector<int64_t>> pads;  // attribute `paddings` (opset 1) or `pads` (2-10)
  float value = 0.f;                         // attribute of opset 1-10
};
Result<PadAttrs> ParsePad(const ir::Node& node, int64_t opset);
// Full [begin_0..begin_{r-1}, end_0..end_{r-1}] pads from pads over `axes`
// (opset 18; all axes when absent).
Result<std::vector<int64_t>> FullPads(const ir::Node& node, const std::vector<int64_t>& pads,
                                      const std::optional<std::vector<int64_t>>& axes, int64_t rank);
// Source index along an axis of size n for output position o - pad_begin = i
// in reflect/edge/wrap modes (i may lie outside [0, n)).
int64_t PadSourceIndex(PadMode mode, int64_t i, int64_t n);

struct DepthToSpaceAttrs {
  int64_t blocksize = 0;
  bool crd = false;  // mode CRD (opset 11); DCR is the default
};
Result<DepthToSpaceAttrs> ParseDepthToSpace(const ir::Node& node, int64_t opset);
struct SpaceToDepthAttrs {
  int64_t blocksize = 0;
};
Result<SpaceToDepthAttrs> ParseSpaceToDepth(const ir::Node& node, int64_t opset);

struct ReverseSequenceAttrs {
  int64_t time_axis = 0, batch_axis = 1;
};
Result<ReverseSequenceAttrs> ParseReverseSequence(const ir::Node& node, int64_t opset);

struct TriluAttrs {
  bool upper = true;
};
Result<TriluAttrs> ParseTrilu(const ir::Node& node, int64_t opset);

struct CompressAttrs {
  std::optional<int64_t> axis;  // none: the input is flattened
};
Result<CompressAttrs> ParseCompress(const ir::Node& node, int64_t opset);

// Output shape of Tile (opset 6+): -1 where the input dim is unknown.
Result<Shape> TileShape(const ir::Node& node, const ir::Dims& in, const std::vector<int64_t>& reps);

// Inference helpers shared by both files of the family.
// Integer value of input i when known (nullopt when absent or unknown).
Result<std::optional<std::vector<int64_t>>> KnownInputInts(const InferContext& ctx, size_t i, const char* what);
// Element count of 1-D input i when its value or dims say it.
std::optional<int64_t> KnownInputLength(const InferContext& ctx, size_t i);
// data_movement_more.cc: Pad, DepthToSpace, SpaceToDepth, ReverseSequence, Trilu, Compress.
void RegisterDataMovementMoreOps(OpRegistry& r);

}  // namespace kiln::ops
