// Reference kernels of If, Loop, Scan (opset 8 and 9+) and SequenceMap.
// Bodies run through KernelContext::RunSubgraph, which resolves names of
// enclosing scopes. Scan slices and stacked outputs are plain copies.
#include <cstring>
#include <limits>

#include "ops/control_flow.h"
#include "ops/infer_util.h"
#include "providers/reference/families.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

// Copies `n` elements (any dtype, strings included) between contiguous buffers.
void CopyElems(const Tensor& src, int64_t src_at, Tensor& dst, int64_t dst_at, int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DType::kString) {
    for (int64_t k = 0; k < n; ++k) dst.data<std::string>()[dst_at + k] = src.data<std::string>()[src_at + k];
    return;
  }
  const size_t es = DTypeSize(src.dtype());
  std::memcpy(static_cast<char*>(dst.raw()) + static_cast<size_t>(dst_at) * es,
              static_cast<const char*>(src.raw()) + static_cast<size_t>(src_at) * es, static_cast<size_t>(n) * es);
}

// x[..., idx, ...] along axis, with that axis removed.
Tensor Slice(const Tensor& x, int64_t axis, int64_t idx) {
  Shape s = x.shape();
  const int64_t dim = s[static_cast<size_t>(axis)];
  s.erase(s.begin() + axis);
  Tensor out = Tensor::Zeros(x.dtype(), s);
  const int64_t outer = DimProduct(x.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = DimProduct(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  for (int64_t o = 0; o < outer; ++o) CopyElems(x, (o * dim + idx) * inner, out, o * inner, inner);
  return out;
}

// Stacks equally shaped tensors along a new axis; items[t] goes to index t.
// `elem` gives the dtype and per-item shape (needed when items is empty).
Tensor Stack(const std::vector<Tensor>& items, DType dtype, const Shape& elem, int64_t axis) {
  const int64_t n = static_cast<int64_t>(items.size());
  Shape s = elem;
  s.insert(s.begin() + axis, n);
  Tensor out = Tensor::Zeros(dtype, s);
  const int64_t outer = DimProduct(elem, 0, static_cast<size_t>(axis));
  const int64_t inner = DimProduct(elem, static_cast<size_t>(axis), elem.size());
  for (int64_t t = 0; t < n; ++t) {
    if (!items[static_cast<size_t>(t)].defined()) continue;  // padding (opset 8 Scan) stays zero
    const Tensor item = items[static_cast<size_t>(t)].Contiguous();
    for (int64_t o = 0; o < outer; ++o) CopyElems(item, o * inner, out, (o * n + t) * inner, inner);
  }
  return out;
}

// Checks that every defined item has the same dtype and shape, returning it.
Status CommonShape(runtime::KernelContext& ctx, const std::vector<Tensor>& items, const std::string& what, DType* dt, Shape* shape) {
  bool first = true;
  for (size_t t = 0; t < items.size(); ++t) {
    if (!items[t].defined()) continue;
    if (first) {
      *dt = items[t].dtype();
      *shape = items[t].shape();
      first = false;
    } else if (items[t].dtype() != *dt || items[t].shape() != *shape) {
      return ctx.Error(what + ": iteration " + std::to_string(t) + " produced " + items[t].Describe() + ", earlier iterations " +
                       DTypeName(*dt) + ShapeToString(*shape) + " (scan outputs must keep one shape)");
    }
  }
  return Status::Ok();
}

// Shape and dtype a body declares for output i, for outputs of zero iterations.
void DeclaredElem(const ir::Graph& body, size_t i, DType* dt, Shape* shape) {
  const ir::TypeInfo& t = body.outputs[i].type;
  *dt = t.kind == ir::TypeInfo::Kind::kTensor && t.dtype != DType::kUndefined ? t.dtype : DType::kFloat32;
  shape->clear();
  if (t.kind == ir::TypeInfo::Kind::kTensor && t.shape)
    for (const ir::Dim& d : *t.shape) shape->push_back(d.known() ? d.value : 0);
}

Result<bool> BoolScalar(runtime::KernelContext& ctx, const Datum& d, const std::string& what) {
  if (!d.is_tensor() || d.tensor().dtype() != DType::kBool || d.tensor().numel() != 1)
    return ctx.Error(what + " must be a bool tensor with one element, got " + d.Describe());
  return d.tensor().Contiguous().data<bool>()[0];
}

Tensor BoolTensor(bool v) {
  Tensor t = Tensor::Zeros(DType::kBool, {});
  t.data<bool>()[0] = v;
  return t;
}

Status If(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::IfAttrs a, ops::ParseIf(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(bool cond, BoolScalar(ctx, ctx.input_datum(0), "cond"));
  const ir::Graph& branch = cond ? *a.then_branch : *a.else_branch;
  KILN_ASSIGN_OR_RETURN(std::vector<Datum> outs, ctx.RunSubgraph(branch, {}));
  if (outs.size() != ctx.num_outputs()) return ctx.Error("branch produced " + std::to_string(outs.size()) + " outputs");
  for (size_t i = 0; i < outs.size(); ++i) KILN_RETURN_IF_ERROR(ctx.SetOutput(i, std::move(outs[i])));
  return Status::Ok();
}

Status Loop(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::LoopAttrs a, ops::ParseLoop(ctx.node(), ctx.opset()));
  int64_t max_trips = std::numeric_limits<int64_t>::max();
  if (ctx.has_input(0)) {
    const Tensor& m = ctx.input(0);
    if (!m.defined() || m.dtype() != DType::kInt64 || m.numel() != 1)
      return ctx.Error("M must be an int64 tensor with one element, got " + ctx.input_datum(0).Describe());
    max_trips = m.data<int64_t>()[0];
  }
  bool cond = true;
  if (ctx.has_input(1)) { KILN_ASSIGN_OR_RETURN(cond, BoolScalar(ctx, ctx.input_datum(1), "cond")); }
  // The spec's "infinite loop" form: the body's condition output is ignored
  // without a cond input, so nothing could ever stop it.
  if (!ctx.has_input(0) && !ctx.has_input(1)) return ctx.Unsupported("Loop without M and cond never terminates");
  std::vector<Datum> carried;
  for (size_t i = 0; i < a.num_carried; ++i) {
    const Datum& d = ctx.input_datum(2 + i);
    if (d.empty()) return ctx.Error("loop-carried input " + std::to_string(i) + " is missing");
    carried.push_back(d);
  }
  std::vector<std::vector<Tensor>> scans(a.num_scan);
  for (int64_t it = 0; it < max_trips && cond; ++it) {
    std::vector<Datum> in;
    in.push_back(Datum(Tensor::ScalarInt64(it)));
    in.push_back(Datum(BoolTensor(cond)));
    for (auto& d : carried) in.push_back(d);
    KILN_ASSIGN_OR_RETURN(std::vector<Datum> outs, ctx.RunSubgraph(*a.body, in));
    if (outs.size() != 1 + a.num_carried + a.num_scan) return ctx.Error("body produced " + std::to_string(outs.size()) + " outputs");
    KILN_ASSIGN_OR_RETURN(bool c, BoolScalar(ctx, outs[0], "body condition output"));
    if (ctx.has_input(1)) cond = c;  // without a cond input the body's condition is ignored (spec)
    for (size_t i = 0; i < a.num_carried; ++i) carried[i] = std::move(outs[1 + i]);
    for (size_t k = 0; k < a.num_scan; ++k) {
      Datum& d = outs[1 + a.num_carried + k];
      if (!d.is_tensor()) return ctx.Error("scan output " + std::to_string(k) + " must be a tensor, got " + d.Describe());
      scans[k].push_back(d.tensor());
    }
  }
  for (size_t i = 0; i < a.num_carried; ++i) KILN_RETURN_IF_ERROR(ctx.SetOutput(i, std::move(carried[i])));
  for (size_t k = 0; k < a.num_scan; ++k) {
    DType dt;
    Shape elem;
    DeclaredElem(*a.body, 1 + a.num_carried + k, &dt, &elem);
    KILN_RETURN_IF_ERROR(CommonShape(ctx, scans[k], "scan output " + std::to_string(k), &dt, &elem));
    KILN_RETURN_IF_ERROR(ctx.SetOutput(a.num_carried + k, Datum(Stack(scans[k], dt, elem, 0))));
  }
  return Status::Ok();
}

// Runs the scan body over scan inputs `xs` (already without opset 8's batch
// dim) from `states`; fills the final states and per-iteration outputs
// placed by output direction (scan_outs[k][t]). `steps` <= the scan length.
Status RunScan(runtime::KernelContext& ctx, const ops::ScanAttrs& a, std::vector<Datum>& states, const std::vector<Tensor>& xs,
               const std::vector<int64_t>& axes, int64_t len, int64_t steps, std::vector<std::vector<Tensor>>& scan_outs) {
  for (auto& v : scan_outs) v.assign(static_cast<size_t>(len), Tensor());
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Datum> in = states;
    for (size_t j = 0; j < xs.size(); ++j) {
      const int64_t idx = a.input_directions[j] ? steps - 1 - t : t;
      in.push_back(Datum(Slice(xs[j], axes[j], idx)));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Datum> outs, ctx.RunSubgraph(*a.body, in));
    if (outs.size() != a.num_states + a.num_scan_outputs) return ctx.Error("body produced " + std::to_string(outs.size()) + " outputs");
    for (size_t i = 0; i < a.num_states; ++i) states[i] = std::move(outs[i]);
    for (size_t k = 0; k < a.num_scan_outputs; ++k) {
      const Datum& d = outs[a.num_states + k];
      if (!d.is_tensor()) return ctx.Error("scan output " + std::to_string(k) + " must be a tensor, got " + d.Describe());
      const int64_t pos = a.output_directions[k] ? steps - 1 - t : t;
      scan_outs[k][static_cast<size_t>(pos)] = d.tensor();
    }
  }
  return Status::Ok();
}

Status Scan(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::ScanAttrs a, ops::ParseScan(ctx.node(), ctx.opset()));
  const bool v8 = ctx.opset() < 9;
  std::vector<Tensor> xs;
  std::vector<int64_t> axes;
  int64_t len = -1;
  for (size_t j = 0; j < a.num_scan_inputs; ++j) {
    const Tensor& x = ctx.input(a.first_input + a.num_states + j);
    if (!x.defined()) return ctx.Error("scan input " + std::to_string(j) + " must be a tensor");
    if (v8 && x.rank() < 2) return ctx.Error("scan input " + std::to_string(j) + " must have rank >= 2 (batch, sequence, ...)");
    if (x.rank() < 1) return ctx.Error("scan input " + std::to_string(j) + " must have rank >= 1");
    KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(ctx.node(), a.input_axes[j], x.rank()));
    const int64_t l = x.dim(static_cast<int>(axis));
    if (len >= 0 && l != len)
      return ctx.Error("scan inputs have different lengths " + std::to_string(len) + " and " + std::to_string(l));
    len = l;
    xs.push_back(x);
    axes.push_back(axis);
  }
  std::vector<Datum> states;
  for (size_t i = 0; i < a.num_states; ++i) {
    const Datum& d = ctx.input_datum(a.first_input + i);
    if (!d.is_tensor()) return ctx.Error("state input " + std::to_string(i) + " must be a tensor, got " + d.Describe());
    states.push_back(d);
  }
  auto finish_output = [&](size_t k, std::vector<Tensor>& items, int64_t axis_attr, Tensor* out) -> Status {
    DType dt;
    Shape elem;
    DeclaredElem(*a.body, a.num_states + k, &dt, &elem);
    KILN_RETURN_IF_ERROR(CommonShape(ctx, items, "scan output " + std::to_string(k), &dt, &elem));
    KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(ctx.node(), axis_attr, static_cast<int64_t>(elem.size()) + 1));
    *out = Stack(items, dt, elem, axis);
    return Status::Ok();
  };
  std::vector<std::vector<Tensor>> scan_outs(a.num_scan_outputs);
  if (!v8) {
    KILN_RETURN_IF_ERROR(RunScan(ctx, a, states, xs, axes, len, len, scan_outs));
    for (size_t i = 0; i < a.num_states; ++i) KILN_RETURN_IF_ERROR(ctx.SetOutput(i, std::move(states[i])));
    for (size_t k = 0; k < a.num_scan_outputs; ++k) {
      Tensor out;
      KILN_RETURN_IF_ERROR(finish_output(k, scan_outs[k], a.output_axes[k], &out));
      KILN_RETURN_IF_ERROR(ctx.SetOutput(a.num_states + k, Datum(out)));
    }
    return Status::Ok();
  }
  // Opset 8: every input has a batch dim 0; each batch entry scans its own
  // sequence_lens[b] steps (the rest of its scan outputs stays zero).
  const int64_t batch = xs[0].dim(0);
  for (size_t j = 0; j < xs.size(); ++j)
    if (xs[j].dim(0) != batch) return ctx.Error("scan inputs have different batch sizes");
  for (auto& s : states)
    if (s.tensor().rank() < 1 || s.tensor().dim(0) != batch)
      return ctx.Error("state " + s.Describe() + " must have batch size " + std::to_string(batch) + " in dim 0");
  std::vector<int64_t> lens(static_cast<size_t>(batch), len);
  if (ctx.has_input(0)) {
    const Tensor& sl = ctx.input(0);
    if (!sl.defined() || sl.numel() != batch || (sl.dtype() != DType::kInt32 && sl.dtype() != DType::kInt64))
      return ctx.Error("sequence_lens must be an integer tensor of " + std::to_string(batch) + " values");
    for (int64_t b = 0; b < batch; ++b) {
      lens[static_cast<size_t>(b)] = static_cast<int64_t>(sl.GetAsDouble(b));
      if (lens[static_cast<size_t>(b)] < 0 || lens[static_cast<size_t>(b)] > len)
        return ctx.Error("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[static_cast<size_t>(b)]) +
                         " is outside [0, " + std::to_string(len) + "]");
    }
  }
  std::vector<std::vector<Tensor>> final_states(a.num_states);
  std::vector<std::vector<Tensor>> per_batch(a.num_scan_outputs);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Datum> st;
    for (auto& s : states) st.push_back(Datum(Slice(s.tensor(), 0, b)));
    std::vector<Tensor> xb;
    std::vector<int64_t> axb;
    for (const Tensor& x : xs) { xb.push_back(Slice(x, 0, b)); axb.push_back(0); }
    KILN_RETURN_IF_ERROR(RunScan(ctx, a, st, xb, axb, len, lens[static_cast<size_t>(b)], scan_outs));
    for (size_t i = 0; i < a.num_states; ++i) {
      if (!st[i].is_tensor()) return ctx.Error("state output " + std::to_string(i) + " must be a tensor");
      final_states[i].push_back(st[i].tensor());
    }
    for (size_t k = 0; k < a.num_scan_outputs; ++k) {
      Tensor out;
      KILN_RETURN_IF_ERROR(finish_output(k, scan_outs[k], 0, &out));
      per_batch[k].push_back(out);
    }
  }
  for (size_t i = 0; i < a.num_states; ++i) {
    DType dt = states[i].tensor().dtype();
    Shape elem(states[i].tensor().shape().begin() + 1, states[i].tensor().shape().end());
    KILN_RETURN_IF_ERROR(CommonShape(ctx, final_states[i], "state output " + std::to_string(i), &dt, &elem));
    KILN_RETURN_IF_ERROR(ctx.SetOutput(i, Datum(Stack(final_states[i], dt, elem, 0))));
  }
  for (size_t k = 0; k < a.num_scan_outputs; ++k) {
    DType dt;
    Shape elem;
    DeclaredElem(*a.body, a.num_states + k, &dt, &elem);
    elem.insert(elem.begin(), len);
    KILN_RETURN_IF_ERROR(CommonShape(ctx, per_batch[k], "scan output " + std::to_string(k), &dt, &elem));
    KILN_RETURN_IF_ERROR(ctx.SetOutput(a.num_states + k, Datum(Stack(per_batch[k], dt, elem, 0))));
  }
  return Status::Ok();
}

