// Reference kernels of the Sequence ops (opset 11+) and Optional ops
// (opset 15+). A sequence is a Datum holding a vector of tensors; an
// optional holding a value is the value itself, an empty one is Datum::None.
#include <cstring>

#include "ops/infer_util.h"
#include "ops/sequence.h"
#include "providers/reference/families.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

Result<const Datum*> SequenceInput(runtime::KernelContext& ctx, size_t i) {
  const Datum& d = ctx.input_datum(i);
  if (!d.is_sequence()) return ctx.Error("input " + std::to_string(i) + " must be a sequence, got " + d.Describe());
  return &d;
}

// Reads a scalar position input (int32/int64, rank 0 or shape [1]).
Result<int64_t> PositionInput(runtime::KernelContext& ctx, size_t i) {
  const Tensor& t = ctx.input(i);
  if (!t.defined()) return ctx.Error("position (input " + std::to_string(i) + ") must be a tensor");
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)
    return ctx.Error("position must be int32 or int64, got " + std::string(DTypeName(t.dtype())));
  if (t.numel() != 1 || t.rank() > 1) return ctx.Error("position must be a scalar, got shape " + ShapeToString(t.shape()));
  return static_cast<int64_t>(t.GetAsDouble(0));
}

// Checks pos in [-n, n - 1 + extra] and returns it made non-negative.
Result<int64_t> NormalizePosition(runtime::KernelContext& ctx, int64_t pos, int64_t n, int64_t extra) {
  if (pos < -n || pos > n - 1 + extra)
    return ctx.Error("position " + std::to_string(pos) + " is out of range for a sequence of " + std::to_string(n) +
                     " items (valid: [" + std::to_string(-n) + ", " + std::to_string(n - 1 + extra) + "])");
  return pos < 0 ? pos + n : pos;
}

Status SequenceEmpty(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(DType dt, ops::ParseSequenceEmptyDType(ctx.node(), ctx.opset()));
  return ctx.SetOutput(0, Datum::Sequence({}, dt));
}

Status SequenceConstruct(runtime::KernelContext& ctx) {
  std::vector<Tensor> items;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    if (!t.defined()) return ctx.Error("input " + std::to_string(i) + " must be a tensor");
    if (!items.empty() && t.dtype() != items[0].dtype())
      return ctx.Error("all inputs must have one dtype: input 0 is " + std::string(DTypeName(items[0].dtype())) +
                       ", input " + std::to_string(i) + " is " + DTypeName(t.dtype()));
    items.push_back(t);
  }
  return ctx.SetOutput(0, Datum::Sequence(std::move(items)));
}

Status SequenceAt(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Datum* seq, SequenceInput(ctx, 0));
  KILN_ASSIGN_OR_RETURN(int64_t pos, PositionInput(ctx, 1));
  const int64_t n = static_cast<int64_t>(seq->sequence().size());
  KILN_ASSIGN_OR_RETURN(pos, NormalizePosition(ctx, pos, n, 0));
  return ctx.SetOutput(0, Datum(seq->sequence()[static_cast<size_t>(pos)]));
}

Status SequenceInsert(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Datum* seq, SequenceInput(ctx, 0));
  const Tensor& t = ctx.input(1);
  if (!t.defined()) return ctx.Error("input 1 must be a tensor, got " + ctx.input_datum(1).Describe());
  const DType sdt = seq->sequence_dtype();
  if (sdt != DType::kUndefined && sdt != t.dtype())
    return ctx.Error("tensor dtype " + std::string(DTypeName(t.dtype())) + " differs from the sequence's element dtype " +
                     DTypeName(sdt));
  std::vector<Tensor> items = seq->sequence();
  int64_t pos = static_cast<int64_t>(items.size());
  if (ctx.has_input(2)) {
    KILN_ASSIGN_OR_RETURN(int64_t p, PositionInput(ctx, 2));
    KILN_ASSIGN_OR_RETURN(pos, NormalizePosition(ctx, p, static_cast<int64_t>(items.size()), 1));
  }
  items.insert(items.begin() + pos, t);
  return ctx.SetOutput(0, Datum::Sequence(std::move(items), t.dtype()));
}

