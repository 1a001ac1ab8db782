// FusedSeparableConv (com.kiln opset 1, see fused.h): the three FusedConv
// steps it stands for, and its shape inference, which runs FusedConv's own
// inference on each step in turn. So the fused node can never infer a shape
// its three steps would not; the channel checks in front only give clearer
// messages than the inner Conv's for the mistakes a pass could make.
#include <string>

#include "ops/families.h"
#include "ops/fused.h"
#include "ops/infer_util.h"
#include "support/check.h"

namespace kiln::ops {
namespace {

constexpr const char* kSlotNames[kSepNumInputs] = {"X", "We", "Be", "Wd", "Bd", "Wp", "Bp", "Z"};

// A FusedConv node of the composition; `act` holds the step's activation.
ir::Node Step(const ir::Node& outer, const std::string& suffix, std::vector<std::string> inputs, const std::string& output,
              const ActivationAttrs& act) {
  ir::Node n;
  n.name = outer.name + "/" + suffix;
  n.op_type = "FusedConv";
  n.domain = kKilnDomain;
  n.inputs = std::move(inputs);
  while (!n.inputs.empty() && n.inputs.back().empty()) n.inputs.pop_back();
  n.outputs = {output};
  for (auto& a : ActivationToAttributes(act)) n.attrs[a.name] = std::move(a);
  return n;
}

std::string Input(const ir::Node& n, size_t i) { return n.HasInput(i) ? n.inputs[i] : std::string(); }

// Dim k of d when known, else -1.
int64_t DimAt(const ir::Dims* d, size_t k) { return d && k < d->size() && (*d)[k].known() ? (*d)[k].value : -1; }

std::string DimsText(const ir::Dims* d) { return d ? ir::DimsToString(*d) : "[?]"; }

// Ranks and channel counts: X [N,C,H,W], We [M,C,1,1], Wd [M,1,k,k],
// Wp [O,M,1,1]. Returns M when known, else -1.
Result<int64_t> CheckChannels(const InferContext& ctx) {
  for (size_t i : {kSepX, kSepWe, kSepWd, kSepWp}) {
    const ir::Dims* d = ctx.input_dims(i);
    if (d && d->size() != 4)
      return ctx.Error(std::string("input ") + kSlotNames[i] + " " + ir::DimsToString(*d) + " has rank " + std::to_string(d->size()) +
                       ", expected 4");
  }
  const ir::Dims *x = ctx.input_dims(kSepX), *we = ctx.input_dims(kSepWe), *wd = ctx.input_dims(kSepWd),
                 *wp = ctx.input_dims(kSepWp);
  int64_t m = DimAt(x, 1);
  if (ctx.has_input(kSepWe)) {
    const int64_t c = DimAt(we, 1);
    if (m >= 0 && c >= 0 && c != m)
      return ctx.Error("expansion weights We " + DimsText(we) + " take " + std::to_string(c) + " channels, X " + DimsText(x) + " has " +
                       std::to_string(m));
    if ((DimAt(we, 2) >= 0 && DimAt(we, 2) != 1) || (DimAt(we, 3) >= 0 && DimAt(we, 3) != 1))
      return ctx.Error("expansion weights We " + DimsText(we) + " are not 1x1");
    m = DimAt(we, 0);
  }
  const int64_t md = DimAt(wd, 0);
  if (DimAt(wd, 1) >= 0 && DimAt(wd, 1) != 1)
    return ctx.Error("depthwise weights Wd " + DimsText(wd) + " must be [M, 1, k, k]");
  if (m >= 0 && md >= 0 && m != md)
    return ctx.Error("depthwise weights Wd " + DimsText(wd) + " have " + std::to_string(md) + " channels, the depthwise input has " +
                     std::to_string(m));
  if (m < 0) m = md;
  const int64_t mp = DimAt(wp, 1);
  if (m >= 0 && mp >= 0 && m != mp)
    return ctx.Error("projection weights Wp " + DimsText(wp) + " take " + std::to_string(mp) + " channels, the depthwise output has " +
                     std::to_string(m));
  if ((DimAt(wp, 2) >= 0 && DimAt(wp, 2) != 1) || (DimAt(wp, 3) >= 0 && DimAt(wp, 3) != 1))
    return ctx.Error("projection weights Wp " + DimsText(wp) + " are not 1x1");
  return m < 0 ? mp : m;
}

// Runs FusedConv's inference on one step; `types`/`values` by the step's slots.
Result<ir::TypeInfo> InferStep(InferContext& outer, const InferFn& fused_conv_infer, const ir::Node& step,
                               const std::vector<const ir::TypeInfo*>& types, const std::vector<const Tensor*>& values) {
  InferContext ictx(step, 1, types, values);
  Status s = fused_conv_infer(ictx);
  if (ictx.read_unknown_value()) outer.note_unknown_value_read();
  if (!s.ok()) return s.WithContext(outer.node().Describe());
  return ictx.outputs().empty() ? ir::TypeInfo() : ictx.outputs()[0];
}

Status InferSeparable(InferContext& ctx, const InferFn& fused_conv_infer) {
  // Not CheckInputCount(6, 8): it wants every input below 6, and We, Be, Bd are optional.
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, kSepNumInputs));
  for (size_t i : {kSepX, kSepWd, kSepWp})
    if (!ctx.has_input(i)) return ctx.Error(std::string("input ") + std::to_string(i) + " (" + kSlotNames[i] + ") is required");
  if (ctx.has_input(kSepBe) && !ctx.has_input(kSepWe)) return ctx.Error("expansion bias Be given without expansion weights We");
  KILN_RETURN_IF_ERROR(CheckDType(ctx, kSepX, {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}));
  KILN_ASSIGN_OR_RETURN(int64_t m, CheckChannels(ctx));
  // Without M the depthwise group is unknown: check the attributes, leave the shape.
  KILN_ASSIGN_OR_RETURN(SeparableSteps steps, SplitSeparable(ctx.node(), m > 0 ? m : 1));
  if (m <= 0) {
    ctx.set_output(0, ctx.input_dtype(kSepX), std::nullopt);
    return Status::Ok();
  }
  auto type = [&](size_t i) { return ctx.has_input(i) ? &ctx.input_type(i) : nullptr; };
  auto value = [&](size_t i) { return i < ctx.input_values().size() ? ctx.input_values()[i] : nullptr; };
  ir::TypeInfo h = ctx.input_type(kSepX), d;
  if (steps.expand) {
    KILN_ASSIGN_OR_RETURN(h, InferStep(ctx, fused_conv_infer, *steps.expand, {type(kSepX), type(kSepWe), type(kSepBe)},
                                       {value(kSepX), value(kSepWe), value(kSepBe)}));
  }
  KILN_ASSIGN_OR_RETURN(d, InferStep(ctx, fused_conv_infer, steps.depthwise, {&h, type(kSepWd), type(kSepBd)},
                                     {nullptr, value(kSepWd), value(kSepBd)}));
  KILN_ASSIGN_OR_RETURN(ir::TypeInfo y, InferStep(ctx, fused_conv_infer, steps.project, {&d, type(kSepWp), type(kSepBp), type(kSepZ)},
                                                  {nullptr, value(kSepWp), value(kSepBp), value(kSepZ)}));
  ctx.set_output(0, std::move(y));
  return Status::Ok();
}

}  // namespace