Status SequenceMap(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::SequenceMapAttrs a, ops::ParseSequenceMap(ctx.node(), ctx.opset()));
  const Datum& s0 = ctx.input_datum(0);
  if (!s0.is_sequence()) return ctx.Error("input 0 must be a sequence, got " + s0.Describe());
  const size_t n = s0.sequence().size();
  for (size_t j = 1; j < ctx.num_inputs(); ++j) {
    const Datum& d = ctx.input_datum(j);
    if (d.is_sequence() && d.sequence().size() != n)
      return ctx.Error("input " + std::to_string(j) + " has " + std::to_string(d.sequence().size()) + " items, input 0 has " +
                       std::to_string(n));
    if (!d.is_sequence() && !d.is_tensor()) return ctx.Error("input " + std::to_string(j) + " must be a sequence or a tensor");
  }
  std::vector<std::vector<Tensor>> results(ctx.num_outputs());
  for (size_t i = 0; i < n; ++i) {
    std::vector<Datum> in;
    for (size_t j = 0; j < ctx.num_inputs(); ++j) {
      const Datum& d = ctx.input_datum(j);
      in.push_back(d.is_sequence() ? Datum(d.sequence()[i]) : d);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<Datum> outs, ctx.RunSubgraph(*a.body, in));
    if (outs.size() != results.size()) return ctx.Error("body produced " + std::to_string(outs.size()) + " outputs");
    for (size_t k = 0; k < outs.size(); ++k) {
      if (!outs[k].is_tensor()) return ctx.Error("body output " + std::to_string(k) + " must be a tensor, got " + outs[k].Describe());
      results[k].push_back(outs[k].tensor());
    }
  }
  for (size_t k = 0; k < results.size(); ++k) {
    const ir::TypeInfo& t = a.body->outputs[k].type;
    DType dt = results[k].empty() ? (t.kind == ir::TypeInfo::Kind::kTensor ? t.dtype : DType::kUndefined) : results[k][0].dtype();
    KILN_RETURN_IF_ERROR(ctx.SetOutput(k, Datum::Sequence(std::move(results[k]), dt)));
  }
  return Status::Ok();
}

}  // namespace

void RegisterControlFlowKernels(runtime::KernelRegistry& r) {
  r.Register("", "If", If);
  r.Register("", "Loop", Loop);
  r.Register("", "Scan", Scan);
  r.Register("", "SequenceMap", SequenceMap);
}

}  // namespace kiln::reference