Status SequenceErase(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Datum* seq, SequenceInput(ctx, 0));
  std::vector<Tensor> items = seq->sequence();
  const int64_t n = static_cast<int64_t>(items.size());
  if (n == 0) return ctx.Error("cannot erase from an empty sequence");
  int64_t pos = n - 1;
  if (ctx.has_input(1)) {
    KILN_ASSIGN_OR_RETURN(int64_t p, PositionInput(ctx, 1));
    KILN_ASSIGN_OR_RETURN(pos, NormalizePosition(ctx, p, n, 0));
  }
  items.erase(items.begin() + pos);
  return ctx.SetOutput(0, Datum::Sequence(std::move(items), seq->sequence_dtype()));
}

Status SequenceLength(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Datum* seq, SequenceInput(ctx, 0));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, DType::kInt64, {}));
  out.data<int64_t>()[0] = static_cast<int64_t>(seq->sequence().size());
  return Status::Ok();
}

// Copies x[..., begin:begin+len, ...] along `axis` into a new tensor.
Tensor SliceAxis(const Tensor& x, int64_t axis, int64_t begin, int64_t len) {
  Shape s = x.shape();
  s[static_cast<size_t>(axis)] = len;
  Tensor out = Tensor::Zeros(x.dtype(), s);
  const int64_t outer = DimProduct(x.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = DimProduct(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  const int64_t dim = x.dim(static_cast<int>(axis));
  if (x.dtype() == DType::kString) {
    const auto* src = x.data<std::string>();
    auto* dst = out.data<std::string>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < len * inner; ++k) dst[o * len * inner + k] = src[(o * dim + begin) * inner + k];
    return out;
  }
  const size_t es = DTypeSize(x.dtype());
  const auto* src = static_cast<const char*>(x.raw());
  auto* dst = static_cast<char*>(out.raw());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(dst + static_cast<size_t>(o * len * inner) * es, src + static_cast<size_t>((o * dim + begin) * inner) * es,
                static_cast<size_t>(len * inner) * es);
  return out;
}

Status SplitToSequence(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::SplitToSequenceAttrs a, ops::ParseSplitToSequence(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return ctx.Error("input 0 must be a tensor");
  if (x.rank() == 0) return ctx.Error("input must have rank >= 1");
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(ctx.node(), a.axis, x.rank()));
  const int64_t dim = x.dim(static_cast<int>(axis));
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (!ctx.has_input(1)) {
    // No split: chunks of 1, squeezed unless keepdims.
    sizes.assign(static_cast<size_t>(dim), 1);
    squeeze = !a.keepdims;
  } else {
    const Tensor& sp = ctx.input(1);
    if (sp.dtype() != DType::kInt32 && sp.dtype() != DType::kInt64) return ctx.Error("split must be int32 or int64");
    if (sp.rank() == 0) {
      const int64_t chunk = static_cast<int64_t>(sp.GetAsDouble(0));
      if (chunk <= 0) return ctx.Error("scalar split must be positive, got " + std::to_string(chunk));
      // Equal chunks; the last one is smaller when dim is not a multiple.
      for (int64_t b = 0; b < dim; b += chunk) sizes.push_back(std::min(chunk, dim - b));
    } else if (sp.rank() == 1) {
      int64_t total = 0;
      for (int64_t k = 0; k < sp.numel(); ++k) {
        const int64_t v = static_cast<int64_t>(sp.GetAsDouble(k));
        if (v < 0) return ctx.Error("split values must be >= 0, got " + std::to_string(v));
        sizes.push_back(v);
        total += v;
      }
      if (total != dim)
        return ctx.Error("split sums to " + std::to_string(total) + " but dim " + std::to_string(axis) + " is " + std::to_string(dim));
    } else {
      return ctx.Error("split must be a scalar or 1-D, got shape " + ShapeToString(sp.shape()));
    }
  }
  std::vector<Tensor> items;
  int64_t begin = 0;
  for (int64_t len : sizes) {
    Tensor piece = SliceAxis(x, axis, begin, len);
    if (squeeze) {
      Shape s = piece.shape();
      s.erase(s.begin() + axis);
      piece = piece.Reshaped(s);
    }
    items.push_back(std::move(piece));
    begin += len;
  }
  return ctx.SetOutput(0, Datum::Sequence(std::move(items), x.dtype()));
}

Status ConcatFromSequence(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::ConcatFromSequenceAttrs a, ops::ParseConcatFromSequence(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(const Datum* seq, SequenceInput(ctx, 0));
  const std::vector<Tensor>& items = seq->sequence();
  if (items.empty()) return ctx.Error("cannot concatenate an empty sequence");
  const Shape& s0 = items[0].shape();
  const int64_t r = static_cast<int64_t>(s0.size());
  if (!a.new_axis && r == 0) return ctx.Error("cannot concatenate scalars without new_axis=1");
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(ctx.node(), a.axis, a.new_axis ? r + 1 : r));
  // With new_axis each item is viewed as having a size-1 dim at `axis`.
  std::vector<Tensor> parts;
  int64_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const Tensor& t = items[i];
    if (t.dtype() != items[0].dtype()) return ctx.Error("sequence items have different dtypes");
    bool same = t.rank() == r;
    for (int64_t k = 0; same && k < r; ++k)
      if (a.new_axis || k != axis) same = t.shape()[k] == s0[k];  // only the concat axis may differ
    if (!same)
      return ctx.Error("item " + std::to_string(i) + " has shape " + ShapeToString(t.shape()) + ", incompatible with item 0 " +
                       ShapeToString(s0) + " for axis " + std::to_string(axis));
    Tensor c = t.Contiguous();
    if (a.new_axis) {
      Shape ns = c.shape();
      ns.insert(ns.begin() + axis, 1);
      c = c.Reshaped(ns);
    }
    total += c.dim(static_cast<int>(axis));
    parts.push_back(std::move(c));
  }
  Shape os = parts[0].shape();
  os[static_cast<size_t>(axis)] = total;
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, items[0].dtype(), os));
  const int64_t outer = DimProduct(os, 0, static_cast<size_t>(axis));
  const int64_t inner = DimProduct(os, static_cast<size_t>(axis) + 1, os.size());
  const size_t es = DTypeSize(out.dtype());
  int64_t at = 0;  // offset along axis
  for (const Tensor& p : parts) {
    const int64_t len = p.dim(static_cast<int>(axis));
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t src = o * len * inner, dst = (o * total + at) * inner;
      if (out.dtype() == DType::kString) {
        for (int64_t k = 0; k < len * inner; ++k) out.data<std::string>()[dst + k] = p.data<std::string>()[src + k];
      } else {
        std::memcpy(static_cast<char*>(out.raw()) + static_cast<size_t>(dst) * es,
                    static_cast<const char*>(p.raw()) + static_cast<size_t>(src) * es, static_cast<size_t>(len * inner) * es);
      }
    }
    at += len;
  }
  return Status::Ok();
}

