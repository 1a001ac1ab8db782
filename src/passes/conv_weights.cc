#include "passes/conv_weights.h"

namespace kiln::passes {

namespace {
bool FloatWeights(const Tensor* t) { return t && (t->dtype() == DType::kFloat32 || t->dtype() == DType::kFloat64); }
}  // namespace

std::optional<FoldableConv> MatchFoldableConv(const ir::Node& n, const GraphIndex& index) {
  const bool transpose = n.op_type == "ConvTranspose";
  if ((n.op_type != "Conv" && !transpose) || !IsDefaultDomain(n) || n.inputs.size() < 2 || n.outputs.size() != 1 || !n.HasOutput(0))
    return std::nullopt;
  FoldableConv c;
  c.w = index.Constant(n.inputs[1]);
  c.b = n.HasInput(2) ? index.Constant(n.inputs[2]) : nullptr;
  if (!FloatWeights(c.w) || c.w->rank() < 3 || (n.HasInput(2) && !FloatWeights(c.b))) return std::nullopt;
  auto group = n.GetInt("group", 1);
  if (!group.ok() || *group < 1) return std::nullopt;
  c.out_channels = transpose ? c.w->dim(1) * *group : c.w->dim(0);
  if (transpose && c.w->dim(0) % *group != 0) return std::nullopt;
  if (c.b && c.b->numel() != c.out_channels) return std::nullopt;
  return c;
}

Tensor ScaleOutputChannels(const ir::Node& conv, const Tensor& w, const std::vector<double>& scale) {
  std::vector<double> v = Doubles(w);
  const bool transpose = conv.op_type == "ConvTranspose";
  const int64_t group = conv.GetInt("group", 1).ok() ? *conv.GetInt("group", 1) : 1;
  const int64_t d0 = w.dim(0), d1 = w.dim(1);
  const int64_t taps = w.numel() / (d0 * d1);
  for (int64_t i = 0; i < d0; ++i)
    for (int64_t j = 0; j < d1; ++j) {
      // ConvTranspose: input channel i belongs to group i / (C/group).
      const int64_t m = transpose ? (i / (d0 / group)) * d1 + j : i;
      for (int64_t k = 0; k < taps; ++k) v[static_cast<size_t>((i * d1 + j) * taps + k)] *= scale[static_cast<size_t>(m)];
    }
  return FromDoubles(w.dtype(), w.shape(), v);
}

std::optional<std::vector<double>> PerChannelValues(const Tensor* c, size_t rank, int64_t m) {
  if (!c || !DTypeIsFloat(c->dtype()) || static_cast<size_t>(c->rank()) > rank || rank < 2) return std::nullopt;
  const size_t lead = rank - static_cast<size_t>(c->rank());
  for (int k = 0; k < c->rank(); ++k) {
    const size_t axis = lead + static_cast<size_t>(k);
    if (c->dim(k) != 1 && !(axis == 1 && c->dim(k) == m)) return std::nullopt;
  }
  std::vector<double> v(static_cast<size_t>(m));
  for (size_t i = 0; i < v.size(); ++i) v[i] = c->GetAsDouble(c->numel() == 1 ? 0 : static_cast<int64_t>(i));
  return v;
}

std::vector<double> Doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.GetAsDouble(static_cast<int64_t>(i));
  return v;
}

Tensor FromDoubles(DType dtype, const Shape& shape, const std::vector<double>& v) {
  Tensor t = Tensor::Zeros(dtype, shape);
  for (size_t i = 0; i < v.size(); ++i) t.SetFromDouble(static_cast<int64_t>(i), v[i]);
  return t;
}

}  // namespace kiln::passes
