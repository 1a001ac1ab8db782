// Signal ops (opset 17+): attributes and shape inference. Complex values
// are a trailing dim of 2 (real, imaginary); a trailing 1 is a real signal.
#include "ops/signal.h"

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

Result<DftAttrs> ParseDft(const ir::Node& node, int64_t opset) {
  DftAttrs a;
  if (opset >= 20) {
    a.axis_from_input = true;  // opset 20 moved axis to input 2
    a.axis = -2;
  } else {
    KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 1));
  }
  KILN_ASSIGN_OR_RETURN(int64_t inv, node.GetInt("inverse", 0));
  KILN_ASSIGN_OR_RETURN(int64_t one, node.GetInt("onesided", 0));
  if ((inv != 0 && inv != 1) || (one != 0 && one != 1)) return node.Invalid("inverse and onesided must be 0 or 1");
  a.inverse = inv == 1;
  a.onesided = one == 1;
  return a;
}

Result<StftAttrs> ParseStft(const ir::Node& node, int64_t opset) {
  StftAttrs a;
  KILN_ASSIGN_OR_RETURN(int64_t one, node.GetInt("onesided", 1));
  if (one != 0 && one != 1) return node.Invalid("onesided must be 0 or 1, got " + std::to_string(one));
  a.onesided = one == 1;
  return a;
}

Result<WindowAttrs> ParseWindow(const ir::Node& node, int64_t opset) {
  WindowAttrs a;
  KILN_ASSIGN_OR_RETURN(int64_t p, node.GetInt("periodic", 1));
  if (p != 0 && p != 1) return node.Invalid("periodic must be 0 or 1, got " + std::to_string(p));
  a.periodic = p == 1;
  KILN_ASSIGN_OR_RETURN(int64_t dt, node.GetInt("output_datatype", 1));
  if (!DTypeIsKnown(static_cast<int>(dt)) || dt == 0 || dt == static_cast<int64_t>(DType::kString))
    return node.Invalid("unsupported output_datatype " + std::to_string(dt));
  a.output_dtype = static_cast<DType>(dt);
  return a;
}

namespace {

const std::initializer_list<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};

// A scalar (or 1-element) integer input's value when known; -1 otherwise.
Result<int64_t> OptionalScalar(const InferContext& ctx, size_t i, const char* what, bool allow_zero = false) {
  if (!ctx.has_input(i)) return int64_t{-1};
  KILN_RETURN_IF_ERROR(CheckDType(ctx, i, {DType::kInt32, DType::kInt64}));
  auto v = ctx.input_ints(i);
  if (!v) return int64_t{-1};
  if (v->size() != 1) return ctx.Error(std::string(what) + " must be a scalar");
  if ((*v)[0] < 0 || ((*v)[0] == 0 && !allow_zero))
    return ctx.Error(std::string(what) + " must be " + (allow_zero ? ">= 0" : "positive") + ", got " + std::to_string((*v)[0]));
  return (*v)[0];
}

Status InferDft(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, ctx.opset() >= 20 ? 3 : 2));
  KILN_ASSIGN_OR_RETURN(DftAttrs a, ParseDft(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  KILN_ASSIGN_OR_RETURN(int64_t n, OptionalScalar(ctx, 1, "dft_length"));
  const ir::Dims* d = ctx.input_dims(0);
  if (!d) {
    ctx.set_output(0, ctx.input_dtype(0), std::nullopt);
    return Status::Ok();
  }
  const int64_t r = static_cast<int64_t>(d->size());
  if (r < 2) return ctx.Error("input must have rank >= 2 (signal dims and a last dim of 1 or 2)");
  const ir::Dim& last = d->back();
  if (last.known() && last.value != 1 && last.value != 2)
    return ctx.Error("the last dim must be 1 (real) or 2 (complex), got " + std::to_string(last.value));
  int64_t axis = a.axis;
  if (a.axis_from_input && ctx.has_input(2)) {
    auto v = ctx.input_ints(2);
    if (!v) {
      ctx.set_output(0, ctx.input_dtype(0), UnknownDims(d->size()));
      return Status::Ok();
    }
    if (v->size() != 1) return ctx.Error("axis must be a scalar");
    axis = (*v)[0];
  }
  // The last dim holds (re, im): the signal axis is any of the others.
  if (axis < -r || axis >= r || axis == -1 || axis == r - 1)
    return ctx.Error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r) +
                     " (the last dim holds real/imaginary parts)");
  if (axis < 0) axis += r;
  ir::Dims out = *d;
  out.back() = ir::Dim::Known(2);
  // A dft_length whose value is not known yet leaves the length unknown.
  const bool length_unknown = n < 0 && ctx.has_input(1);
  ir::Dim len = n > 0 ? ir::Dim::Known(n) : (length_unknown ? ir::Dim{} : (*d)[static_cast<size_t>(axis)]);
  if (a.onesided) len = len.known() ? ir::Dim::Known(len.value / 2 + 1) : ir::Dim{};
  out[static_cast<size_t>(axis)] = len;
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::Ok();
}

