// Sequence and Optional ops (opset 11+ / 15+): attributes shared by shape
// inference and the reference kernels, plus small TypeInfo helpers that
// control-flow inference also uses.
#pragma once

#include <optional>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

struct SplitToSequenceAttrs {
  int64_t axis = 0;
  bool keepdims = true;  // only used when the `split` input is absent
};
Result<SplitToSequenceAttrs> ParseSplitToSequence(const ir::Node& node, int64_t opset);

struct ConcatFromSequenceAttrs {
  int64_t axis = 0;      // required attribute
  bool new_axis = false;
};
Result<ConcatFromSequenceAttrs> ParseConcatFromSequence(const ir::Node& node, int64_t opset);

// SequenceEmpty's element dtype (attribute `dtype`, float by default).
Result<DType> ParseSequenceEmptyDType(const ir::Node& node, int64_t opset);

// seq(elem)
ir::TypeInfo SequenceType(ir::TypeInfo elem);
// optional(elem)
ir::TypeInfo OptionalType(ir::TypeInfo elem);
// The tensor type of a sequence's elements (kUnknown when not known).
ir::TypeInfo SequenceElemType(const ir::TypeInfo& seq);
// The most precise type both a and b satisfy: dims agree where both know
// them, rank known only when both ranks agree. Used where a value may come
// from several places (If branches, loop-carried values, sequence items).
ir::TypeInfo MergeTypes(const ir::TypeInfo& a, const ir::TypeInfo& b);

}  // namespace kiln::ops
