// Data movement on the cpu provider, layout-aware:
//  - Transpose is a zero-copy view: the output is the input's storage with
//    permuted strides, so its layout is PermutedOrder(input, perm). The
//    graph-level NHWC->NCHW Transpose of an NHWC model thus becomes a
//    channels-last value the convolutions read directly, with no copy.
//  - Concat reads any dense layout and writes the layout its inputs share
//    (row-major when they differ), each input copied into its slice of the
//    output through strides; where every input is dense in the output's
//    order, the output is, per index of the dims stored outside the axis,
//    each input's contiguous block in turn (ConcatBlocks): on channels-last
//    data a channel Concat copies each pixel's channel runs.
// Any dtype but string (a byte copy by element size).
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "ops/data_movement.h"
#include "providers/cpu/families.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/strided_copy.h"

namespace kiln::cpu {
namespace {

// ---- Transpose ----------------------------------------------------------------

Result<runtime::Kernel> MakeTranspose(const runtime::KernelInit& init) {
  const ir::TypeInfo* t = init.input_type(0);
  if (!t || t->kind != ir::TypeInfo::Kind::kTensor || !t->shape || t->dtype == DType::kString) return runtime::Kernel();
  const int64_t rank = static_cast<int64_t>(t->shape->size());
  KILN_ASSIGN_OR_RETURN(ops::TransposeAttrs a, ops::ParseTranspose(init.node, init.opset));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ops::TransposePerm(init.node, a, rank));
  runtime::KernelLayouts l;
  l.inputs.resize(1);
  l.inputs[0].any_dense = true;
  l.output_order = [perm](const std::vector<DimOrder>& in) { return PermutedOrder(in[0], perm); };
  return runtime::Kernel(
      [perm](runtime::KernelContext& ctx) -> Status {
        const Tensor& x = ctx.input(0);
        if (x.rank() != static_cast<int>(perm.size()))
          return ctx.Error("input has rank " + std::to_string(x.rank()) + ", perm has " + std::to_string(perm.size()) + " entries");
        return ctx.SetOutput(0, Datum(x.Permuted(perm)));
      },
      std::move(l));
}

// ---- Concat -------------------------------------------------------------------

// y[o][...] = in[0][o][0, run[0]), in[1][o][0, run[1]), ... for o < outer,
// every output row written once, whole, in order; rows split across
// threads. Row after row, each input's run in turn: all inputs are read at
// once, as parallel streams, which keeps memory busy where they come from
// memory (PP-OCRv4 det's 4 x 24-channel Concat at 160x160: 0.46-0.53 ms,
// against 0.58-0.86 taking a block of rows input after input). Copying
// input by input through the whole output wrote each output cache line once
// per input (1.06 ms there).
template <typename T>
void ConcatRows(T* y, const std::vector<const T*>& in, const std::vector<int64_t>& run, int64_t outer, int64_t total) {
  ParallelFor(outer, outer * total, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      T* __restrict d = y + o * total;
      for (size_t i = 0; i < in.size(); ++i) {
        const T* __restrict s = in[i] + o * run[i];
        if (run[i] >= 64) {
          std::memcpy(d, s, static_cast<size_t>(run[i]) * sizeof(T));
        } else {
          for (int64_t k = 0; k < run[i]; ++k) d[k] = s[k];  // short runs: no call per run
        }
        d += run[i];
      }
    }
  });
}

// The same where every run is at most 64 bytes (a few channels per pixel),
// where a loop per run costs more than the copy (a 640x640 image's focus
// stem, 4 x 3 channels, alone: 0.78 ms): rows in blocks of about 32 KiB of
// output, input after input into a block (CopyRows: fixed-size moves, one
// call per block and input), each output line filled in L1 (0.21 ms).
// run and total in bytes.
void ConcatShortRuns(char* y, const std::vector<const char*>& in, const std::vector<int64_t>& run, int64_t outer, int64_t total,
                     int64_t elem) {
  const int64_t block = std::max<int64_t>(1, (32 << 10) / total);
  ParallelFor(outer, outer * total / elem, [&](int64_t o0, int64_t o1) {
    for (int64_t b0 = o0; b0 < o1; b0 += block) {
      const int64_t rows = std::min(block, o1 - b0);
      int64_t col = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        CopyRows(y + b0 * total + col, total, in[i] + b0 * run[i], run[i], rows, run[i]);
        col += run[i];
      }
    }
  });
}