Status InferStft(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 4));
  KILN_ASSIGN_OR_RETURN(StftAttrs a, ParseStft(ctx.node(), ctx.opset()));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  KILN_ASSIGN_OR_RETURN(int64_t step, OptionalScalar(ctx, 1, "frame_step"));
  KILN_ASSIGN_OR_RETURN(int64_t flen, OptionalScalar(ctx, 3, "frame_length"));
  if (ctx.has_input(2)) {
    const ir::Dims* w = ctx.input_dims(2);
    if (w && w->size() != 1) return ctx.Error("window must be 1-D, got shape " + ir::DimsToString(*w));
    if (w && (*w)[0].known()) {
      if (flen > 0 && flen != (*w)[0].value)
        return ctx.Error("frame_length " + std::to_string(flen) + " differs from the window length " + std::to_string((*w)[0].value));
      flen = (*w)[0].value;
    }
  } else if (!ctx.has_input(3)) {
    return ctx.Error("needs a window or a frame_length");
  }
  const ir::Dims* d = ctx.input_dims(0);
  if (!d) {
    ctx.set_output(0, ctx.input_dtype(0), UnknownDims(4));
    return Status::Ok();
  }
  if (d->size() != 3) return ctx.Error("signal must be [batch, length, 1 or 2], got " + ir::DimsToString(*d));
  const ir::Dim& c = (*d)[2];
  if (c.known() && c.value != 1 && c.value != 2) return ctx.Error("signal's last dim must be 1 or 2, got " + std::to_string(c.value));
  if (a.onesided && c.known() && c.value == 2) return ctx.Error("onesided output needs a real signal");
  ir::Dim frames, bins;
  const ir::Dim& L = (*d)[1];
  if (flen > 0 && step > 0 && L.known()) {
    if (flen > L.value)
      return ctx.Error("frame_length " + std::to_string(flen) + " exceeds the signal length " + std::to_string(L.value));
    frames = ir::Dim::Known((L.value - flen) / step + 1);
  }
  if (flen > 0) bins = ir::Dim::Known(a.onesided ? flen / 2 + 1 : flen);
  ctx.set_output(0, ctx.input_dtype(0), ir::Dims{(*d)[0], frames, bins, ir::Dim::Known(2)});
  return Status::Ok();
}

Status InferWindow(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_ASSIGN_OR_RETURN(WindowAttrs a, ParseWindow(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(int64_t n, OptionalScalar(ctx, 0, "size", /*allow_zero=*/true));
  ctx.set_output(0, a.output_dtype, ir::Dims{n >= 0 ? ir::Dim::Known(n) : ir::Dim{}});
  return Status::Ok();
}

Status InferMelWeightMatrix(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(5, 5));
  KILN_ASSIGN_OR_RETURN(WindowAttrs a, ParseWindow(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(int64_t bins, OptionalScalar(ctx, 0, "num_mel_bins"));
  KILN_ASSIGN_OR_RETURN(int64_t dft, OptionalScalar(ctx, 1, "dft_length"));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 3, kFloatTypes));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 4, kFloatTypes));
  ctx.set_output(0, a.output_dtype,
                 ir::Dims{dft > 0 ? ir::Dim::Known(dft / 2 + 1) : ir::Dim{}, bins > 0 ? ir::Dim::Known(bins) : ir::Dim{}});
  return Status::Ok();
}

}  // namespace

void RegisterSignalOps(OpRegistry& r) {
  r.Register({"", "DFT", 17, 1000, InferDft});
  r.Register({"", "STFT", 17, 1000, InferStft});
  r.Register({"", "HannWindow", 17, 1000, InferWindow});
  r.Register({"", "HammingWindow", 17, 1000, InferWindow});
  r.Register({"", "BlackmanWindow", 17, 1000, InferWindow});
  r.Register({"", "MelWeightMatrix", 17, 1000, InferMelWeightMatrix});
}

}  // namespace kiln::ops