Status Optional(runtime::KernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.SetOutput(0, Datum::None());
  const Datum& d = ctx.input_datum(0);
  if (!d.is_tensor() && !d.is_sequence()) return ctx.Error("input must be a tensor or a sequence, got " + d.Describe());
  return ctx.SetOutput(0, d);
}

Status OptionalGetElement(runtime::KernelContext& ctx) {
  const Datum& d = ctx.input_datum(0);
  if (d.is_none() || d.empty()) return ctx.Error("the optional input has no value");
  return ctx.SetOutput(0, d);
}

Status OptionalHasElement(runtime::KernelContext& ctx) {
  const Datum& d = ctx.input_datum(0);
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, DType::kBool, {}));
  out.data<bool>()[0] = ctx.has_input(0) && (d.is_tensor() || d.is_sequence());
  return Status::Ok();
}

}  // namespace

void RegisterSequenceKernels(runtime::KernelRegistry& r) {
  r.Register("", "SequenceEmpty", SequenceEmpty);
  r.Register("", "SequenceConstruct", SequenceConstruct);
  r.Register("", "SequenceAt", SequenceAt);
  r.Register("", "SequenceInsert", SequenceInsert);
  r.Register("", "SequenceErase", SequenceErase);
  r.Register("", "SequenceLength", SequenceLength);
  r.Register("", "SplitToSequence", SplitToSequence);
  r.Register("", "ConcatFromSequence", ConcatFromSequence);
  r.Register("", "Optional", Optional);
  r.Register("", "OptionalGetElement", OptionalGetElement);
  r.Register("", "OptionalHasElement", OptionalHasElement);
}

}  // namespace kiln::reference