Result<SeparableSteps> SplitSeparable(const ir::Node& node, int64_t group) {
  if (!node.HasInput(kSepX) || !node.HasInput(kSepWd) || !node.HasInput(kSepWp) || node.inputs.size() > kSepNumInputs)
    return node.Invalid("takes (X, We?, Be?, Wd, Bd?, Wp, Bp?, Z?): X, Wd and Wp are required");
  if (!node.HasOutput(0)) return node.Invalid("has no output");
  KILN_ASSIGN_OR_RETURN(std::string auto_pad, node.GetString("auto_pad", "NOTSET"));
  if (auto_pad != "NOTSET") return node.Invalid("auto_pad must be NOTSET, got '" + auto_pad + "' (the pads are explicit)");
  KILN_ASSIGN_OR_RETURN(ActivationAttrs expand_act, ParseActivation(node, "expand_"));
  KILN_ASSIGN_OR_RETURN(ActivationAttrs dw_act, ParseActivation(node, "depthwise_"));
  KILN_ASSIGN_OR_RETURN(ActivationAttrs act, ParseActivation(node, ""));
  const std::string base = node.name.empty() ? node.outputs[0] : node.name;
  const std::string h_name = base + "/expand", d_name = base + "/depthwise";
  ir::Node outer = node;
  outer.name = base;
  SeparableSteps s;
  std::string h = node.inputs[kSepX];
  if (node.HasInput(kSepWe)) {
    s.expand = Step(outer, "expand", {h, node.inputs[kSepWe], Input(node, kSepBe)}, h_name, expand_act);
    h = h_name;
  } else if (expand_act.kind != Activation::kNone || expand_act.has_post_affine()) {
    return node.Invalid("has an expand_activation but no expansion weights We");
  }
  s.depthwise = Step(outer, "depthwise", {h, node.inputs[kSepWd], Input(node, kSepBd)}, d_name, dw_act);
  for (const char* a : {"strides", "pads", "dilations", "kernel_shape"})
    if (const ir::Attribute* at = node.FindAttr(a)) s.depthwise.attrs[a] = *at;
  s.depthwise.attrs["group"] = ir::Attribute::Int("group", group);
  s.project = Step(outer, "project", {d_name, node.inputs[kSepWp], Input(node, kSepBp), Input(node, kSepZ)}, node.outputs[0], act);
  return s;
}

void RegisterFusedSeparableConv(OpRegistry& r) {
  const OpSchema* fused_conv = r.Find(kKilnDomain, "FusedConv", 1);
  KILN_CHECK(fused_conv);
  InferFn fused_conv_infer = fused_conv->infer;
  r.Register({kKilnDomain, "FusedSeparableConv", 1, 1,
              [fused_conv_infer](InferContext& ctx) { return InferSeparable(ctx, fused_conv_infer); }});
}

}  // namespace kiln::ops