// The blocked Concat when every input is dense in y's order; false if one
// is not (or the element size has no copy type).
bool TryConcatBlocks(const Tensor& y, const std::vector<const Tensor*>& ins, const DimOrder& order, int64_t axis) {
  const int rank = y.rank();
  for (const Tensor* t : ins)
    if (!IsDenseInOrder(*t, order)) return false;
  const DimOrder full = ResolveOrder(order, rank);
  int64_t outer = 1;
  size_t p = 0;
  for (; p < full.size() && full[p] != axis; ++p) outer *= y.shape()[static_cast<size_t>(full[p])];
  std::vector<int64_t> run;
  for (const Tensor* t : ins) {
    int64_t r = 1;
    for (size_t q = p; q < full.size(); ++q) r *= t->shape()[static_cast<size_t>(full[q])];
    run.push_back(r);
  }
  int64_t total = 0, longest = 0;
  for (int64_t r : run) {
    total += r;
    longest = std::max(longest, r);
  }
  const int64_t elem = static_cast<int64_t>(DTypeSize(y.dtype()));
  if (longest * elem <= 64) {
    std::vector<const char*> bytes_in;
    std::vector<int64_t> bytes_run;
    for (size_t i = 0; i < ins.size(); ++i) {
      bytes_in.push_back(static_cast<const char*>(ins[i]->raw()));
      bytes_run.push_back(run[i] * elem);
    }
    ConcatShortRuns(static_cast<char*>(y.raw()), bytes_in, bytes_run, outer, total * elem, elem);
    return true;
  }
  auto go = [&](auto* yp) {
    using T = std::remove_pointer_t<decltype(yp)>;
    std::vector<const T*> in;
    for (const Tensor* t : ins) in.push_back(static_cast<const T*>(t->raw()));
    ConcatRows(yp, in, run, outer, total);
  };
  switch (elem) {
    case 1: go(static_cast<uint8_t*>(y.raw())); return true;
    case 2: go(static_cast<uint16_t*>(y.raw())); return true;
    case 4: go(static_cast<uint32_t*>(y.raw())); return true;
    case 8: go(static_cast<uint64_t*>(y.raw())); return true;
    default: return false;
  }
}

DimOrder SharedOrder(const std::vector<DimOrder>& orders, int rank) {
  for (const DimOrder& o : orders)
    if (!SameOrder(o, orders[0], rank)) return kRowMajor;
  return orders.empty() ? kRowMajor : orders[0];
}

// The run-time order of the output: the first input's order that every
// input is dense in. FindOrder calls an input with size-1 dims row-major
// (a 1x1xHxW map is dense in both orders), where the plan, which saw the
// order its producer wrote, shares the other inputs' channels-last; taking
// SharedOrder of FindOrder's answers would write the output row-major and
// copy every input through strides. Row-major when no order fits all.
DimOrder RunOrder(const std::vector<const Tensor*>& ins, const std::vector<DimOrder>& orders, int rank) {
  for (const DimOrder& o : orders) {
    if (SameOrder(o, kRowMajor, rank)) continue;
    if (std::all_of(ins.begin(), ins.end(), [&](const Tensor* t) { return IsDenseInOrder(*t, o); })) return o;
  }
  return SharedOrder(orders, rank);
}

Status RunConcat(runtime::KernelContext& ctx, int64_t axis_attr) {
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) ins.push_back(&ctx.input(i));
  if (ins.empty()) return ctx.Error("Concat needs at least one input");
  const int rank = ins[0]->rank();
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  if (axis < 0 || axis >= rank) return ctx.Error("axis " + std::to_string(axis_attr) + " is out of range for rank " + std::to_string(rank));
  Shape out = ins[0]->shape();
  out[static_cast<size_t>(axis)] = 0;
  std::vector<DimOrder> orders;
  for (const Tensor* t : ins) {
    if (t->rank() != rank || t->dtype() != ins[0]->dtype()) return ctx.Error("inputs differ in rank or dtype: " + t->Describe());
    for (int d = 0; d < rank; ++d)
      if (d != axis && t->shape()[static_cast<size_t>(d)] != ins[0]->shape()[static_cast<size_t>(d)])
        return ctx.Error("input " + t->Describe() + " differs from " + ins[0]->Describe() + " off the concat axis");
    out[static_cast<size_t>(axis)] += t->shape()[static_cast<size_t>(axis)];
    DimOrder o;
    if (!FindOrder(*t, &o)) return ctx.Error("cpu Concat was handed a non-dense input: " + t->Describe());
    orders.push_back(o);
  }
  const DimOrder order = RunOrder(ins, orders, rank);
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, ins[0]->dtype(), out, order));
  if (y.numel() == 0) return Status::Ok();
  if (IsDenseInOrder(y, order) && TryConcatBlocks(y, ins, order, axis)) return Status::Ok();
  int64_t start = 0;
  for (const Tensor* t : ins) {
    if (t->numel() > 0) {
      Tensor slice = y.View(t->shape(), y.strides(), y.offset() + start * y.strides()[static_cast<size_t>(axis)]);
      KILN_RETURN_IF_ERROR(CopyInto(slice, *t));
    }
    start += t->shape()[static_cast<size_t>(axis)];
  }
  return Status::Ok();
}

Result<runtime::Kernel> MakeConcat(const runtime::KernelInit& init) {
  for (size_t i = 0; i < init.node.inputs.size(); ++i) {
    const ir::TypeInfo* t = init.input_type(i);
    if (!t || t->kind != ir::TypeInfo::Kind::kTensor || !t->shape || t->dtype == DType::kString || t->dtype == DType::kUndefined)
      return runtime::Kernel();
  }
  KILN_ASSIGN_OR_RETURN(ops::ConcatAttrs a, ops::ParseConcat(init.node, init.opset));
  const int rank = static_cast<int>(init.input_type(0)->shape->size());
  runtime::KernelLayouts l;
  l.inputs.resize(init.node.inputs.size());
  for (auto& in : l.inputs) in.any_dense = true;
  l.output_order = [rank](const std::vector<DimOrder>& in) { return SharedOrder(in, rank); };
  const int64_t axis = a.axis;
  return runtime::Kernel([axis](runtime::KernelContext& ctx) { return RunConcat(ctx, axis); }, std::move(l));
}

}  // namespace

void RegisterDataMovementKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "Transpose", MakeTranspose);
  r.RegisterFactory("", "Concat", MakeConcat);
}

}  // namespace kiln::cpu
