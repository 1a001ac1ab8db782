// RNN, GRU, LSTM: attributes and shape inference (opset 1+; `layout` is
// read from opset 14 on, earlier opsets are always seq-major).
#include "ops/rnn.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

double RnnActivation::Apply(double x) const {
  switch (fn) {
    case Fn::kRelu: return x > 0 ? x : 0;
    case Fn::kTanh: return std::tanh(x);
    case Fn::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Fn::kAffine: return alpha * x + beta;
    case Fn::kLeakyRelu: return x >= 0 ? x : alpha * x;
    case Fn::kThresholdedRelu: return x > alpha ? x : 0;
    case Fn::kScaledTanh: return alpha * std::tanh(beta * x);
    case Fn::kHardSigmoid: return std::min(1.0, std::max(0.0, alpha * x + beta));
    case Fn::kElu: return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
    case Fn::kSoftsign: return x / (1.0 + std::fabs(x));
    case Fn::kSoftplus: return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0);
  }
  return x;
}

namespace {

struct FnInfo {
  const char* name;
  RnnActivation::Fn fn;
  int uses;  // 0: none, 1: alpha, 2: alpha and beta
  double alpha, beta;
};
// Default alpha/beta where the spec gives one (LeakyRelu 0.01, HardSigmoid 0.2/0.5, ...).
const FnInfo kFns[] = {
    {"relu", RnnActivation::Fn::kRelu, 0, 0, 0},
    {"tanh", RnnActivation::Fn::kTanh, 0, 0, 0},
    {"sigmoid", RnnActivation::Fn::kSigmoid, 0, 0, 0},
    {"affine", RnnActivation::Fn::kAffine, 2, 1.0, 0.0},
    {"leakyrelu", RnnActivation::Fn::kLeakyRelu, 1, 0.01, 0},
    {"thresholdedrelu", RnnActivation::Fn::kThresholdedRelu, 1, 1.0, 0},
    {"scaledtanh", RnnActivation::Fn::kScaledTanh, 2, 1.0, 1.0},
    {"hardsigmoid", RnnActivation::Fn::kHardSigmoid, 2, 0.2, 0.5},
    {"elu", RnnActivation::Fn::kElu, 1, 1.0, 0},
    {"softsign", RnnActivation::Fn::kSoftsign, 0, 0, 0},
    {"softplus", RnnActivation::Fn::kSoftplus, 0, 0, 0},
};

}  // namespace

Result<RnnAttrs> ParseRnn(const ir::Node& node, int64_t opset, RnnKind kind) {
  RnnAttrs a;
  a.kind = kind;
  a.gates = kind == RnnKind::kRnn ? 1 : kind == RnnKind::kGru ? 3 : 4;
  a.functions_per_direction = kind == RnnKind::kRnn ? 1 : kind == RnnKind::kGru ? 2 : 3;
  KILN_ASSIGN_OR_RETURN(std::string dir, node.GetString("direction", "forward"));
  if (dir == "forward") { a.forward = true; a.reverse = false; }
  else if (dir == "reverse") { a.forward = false; a.reverse = true; }
  else if (dir == "bidirectional") { a.forward = true; a.reverse = true; a.num_directions = 2; }
  else return node.Invalid("direction must be forward, reverse or bidirectional, got '" + dir + "'");
  if (node.FindAttr("hidden_size")) {
    KILN_ASSIGN_OR_RETURN(a.hidden_size, node.GetInt("hidden_size", -1));
    if (a.hidden_size <= 0) return node.Invalid("hidden_size must be positive, got " + std::to_string(a.hidden_size));
  }
  if (node.FindAttr("clip")) {
    KILN_ASSIGN_OR_RETURN(float c, node.GetFloat("clip", 0));
    if (!(c > 0)) return node.Invalid("clip must be positive, got " + std::to_string(c));
    a.clip = c;
  }
  if (opset >= 14) {
    KILN_ASSIGN_OR_RETURN(a.layout, node.GetInt("layout", 0));
    if (a.layout != 0 && a.layout != 1) return node.Invalid("layout must be 0 or 1, got " + std::to_string(a.layout));
  }
  KILN_ASSIGN_OR_RETURN(int64_t fi, node.GetInt("input_forget", 0));
  a.input_forget = kind == RnnKind::kLstm && fi != 0;
  KILN_ASSIGN_OR_RETURN(int64_t lbr, node.GetInt("linear_before_reset", 0));
  a.linear_before_reset = kind == RnnKind::kGru && lbr != 0;

  std::vector<std::string> defaults = kind == RnnKind::kRnn   ? std::vector<std::string>{"Tanh"}
                                      : kind == RnnKind::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                              : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> names, node.GetStrings("activations", {}));
  const size_t per = a.functions_per_direction, want = per * static_cast<size_t>(a.num_directions);
  if (names.empty()) names = defaults;
  if (names.size() == per && want == 2 * per) {
    // One set given for a bidirectional node: both directions use it.
    std::vector<std::string> twice = names;
    twice.insert(twice.end(), names.begin(), names.end());
    names = twice;
  }
  if (names.size() != want)
    return node.Invalid("activations has " + std::to_string(names.size()) + " functions, expected " + std::to_string(want));
  KILN_ASSIGN_OR_RETURN(std::vector<float> alphas, node.GetFloats("activation_alpha", {}));
  KILN_ASSIGN_OR_RETURN(std::vector<float> betas, node.GetFloats("activation_beta", {}));
  // alpha/beta values are consumed in order by the functions that take them.
  size_t ai = 0, bi = 0;
  for (const std::string& n : names) {
    std::string low;
    for (char ch : n) low += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const FnInfo* info = nullptr;
    for (const FnInfo& f : kFns)
      if (low == f.name) info = &f;
    if (!info) return node.Error(StatusCode::kUnimplemented, "unsupported activation function '" + n + "'");
    RnnActivation act;
    act.fn = info->fn;
    act.alpha = info->alpha;
    act.beta = info->beta;
    if (info->uses >= 1 && ai < alphas.size()) act.alpha = alphas[ai++];
    if (info->uses >= 2 && bi < betas.size()) act.beta = betas[bi++];
    a.activations.push_back(act);
  }
  return a;
}

