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
// rows split across threads. Each thread takes its rows in blocks of about
// 32 KiB of output and copies input after input into a block (CopyRows: a
// fixed-size move per row where runs are short), so each output cache line
// is filled in L1. Copying input by input through the whole output instead
// wrote each line once per input from memory (PP-OCR det's 4 x 24-channel
// Concat at 160x160 1.06 ms at 1 thread), and row by row with a loop per
// run spent its time on the loops where runs are a few channels (a 640x640
// focus stem's 4 x 3 channels: 1.02 ms).
// Runs and rows in bytes; elem: bytes per element.
void ConcatBlocks(char* y, const std::vector<const char*>& in, const std::vector<int64_t>& run, int64_t outer, int64_t total,
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
// is not.
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
  // In bytes from here: ConcatBlocks moves bytes.
  const int64_t elem = static_cast<int64_t>(DTypeSize(y.dtype()));
  int64_t total = 0;
  for (int64_t& r : run) total += (r *= elem);
  std::vector<const char*> in;
  for (const Tensor* t : ins) in.push_back(static_cast<const char*>(t->raw()));
  ConcatBlocks(static_cast<char*>(y.raw()), in, run, outer, total, elem);
  return true;
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