namespace {

Status InferRecurrent(InferContext& ctx, RnnKind kind) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, kind == RnnKind::kLstm ? 8 : 6));
  KILN_ASSIGN_OR_RETURN(RnnAttrs a, ParseRnn(ctx.node(), ctx.opset(), kind));
  const std::initializer_list<DType> kTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
  for (size_t i : {0, 1, 2, 3, 5, 6, 7}) {
    if (!ctx.has_input(i)) continue;
    KILN_RETURN_IF_ERROR(CheckDType(ctx, i, kTypes));
    if (ctx.input_dtype(0) != DType::kUndefined && ctx.input_dtype(i) != DType::kUndefined && ctx.input_dtype(i) != ctx.input_dtype(0))
      return ctx.Error("input " + std::to_string(i) + " has dtype " + DTypeName(ctx.input_dtype(i)) + ", X has " +
                       DTypeName(ctx.input_dtype(0)));
  }
  if (ctx.has_input(4)) KILN_RETURN_IF_ERROR(CheckDType(ctx, 4, {DType::kInt32}));
  const ir::Dims* x = ctx.input_dims(0);
  const ir::Dims* w = ctx.input_dims(1);
  const ir::Dims* r = ctx.input_dims(2);
  if (x && x->size() != 3) return ctx.Error("X must have rank 3, got " + ir::DimsToString(*x));
  if (w && w->size() != 3) return ctx.Error("W must have rank 3, got " + ir::DimsToString(*w));
  if (r && r->size() != 3) return ctx.Error("R must have rank 3, got " + ir::DimsToString(*r));
  ir::Dim hidden = a.hidden_size > 0 ? ir::Dim::Known(a.hidden_size) : ir::Dim{};
  if (!hidden.known() && r && (*r)[2].known()) hidden = (*r)[2];
  if (hidden.known()) {
    const int64_t h = hidden.value;
    auto check = [&](const ir::Dims* d, size_t k, int64_t v, const char* what) -> Status {
      if (d && (*d)[k].known() && (*d)[k].value != v)
        return ctx.Error(std::string(what) + " dim " + std::to_string(k) + " is " + std::to_string((*d)[k].value) + ", expected " +
                         std::to_string(v));
      return Status::Ok();
    };
    KILN_RETURN_IF_ERROR(check(w, 0, a.num_directions, "W"));
    KILN_RETURN_IF_ERROR(check(w, 1, a.gates * h, "W"));
    KILN_RETURN_IF_ERROR(check(r, 0, a.num_directions, "R"));
    KILN_RETURN_IF_ERROR(check(r, 1, a.gates * h, "R"));
    KILN_RETURN_IF_ERROR(check(r, 2, h, "R"));
    if (x && (*x)[2].known()) KILN_RETURN_IF_ERROR(check(w, 2, (*x)[2].value, "W"));
  }
  const ir::Dim seq = x ? (*x)[a.layout == 0 ? 0 : 1] : ir::Dim{};
  const ir::Dim batch = x ? (*x)[a.layout == 0 ? 1 : 0] : ir::Dim{};
  const ir::Dim dirs = ir::Dim::Known(a.num_directions);
  const DType dt = ctx.input_dtype(0);
  ctx.set_output(0, dt, a.layout == 0 ? ir::Dims{seq, dirs, batch, hidden} : ir::Dims{batch, seq, dirs, hidden});
  const ir::Dims state = a.layout == 0 ? ir::Dims{dirs, batch, hidden} : ir::Dims{batch, dirs, hidden};
  ctx.set_output(1, dt, state);
  if (kind == RnnKind::kLstm) ctx.set_output(2, dt, state);
  return Status::Ok();
}

}  // namespace

void RegisterRnnOps(OpRegistry& r) {
  r.Register({"", "RNN", 1, 1000, [](InferContext& c) { return InferRecurrent(c, RnnKind::kRnn); }});
  r.Register({"", "GRU", 1, 1000, [](InferContext& c) { return InferRecurrent(c, RnnKind::kGru); }});
  r.Register({"", "LSTM", 1, 1000, [](InferContext& c) { return InferRecurrent(c, RnnKind::kLstm); }});
}

}  // namespace kiln::ops
