#include "verify/fuzz_grammar.h"
#include "verify/fuzz_float16.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "ir/builder.h"

namespace kiln::verify {
namespace {

using ir::Attribute;

// The graph's opset: mostly 17; sometimes 13 or 11, whose schemas differ
// (Split/Squeeze/Unsqueeze take attributes at 11, Resize-11 needs roi and
// scales inputs and has tf_half_pixel_for_nn, Softmax coerces to 2-D before
// 13, no HardSwish op before 14). Drawn from its own stream.
int64_t DrawOpset(uint64_t seed, double older_probability) {
  ir::SeededRng r(ir::SeedFor(seed, "opset"));
  if (r.Uniform() >= older_probability) return 17;
  return r.Uniform() < 0.5 ? 13 : 11;
}
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

struct FVal {
  std::string name;
  Shape shape;
};

class Generator {
 public:
  Generator(uint64_t seed, const FuzzOptions& o)
      : seed_(seed),
        o_(o),
        opset_(DrawOpset(seed, o.older_opset_probability)),
        rng_(ir::SeedFor(seed, "graph")),
        b_(opset_, "fuzz_" + std::to_string(seed), ir::SeedFor(seed, "weights")) {}

  Result<ir::Model> Run();

 private:
  // ---- randomness ----
  bool Chance(double p) { return rng_.Uniform() < p; }
  int64_t Int(int64_t lo, int64_t hi) { return rng_.UniformInt(lo, hi + 1); }  // inclusive
  template <typename T>
  T Pick(const std::vector<T>& v) { return v[static_cast<size_t>(rng_.UniformInt(0, static_cast<int64_t>(v.size())))]; }
  double Real(double lo, double hi) { return rng_.Uniform(lo, hi); }
  std::vector<int64_t> Permutation(size_t n) {
    std::vector<int64_t> p(n);
    std::iota(p.begin(), p.end(), 0);
    for (size_t i = n; i > 1; --i) std::swap(p[i - 1], p[static_cast<size_t>(rng_.UniformInt(0, static_cast<int64_t>(i)))]);
    return p;
  }

  // ---- graph pieces ----
  std::string Fresh(const char* prefix) { return prefix + std::to_string(counter_++); }
  std::string Weight(const Shape& s, double lo, double hi) { return b_.AddRandomInitializer(Fresh("w"), DType::kFloat32, s, lo, hi); }
  std::string Ints(const std::vector<int64_t>& v) {
    return b_.AddInitializer(Fresh("i"), Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v));
  }
  std::string Floats(const Shape& s, const std::vector<float>& v) {
    return b_.AddInitializer(Fresh("c"), Tensor::FromVector<float>(DType::kFloat32, s, v));
  }
  std::string Scalar(float v) { return Floats({}, {v}); }
  // Values away from zero, either sign (divisors).
  std::string NonZero(const Shape& s) {
    std::vector<float> v(static_cast<size_t>(Numel(s)));
    for (float& f : v) f = static_cast<float>(Real(0.5, 2.0) * (Chance(0.5) ? 1 : -1));
    return Floats(s, v);
  }
  std::string Node(const std::string& op, const std::vector<std::string>& in, const std::vector<Attribute>& attrs = {}) {
    std::string y = b_.AddNode(op, in, attrs);
    produced_.push_back(y);
    return y;
  }
  // Squeeze/Unsqueeze: axes as an input from opset 13, an attribute before.
  std::string AxesNode(const std::string& op, const std::string& x, const std::vector<int64_t>& axes) {
    if (opset_ >= 13) return Node(op, {x, Ints(axes)});
    return Node(op, {x}, {Attribute::Ints("axes", axes)});
  }
  void Spine(const std::string& name, const Shape& s) { spine_.push_back({name, s}); }
  void Side(const std::string& name, const Shape& s) { side_.push_back({name, s}); }
  bool Fits(const Shape& s) const { return FitsLimits(s, o_.limits); }
  FVal PickSpine() {
    if (Chance(0.55) || spine_.size() == 1) return spine_.back();
    return Pick(spine_);
  }
  void Used(const std::string& production) { used_.push_back(production); }

  // ---- productions (false: not applicable to the value drawn) ----
  bool Conv();
  bool ConvTranspose();
  bool Transpose();
  bool Resize();
  bool Pool();
  bool GlobalPool();
  bool Concat();
  bool Split();
  bool Slice();
  bool Pad();
  bool Binary();
  bool ActivationProduction();
  bool BatchNorm();
  bool Reshape();
  bool FlattenGemm();
  bool MatMul();
  bool SqueezeUnsqueeze();
  bool Softmax();
  bool ReduceMean();
  bool SqueezeExcite();
  bool ConvResidual();
  bool InvertedResidual();
  // An activation of `x` (same shape); records its name.
  std::string Activation(const std::string& x, const Shape& shape);
  std::string ActivationNodes(const std::string& x);

  uint64_t seed_;
  FuzzOptions o_;
  int64_t opset_;
  ir::SeededRng rng_;
  ir::GraphBuilder b_;
  int counter_ = 0;
  std::vector<FVal> spine_, side_;
  // Values inside patterns the passes fuse (an activation's input and its
  // chain's inner values): as graph outputs they must block or survive the fusion.
  std::vector<FVal> inner_;
  std::vector<std::string> produced_;  // every single-output node's value, in order
  std::vector<std::string> used_;
  std::vector<std::string> inputs_;
  std::map<std::string, Shape> input_shapes_;
};

// Conv weights scaled so activations keep unit magnitude through a chain.
double ConvScale(int64_t fan_in) { return std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(1, fan_in))); }

bool Generator::Conv() {
  FVal x = PickSpine();
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  if (c > o_.limits.max_dim) return false;
  const int64_t max_c = o_.limits.max_channels;
  int64_t group = 1, m;
  const double r = Real(0, 1);
  if (r < 0.25) {  // depthwise, channel multiplier 1 or 2
    group = c;
    m = c * ((c * 2 <= max_c && Chance(0.3)) ? 2 : 1);
  } else if (r < 0.4) {
    group = Pick(Divisors(c));
    m = group * Int(1, std::max<int64_t>(1, max_c / group));
  } else {
    m = Int(1, max_c);
  }
  if (m > std::max(max_c, c)) return false;
  const std::vector<int64_t> ks = {1, 1, 2, 3, 3, 3, 5};
  int64_t kh = Pick(ks), kw = Chance(0.7) ? kh : Pick(ks);
  int64_t sh = Chance(0.6) ? 1 : Chance(0.85) ? 2 : 3, sw = Chance(0.7) ? sh : (Chance(0.5) ? 1 : 2);
  int64_t dh = Chance(0.8) ? 1 : 2, dw = Chance(0.7) ? dh : (Chance(0.5) ? 1 : 2);
  std::vector<Attribute> attrs;
  std::string auto_pad = "NOTSET";
  const double ap = Real(0, 1);
  if (ap < 0.1) auto_pad = "SAME_UPPER";
  else if (ap < 0.2) auto_pad = "SAME_LOWER";
  else if (ap < 0.27) auto_pad = "VALID";
  Window1D wh{kh, sh, dh, 0, 0}, ww{kw, sw, dw, 0, 0};
  if (auto_pad == "NOTSET") {
    for (Window1D* win : {&wh, &ww}) {
      const int64_t dk = DilatedKernel(win->kernel, win->dilation);
      if (Chance(0.6)) win->pad_begin = win->pad_end = (dk - 1) / 2;
      else { win->pad_begin = Int(0, dk - 1); win->pad_end = Int(0, dk - 1); }
    }
    if (wh.pad_begin || wh.pad_end || ww.pad_begin || ww.pad_end || Chance(0.3))
      attrs.push_back(Attribute::Ints("pads", {wh.pad_begin, ww.pad_begin, wh.pad_end, ww.pad_end}));
  } else {
    attrs.push_back(Attribute::String("auto_pad", auto_pad));
    if (auto_pad != "VALID") {
      SamePads(h, kh, sh, dh, auto_pad == "SAME_UPPER", &wh.pad_begin, &wh.pad_end);
      SamePads(w, kw, sw, dw, auto_pad == "SAME_UPPER", &ww.pad_begin, &ww.pad_end);
    }
  }
  const int64_t oh = WindowOutSize(h, wh), ow = WindowOutSize(w, ww);
  const Shape out = {n, m, oh, ow};
  if (oh < 1 || ow < 1 || !Fits(out)) return false;
  if (Chance(0.5)) attrs.push_back(Attribute::Ints("kernel_shape", {kh, kw}));
  if (sh != 1 || sw != 1 || Chance(0.3)) attrs.push_back(Attribute::Ints("strides", {sh, sw}));
  if (dh != 1 || dw != 1 || Chance(0.2)) attrs.push_back(Attribute::Ints("dilations", {dh, dw}));
  if (group != 1 || Chance(0.2)) attrs.push_back(Attribute::Int("group", group));
  const double s = ConvScale(c / group * kh * kw);
  std::vector<std::string> in = {x.name, Weight({m, c / group, kh, kw}, -s, s)};
  if (Chance(0.7)) in.push_back(Weight({m}, -0.5, 0.5));
  std::string y = Node("Conv", in, attrs);
  Used(group == 1 ? "Conv" : group == c ? "ConvDepthwise" : "ConvGrouped");
  if (Chance(0.55)) y = Activation(y, out);
  Spine(y, out);
  return true;
}

bool Generator::ConvTranspose() {
  FVal x = PickSpine();
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  if (c > o_.limits.max_dim) return false;
  int64_t group = Chance(0.75) ? 1 : Chance(0.5) ? c : Pick(Divisors(c));
  const int64_t per_group = Int(1, std::max<int64_t>(1, o_.limits.max_channels / group));
  const int64_t m = group * per_group;
  if (m > std::max(o_.limits.max_channels, c)) return false;
  const std::vector<int64_t> ks = {1, 2, 2, 3, 3, 4};
  int64_t kh = Pick(ks), kw = Chance(0.7) ? kh : Pick(ks);
  int64_t sh = Chance(0.4) ? 1 : 2, sw = Chance(0.8) ? sh : (Chance(0.5) ? 1 : 2);
  int64_t dh = Chance(0.85) ? 1 : 2, dw = dh;
  Window1D wh{kh, sh, dh, 0, 0}, ww{kw, sw, dw, 0, 0};
  int64_t oph = 0, opw = 0;
  std::vector<Attribute> attrs;
  for (Window1D* win : {&wh, &ww}) {
    const int64_t dk = DilatedKernel(win->kernel, win->dilation);
    if (Chance(0.5)) { win->pad_begin = Int(0, dk - 1); win->pad_end = Int(0, dk - 1); }
    else win->pad_begin = win->pad_end = (dk - 1) / 2;
  }
  if (Chance(0.25)) { oph = Int(0, sh - 1); opw = Int(0, sw - 1); }
  const int64_t oh = ConvTransposeOutSize(h, wh, oph), ow = ConvTransposeOutSize(w, ww, opw);
  const Shape out = {n, m, oh, ow};
  if (oh < 1 || ow < 1 || !Fits(out)) return false;
  attrs.push_back(Attribute::Ints("pads", {wh.pad_begin, ww.pad_begin, wh.pad_end, ww.pad_end}));
  if (Chance(0.5)) attrs.push_back(Attribute::Ints("kernel_shape", {kh, kw}));
  if (sh != 1 || sw != 1 || Chance(0.3)) attrs.push_back(Attribute::Ints("strides", {sh, sw}));
  if (dh != 1 || Chance(0.2)) attrs.push_back(Attribute::Ints("dilations", {dh, dw}));
  if (oph || opw) attrs.push_back(Attribute::Ints("output_padding", {oph, opw}));
  if (group != 1) attrs.push_back(Attribute::Int("group", group));
  const double s = ConvScale(c / group * kh * kw);
  std::vector<std::string> in = {x.name, Weight({c, per_group, kh, kw}, -s, s)};
  if (Chance(0.6)) in.push_back(Weight({m}, -0.5, 0.5));
  std::string y = Node("ConvTranspose", in, attrs);
  Used("ConvTranspose");
  // Kernel = stride with no pads, dilation, output_padding or groups: the
  // cpu provider's tiled (matmul) path.
  if (group == 1 && kh == sh && kw == sw && dh == 1 && wh.pad_begin == 0 && wh.pad_end == 0 && ww.pad_begin == 0 &&
      ww.pad_end == 0 && oph == 0 && opw == 0)
    Used("ConvTransposeTiled");
  if (Chance(0.4)) y = Activation(y, out);
  Spine(y, out);
  return true;
}

bool Generator::Transpose() {
  FVal x = PickSpine();
  std::vector<int64_t> perm = Permutation(4);
  const Shape out = PermuteShape(x.shape, perm);
  if (!Fits(out)) return false;
  std::string y = Node("Transpose", {x.name}, {Attribute::Ints("perm", perm)});
  Used("Transpose");
  Shape shape = out;
  if (Chance(0.25)) {  // a chain the simplification pass may fold (to identity or one permutation)
    std::vector<int64_t> p2 = Chance(0.5) ? InversePermutation(perm) : Permutation(4);
    shape = PermuteShape(out, p2);
    y = Node("Transpose", {y}, {Attribute::Ints("perm", p2)});
    Used("TransposeChain");
  }
  Spine(y, shape);
  return true;
}

bool Generator::Resize() {
  FVal x = PickSpine();
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  const double r = Real(0, 1);
  const std::string mode = r < 0.55 ? "nearest" : r < 0.9 ? "linear" : "cubic";
  std::vector<std::string> coords = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"};
  // tf_half_pixel_for_nn belongs to Resize-11 only (removed in opset 13).
  if (mode == "nearest" && opset_ < 13) coords.push_back("tf_half_pixel_for_nn");
  // Resize-11: roi and scales are required inputs (empty tensors when unused).
  auto required = [&](const std::string& v) { return opset_ < 13 && v.empty() ? Floats({0}, {}) : v; };
  std::string coord = Chance(0.05) ? "tf_crop_and_resize" : Pick(coords);
  std::vector<Attribute> attrs = {Attribute::String("mode", mode)};
  if (coord != "half_pixel" || Chance(0.5)) attrs.push_back(Attribute::String("coordinate_transformation_mode", coord));
  if (mode == "nearest" && Chance(0.8))
    attrs.push_back(Attribute::String("nearest_mode", Pick(std::vector<std::string>{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})));
  if (mode == "cubic") {
    if (Chance(0.5)) attrs.push_back(Attribute::Float("cubic_coeff_a", Chance(0.5) ? -0.5f : -0.75f));
    if (Chance(0.3)) attrs.push_back(Attribute::Int("exclude_outside", 1));
  }
  std::string roi;
  if (coord == "tf_crop_and_resize") {
    const float y0 = static_cast<float>(Real(0, 0.4)), x0 = static_cast<float>(Real(0, 0.4));
    const float y1 = static_cast<float>(Real(0.6, 1.2)), x1 = static_cast<float>(Real(0.6, 1.2));
    roi = Floats({8}, {0, 0, y0, x0, 1, 1, y1, x1});
    if (Chance(0.5)) attrs.push_back(Attribute::Float("extrapolation_value", 0.5f));
  }
  Shape out;
  std::vector<std::string> in;
  if (coord != "tf_crop_and_resize" && Chance(0.5)) {
    const std::vector<float> scales = {0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 2.0f, 3.0f};
    float fh = Pick(scales), fw = Chance(0.6) ? fh : Pick(scales);
    out = {n, c, ResizeOutSize(h, fh), ResizeOutSize(w, fw)};
    in = {x.name, required(roi), Floats({4}, {1.0f, 1.0f, fh, fw})};
    Used("Resize" + std::string(mode == "nearest" ? "Nearest" : mode == "linear" ? "Linear" : "Cubic") + "Scales");
  } else {
    const int64_t lim = std::min<int64_t>(o_.limits.max_spatial, 3 * std::max(h, w));
    out = {n, c, Chance(0.3) ? h * 2 : Int(1, lim), 0};
    out[3] = Chance(0.6) && out[2] == h * 2 ? w * 2 : Int(1, lim);
    in = {x.name, required(roi), required(""), Ints(out)};
    Used("Resize" + std::string(mode == "nearest" ? "Nearest" : mode == "linear" ? "Linear" : "Cubic") + "Sizes");
  }
  if (out[2] < 1 || out[3] < 1 || !Fits(out)) { used_.pop_back(); return false; }
  Spine(Node("Resize", in, attrs), out);
  return true;
}

bool Generator::Pool() {
  FVal x = PickSpine();
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  const bool max = Chance(0.55);
  int64_t kh = Int(1, 3), kw = Chance(0.7) ? kh : Int(1, 3);
  int64_t sh = Chance(0.5) ? kh : Int(1, 2), sw = Chance(0.7) ? sh : Int(1, 2);
  int64_t dh = (max && Chance(0.15)) ? 2 : 1, dw = dh;
  Window1D wh{kh, sh, dh, 0, 0}, ww{kw, sw, dw, 0, 0};
  std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {kh, kw})};
  const double ap = Real(0, 1);
  bool ceil_mode = false;
  if (ap < 0.15) {
    const bool upper = Chance(0.5);
    attrs.push_back(Attribute::String("auto_pad", upper ? "SAME_UPPER" : "SAME_LOWER"));
    SamePads(h, kh, sh, dh, upper, &wh.pad_begin, &wh.pad_end);
    SamePads(w, kw, sw, dw, upper, &ww.pad_begin, &ww.pad_end);
  } else {
    for (Window1D* win : {&wh, &ww}) {
      const int64_t half = (DilatedKernel(win->kernel, win->dilation) - 1) / 2;
      win->pad_begin = Int(0, half);
      win->pad_end = Int(0, half);
    }
    if (wh.pad_begin || wh.pad_end || ww.pad_begin || ww.pad_end)
      attrs.push_back(Attribute::Ints("pads", {wh.pad_begin, ww.pad_begin, wh.pad_end, ww.pad_end}));
    ceil_mode = Chance(0.25) && CeilModeLastWindowStartsInside(h, wh) && CeilModeLastWindowStartsInside(w, ww);
    if (ceil_mode) attrs.push_back(Attribute::Int("ceil_mode", 1));
  }
  if (sh != 1 || sw != 1 || Chance(0.3)) attrs.push_back(Attribute::Ints("strides", {sh, sw}));
  if (dh != 1) attrs.push_back(Attribute::Ints("dilations", {dh, dw}));
  if (!max && Chance(0.5)) attrs.push_back(Attribute::Int("count_include_pad", 1));
  const Shape out = {n, c, WindowOutSize(h, wh, ceil_mode), WindowOutSize(w, ww, ceil_mode)};
  if (out[2] < 1 || out[3] < 1) return false;
  Spine(Node(max ? "MaxPool" : "AveragePool", {x.name}, attrs), out);
  Used(max ? "MaxPool" : "AveragePool");
  return true;
}

bool Generator::GlobalPool() {
  FVal x = PickSpine();
  const bool avg = Chance(0.7);
  Spine(Node(avg ? "GlobalAveragePool" : "GlobalMaxPool", {x.name}), {x.shape[0], x.shape[1], 1, 1});
  Used(avg ? "GlobalAveragePool" : "GlobalMaxPool");
  return true;
}

bool Generator::Concat() {
  FVal x = PickSpine();
  const int64_t axis = Int(0, 3);
  std::vector<FVal> cands;
  for (const FVal& v : spine_) {
    bool ok = true;
    for (int i = 0; i < 4; ++i) ok = ok && (i == axis || v.shape[i] == x.shape[i]);
    if (ok) cands.push_back(v);
  }
  std::vector<std::string> in = {x.name};
  Shape out = x.shape;
  const int64_t k = Int(1, 2);
  for (int64_t i = 0; i < k; ++i) {
    if (Chance(0.2)) {  // a constant part
      Shape s = x.shape;
      s[axis] = Int(1, 3);
      in.push_back(Weight(s, -1, 1));
      out[axis] += s[axis];
    } else {
      FVal v = Pick(cands);
      in.insert(Chance(0.5) ? in.end() : in.begin(), v.name);
      out[axis] += v.shape[axis];
    }
  }
  if (!Fits(out)) return false;
  Spine(Node("Concat", in, {Attribute::Int("axis", Chance(0.3) ? axis - 4 : axis)}), out);
  Used("Concat");
  return true;
}

bool Generator::Split() {
  FVal x = PickSpine();
  const int64_t axis = Int(0, 3), d = x.shape[axis];
  if (d < 2) return false;
  const int64_t k = Int(2, std::min<int64_t>(3, d));
  std::vector<int64_t> parts;
  std::vector<std::string> in = {x.name};
  bool split_attr = false;
  if (d % k == 0 && Chance(0.5)) {
    parts.assign(static_cast<size_t>(k), d / k);
  } else {
    int64_t left = d;
    for (int64_t i = 0; i < k - 1; ++i) {
      const int64_t p = Int(1, left - (k - 1 - i));
      parts.push_back(p);
      left -= p;
    }
    parts.push_back(left);
    if (opset_ >= 13) in.push_back(Ints(parts));
    else split_attr = true;
  }
  std::vector<Attribute> attrs = {Attribute::Int("axis", Chance(0.3) ? axis - 4 : axis)};
  if (split_attr) attrs.push_back(Attribute::Ints("split", parts));
  auto outs = b_.AddNode("Split", in, attrs, static_cast<size_t>(k));
  for (size_t i = 0; i < outs.size(); ++i) {
    Shape s = x.shape;
    s[axis] = parts[i];
    Spine(outs[i], s);
  }
  Used("Split");
  return true;
}

bool Generator::Slice() {
  FVal x = PickSpine();
  std::vector<int64_t> axes_order = Permutation(4);
  const int64_t count = Int(1, 3);
  std::vector<int64_t> starts, ends, axes, steps;
  Shape out = x.shape;
  bool any_step = false;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t a = axes_order[static_cast<size_t>(i)], d = x.shape[a];
    int64_t step = Pick(std::vector<int64_t>{1, 1, 2, -1, -1, -2, 3});
    int64_t start, end;
    if (step > 0) {
      start = Int(0, d - 1);
      end = Int(start + 1, d);
      if (Chance(0.3)) start -= d;                    // negative start
      if (end == d && Chance(0.5)) end = kInt64Max;   // "to the end"
      else if (Chance(0.3)) end -= d;
    } else {
      start = Int(0, d - 1);
      end = Int(-1, start - 1);
      if (start == d - 1 && Chance(0.4)) start = Chance(0.5) ? -1 : kInt64Max;
      else if (Chance(0.3)) start -= d;
      if (end == -1) end = Chance(0.5) ? kInt64Min : -d - 1;  // "past the beginning"
      else if (Chance(0.3)) end -= d;
    }
    out[a] = SliceOutSize(d, start, end, step);
    if (out[a] < 1) return false;
    starts.push_back(start);
    ends.push_back(end);
    axes.push_back(Chance(0.3) ? a - 4 : a);
    steps.push_back(step);
    any_step = any_step || step != 1;
  }
  std::vector<std::string> in = {x.name, Ints(starts), Ints(ends), Ints(axes)};
  if (any_step || Chance(0.3)) in.push_back(Ints(steps));
  Spine(Node("Slice", in), out);
  Used(any_step ? "SliceStep" : "Slice");
  return true;
}

bool Generator::Pad() {
  FVal x = PickSpine();
  const double r = Real(0, 1);
  const std::string mode = r < 0.5 ? "constant" : r < 0.75 ? "reflect" : "edge";
  std::vector<int64_t> pads(8, 0);
  Shape out = x.shape;
  for (int a = 1; a < 4; ++a) {
    if (a == 1 && (mode != "constant" || Chance(0.7))) continue;
    for (int side = 0; side < 2; ++side) {
      int64_t p = Int(0, 2);
      if (mode == "reflect") p = std::min<int64_t>(p, x.shape[a] - 1);
      if (mode == "constant" && Chance(0.1) && x.shape[a] > 2) p = -1;  // a negative pad crops
      pads[static_cast<size_t>(a + side * 4)] = p;
      out[a] += p;
    }
  }
  if (!Fits(out)) return false;
  std::vector<std::string> in = {x.name, Ints(pads)};
  if (mode == "constant" && Chance(0.5)) in.push_back(Scalar(static_cast<float>(Real(-1, 1))));
  std::vector<Attribute> attrs;
  if (mode != "constant" || Chance(0.3)) attrs.push_back(Attribute::String("mode", mode));
  Spine(Node("Pad", in, attrs), out);
  Used(mode == "constant" ? "PadConstant" : mode == "reflect" ? "PadReflect" : "PadEdge");
  return true;
}

bool Generator::Binary() {
  FVal x = PickSpine();
  const std::string op = Pick(std::vector<std::string>{"Add", "Add", "Mul", "Mul", "Sub", "Div"});
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  std::string other;
  Shape out = x.shape;
  std::string kind;
  if (op != "Div" && Chance(0.35)) {
    std::vector<FVal> cands;
    for (const FVal& v : spine_) {
      Shape s;
      if (v.name != x.name && BroadcastShapes(x.shape, v.shape, &s) && Fits(s)) cands.push_back(v);
    }
    if (cands.empty()) return false;
    FVal v = Pick(cands);
    BroadcastShapes(x.shape, v.shape, &out);
    other = v.name;
    kind = v.shape == x.shape ? "Same" : "Broadcast";
  } else {
    const std::vector<Shape> shapes = {{}, {1}, {c, 1, 1}, {1, c, 1, 1}, {1, c, 1, 1}, {w}, {1, 1, h, w}, {n, c, h, w}, {h, 1}, {1, 1, 1, 1}};
    const Shape s = Pick(shapes);
    other = op == "Div" ? NonZero(s) : op == "Mul" ? Weight(s, -1.5, 1.5) : Weight(s, -1, 1);
    kind = s.empty() ? "Scalar" : Numel(s) == Numel(x.shape) ? "Full" : "Const";
  }
  std::vector<std::string> in = {x.name, other};
  if (op != "Div" && Chance(0.35)) std::swap(in[0], in[1]);
  Spine(Node(op, in), out);
  Used(op + kind);
  return true;
}

std::string Generator::Activation(const std::string& x, const Shape& shape) {
  const size_t mark = produced_.size();
  std::string y = ActivationNodes(x);
  inner_.push_back({x, shape});
  for (size_t i = mark; i < produced_.size(); ++i)
    if (produced_[i] != y) inner_.push_back({produced_[i], shape});
  return y;
}

std::string Generator::ActivationNodes(const std::string& x) {
  const int k = static_cast<int>(Int(0, 13));
  auto three_clip = [&](const std::string& v) {
    std::string t = Chance(0.5) ? Node("Add", {v, Scalar(3)}) : Node("Add", {Scalar(3), v});
    return Node("Clip", {t, Scalar(0), Scalar(6)});
  };
  auto mul = [&](const std::string& a, const std::string& b) { return Chance(0.5) ? Node("Mul", {a, b}) : Node("Mul", {b, a}); };
  switch (k) {
    case 0: Used("Relu"); return Node("Relu", {x});
    case 1: Used("LeakyRelu"); return Node("LeakyRelu", {x}, {Attribute::Float("alpha", static_cast<float>(Real(0.01, 0.3)))});
    case 2: Used("Sigmoid"); return Node("Sigmoid", {x});
    case 3: Used("Tanh"); return Node("Tanh", {x});
    case 4:
      Used("HardSigmoid");
      return Node("HardSigmoid", {x}, {Attribute::Float("alpha", static_cast<float>(Real(0.1, 0.5))),
                                       Attribute::Float("beta", static_cast<float>(Real(0.3, 0.6)))});
    case 5:
      if (opset_ < 14) {  // no HardSwish op yet: decomposed
        Used("HardSwishDecomposed");
        return Node("Div", {mul(x, three_clip(x)), Scalar(6)});
      }
      Used("HardSwish");
      return Node("HardSwish", {x});
    case 6: Used("Relu6"); return Node("Clip", {x, Scalar(0), Scalar(6)});
    case 7: {
      Used("Clip");
      const double r = Real(0, 1);
      std::string lo = r < 0.8 ? Scalar(static_cast<float>(Real(-0.8, 0))) : "";
      std::string hi = r > 0.2 ? Scalar(static_cast<float>(Real(0.1, 1))) : "";
      std::vector<std::string> in = {x, lo};
      if (!hi.empty()) in.push_back(hi);
      return Node("Clip", in);
    }
    case 8: case 9: Used("SiLU"); return mul(x, Node("Sigmoid", {x}));
    case 10: Used("HardSwishDecomposed"); return Node("Div", {mul(x, three_clip(x)), Scalar(6)});
    case 11: Used("HardSwishDecomposed"); return mul(mul(x, three_clip(x)), Scalar(1.0f / 6.0f));
    case 12: Used("HardSwishDecomposed"); return mul(x, Node("Div", {three_clip(x), Scalar(6)}));
    default:
      Used("HardSwishHardSigmoid");
      return mul(x, Node("HardSigmoid", {x}, {Attribute::Float("alpha", 1.0f / 6.0f), Attribute::Float("beta", 0.5f)}));
  }
}

bool Generator::ActivationProduction() {
  FVal x = PickSpine();
  Spine(Activation(x.name, x.shape), x.shape);
  return true;
}

bool Generator::BatchNorm() {
  FVal x = PickSpine();
  const int64_t c = x.shape[1];
  std::vector<Attribute> attrs;
  if (Chance(0.5)) attrs.push_back(Attribute::Float("epsilon", Chance(0.5) ? 1e-3f : 1e-5f));
  std::string y = Node("BatchNormalization", {x.name, Weight({c}, 0.5, 1.5), Weight({c}, -0.5, 0.5), Weight({c}, -0.5, 0.5),
                                              Weight({c}, 0.25, 2.0)}, attrs);
  Used("BatchNormalization");
  if (Chance(0.4)) y = Activation(y, x.shape);
  Spine(y, x.shape);
  return true;
}

bool Generator::Reshape() {
  FVal x = PickSpine();
  const int64_t total = x.shape[1] * x.shape[2] * x.shape[3];
  Shape out = {x.shape[0], 0, 0, 0};
  const int64_t lim = o_.limits.max_dim;
  for (int tries = 0; tries < 8; ++tries) {
    std::vector<int64_t> da;
    for (int64_t d : Divisors(total)) if (d <= lim) da.push_back(d);
    out[1] = Pick(da);
    std::vector<int64_t> db;
    for (int64_t d : Divisors(total / out[1])) if (d <= lim && total / out[1] / d <= lim) db.push_back(d);
    if (db.empty()) continue;
    out[2] = Pick(db);
    out[3] = total / out[1] / out[2];
    break;
  }
  if (out[2] == 0) return false;
  std::vector<int64_t> spec(out.begin(), out.end());
  for (size_t i = 0; i < 4; ++i)
    if (spec[i] == x.shape[i] && Chance(0.3)) spec[i] = 0;  // copy the input dim
  if (Chance(0.4)) spec[static_cast<size_t>(Int(0, 3))] = -1;
  Spine(Node("Reshape", {x.name, Ints(spec)}), out);
  Used("Reshape");
  return true;
}

bool Generator::FlattenGemm() {
  FVal x = PickSpine();
  const int64_t axis = Chance(0.6) ? 1 : Int(0, 4);
  const Shape f = FlattenShape(x.shape, axis);
  std::string v = Node("Flatten", {x.name}, {Attribute::Int("axis", Chance(0.2) && axis > 0 && axis < 4 ? axis - 4 : axis)});
  Used("Flatten");
  if (Chance(0.2)) { Side(v, f); return true; }
  const bool trans_a = Chance(0.2), trans_b = Chance(0.4);
  const int64_t m = trans_a ? f[1] : f[0], k = trans_a ? f[0] : f[1];
  const int64_t nout = Int(1, 32);
  if (m > 4096 || k > 8192) return false;
  const double s = ConvScale(k);
  const bool gemm = Chance(0.75) || trans_a;
  Shape out = {m, nout};
  std::string y;
  if (gemm) {
    std::vector<std::string> in = {v, Weight(trans_b ? Shape{nout, k} : Shape{k, nout}, -s, s)};
    const double r = Real(0, 1);
    if (r < 0.3) in.push_back(Weight({nout}, -0.5, 0.5));
    else if (r < 0.5) in.push_back(Weight({1, nout}, -0.5, 0.5));
    else if (r < 0.6) in.push_back(Weight({m, nout}, -0.5, 0.5));
    else if (r < 0.7) in.push_back(Scalar(static_cast<float>(Real(-0.5, 0.5))));
    std::vector<Attribute> attrs;
    if (trans_a) attrs.push_back(Attribute::Int("transA", 1));
    if (trans_b) attrs.push_back(Attribute::Int("transB", 1));
    if (Chance(0.3)) attrs.push_back(Attribute::Float("alpha", static_cast<float>(Real(0.5, 1.5))));
    if (in.size() == 3 && Chance(0.3)) attrs.push_back(Attribute::Float("beta", static_cast<float>(Real(0.5, 1.5))));
    y = Node("Gemm", in, attrs);
    Used("Gemm");
  } else {
    y = Node("MatMul", {v, Weight({k, nout}, -s, s)});
    Used("MatMul2D");
  }
  if (Chance(0.3)) y = Activation(y, out);
  if (Chance(0.5) && Fits({m, nout, 1, 1})) {  // back onto the spine as [M, N, 1, 1]
    Spine(Node("Reshape", {y, Ints({m, nout, 1, 1})}), {m, nout, 1, 1});
    Used("Reshape");
  } else {
    Side(y, out);
  }
  return true;
}

bool Generator::MatMul() {
  FVal x = PickSpine();
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t k2 = Int(1, o_.limits.max_spatial);
  Shape out;
  std::string y;
  if (Chance(0.7)) {  // x @ W on the last axis (W shared, or per channel)
    const double s = ConvScale(w);
    std::string wt = Chance(0.7) ? Weight({w, k2}, -s, s) : Weight({c, w, k2}, -s, s);
    out = {n, c, h, k2};
    y = Node("MatMul", {x.name, wt});
  } else {  // W @ x: mixes rows
    const double s = ConvScale(h);
    out = {n, c, k2, w};
    y = Node("MatMul", {Weight({k2, h}, -s, s), x.name});
  }
  if (!Fits(out)) return false;
  Spine(y, out);
  Used("MatMul");
  return true;
}

bool Generator::SqueezeUnsqueeze() {
  FVal x = PickSpine();
  std::vector<int64_t> ones;
  for (int64_t i = 0; i < 4; ++i)
    if (x.shape[i] == 1) ones.push_back(i);
  if (!ones.empty() && Chance(0.5)) {
    // Squeeze some unit dims, then (usually) put them back.
    std::vector<int64_t> axes;
    for (int64_t a : ones)
      if (Chance(0.6) || axes.empty()) axes.push_back(a);
    Shape s;
    for (int64_t i = 0; i < 4; ++i)
      if (std::find(axes.begin(), axes.end(), i) == axes.end()) s.push_back(x.shape[i]);
    const bool all_ones = axes.size() == ones.size();
    std::string v = (all_ones && Chance(0.3)) ? Node("Squeeze", {x.name}) : AxesNode("Squeeze", x.name, axes);
    Used("Squeeze");
    if (s.empty() || Chance(0.3)) { Side(v, s); return true; }
    Spine(AxesNode("Unsqueeze", v, axes), x.shape);
    Used("Unsqueeze");
    return true;
  }
  const int64_t a = Int(0, 4);
  Shape s = x.shape;
  s.insert(s.begin() + a, 1);
  std::string v = AxesNode("Unsqueeze", x.name, {Chance(0.3) ? a - 5 : a});
  Used("Unsqueeze");
  if (Chance(0.4)) v = Activation(v, s);
  if (Chance(0.25)) { Side(v, s); return true; }
  Spine(AxesNode("Squeeze", v, {Chance(0.3) ? a - 5 : a}), x.shape);
  Used("Squeeze");
  return true;
}

bool Generator::Softmax() {
  FVal x = PickSpine();
  const bool log = Chance(0.25);
  const int64_t axis = Int(-4, 3);
  Spine(Node(log ? "LogSoftmax" : "Softmax", {x.name}, {Attribute::Int("axis", axis)}), x.shape);
  Used(log ? "LogSoftmax" : "Softmax");
  return true;
}

bool Generator::ReduceMean() {
  FVal x = PickSpine();
  std::vector<int64_t> axes;
  Shape keep = x.shape, drop;
  for (int64_t i = 0; i < 4; ++i) {
    if (Chance(0.4)) {
      axes.push_back(Chance(0.3) ? i - 4 : i);
      keep[i] = 1;
    } else {
      drop.push_back(x.shape[i]);
    }
  }
  const bool keepdims = Chance(0.75);
  std::vector<Attribute> attrs;
  if (!axes.empty()) attrs.push_back(Attribute::Ints("axes", axes));
  if (axes.empty()) { keep = {1, 1, 1, 1}; drop = {}; }
  if (!keepdims) attrs.push_back(Attribute::Int("keepdims", 0));
  std::string y = Node("ReduceMean", {x.name}, attrs);
  Used("ReduceMean");
  if (keepdims) Spine(y, keep);
  else Side(y, drop);
  return true;
}

bool Generator::SqueezeExcite() {
  FVal x = PickSpine();
  const int64_t n = x.shape[0], c = x.shape[1];
  if (c > o_.limits.max_channels) return false;
  const int64_t r = std::max<int64_t>(1, c / 4);
  std::string g = Node("GlobalAveragePool", {x.name});
  double s1 = ConvScale(c), s2 = ConvScale(r);
  std::string t = Node("Conv", {g, Weight({r, c, 1, 1}, -s1, s1), Weight({r}, -0.5, 0.5)});
  t = Chance(0.5) ? Node("Relu", {t}) : Node("Mul", {t, Node("Sigmoid", {t})});
  t = Node("Conv", {t, Weight({c, r, 1, 1}, -s2, s2), Weight({c}, -0.5, 0.5)});
  t = Chance(0.7) ? Node("Sigmoid", {t}) : Node("HardSigmoid", {t}, {Attribute::Float("alpha", 1.0f / 6.0f), Attribute::Float("beta", 0.5f)});
  Spine(Chance(0.5) ? Node("Mul", {x.name, t}) : Node("Mul", {t, x.name}), {n, c, x.shape[2], x.shape[3]});
  Used("SqueezeExcite");
  return true;
}

bool Generator::ConvResidual() {
  FVal x = PickSpine();
  const int64_t c = x.shape[1];
  if (c > o_.limits.max_channels) return false;
  const int64_t k = Pick(std::vector<int64_t>{1, 3, 3, 5});
  const bool dw = Chance(0.3);
  const double s = ConvScale((dw ? 1 : c) * k * k);
  std::vector<Attribute> attrs = {Attribute::Ints("pads", {k / 2, k / 2, k / 2, k / 2})};
  if (dw) attrs.push_back(Attribute::Int("group", c));
  std::string y = Node("Conv", {x.name, Weight({c, dw ? 1 : c, k, k}, -s, s), Weight({c}, -0.5, 0.5)}, attrs);
  if (Chance(0.3))
    y = Node("BatchNormalization", {y, Weight({c}, 0.5, 1.5), Weight({c}, -0.5, 0.5), Weight({c}, -0.5, 0.5), Weight({c}, 0.25, 2.0)});
  if (Chance(0.3)) y = Activation(y, x.shape);
  inner_.push_back({y, x.shape});
  y = Chance(0.5) ? Node("Add", {y, x.name}) : Node("Add", {x.name, y});
  Used("ConvResidual");
  if (Chance(0.5)) y = Activation(y, x.shape);
  Spine(y, x.shape);
  return true;
}

// MobileNet's inverted residual, the chain the separable-block fusion
// takes: an optional 1x1 expansion, a depthwise k x k, a 1x1 projection
// (activations after the first two, a residual where the shapes allow).
// Chains of the Conv production rarely form it, so the fused kernel's
// windows, strides and pads (VALID and uneven ones: a stride-2 window that
// never reads the last column went wrong there once) get their own draw.
bool Generator::InvertedResidual() {
  FVal x = PickSpine();
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  const int64_t max_c = o_.limits.max_channels;
  if (c > max_c) return false;
  const bool expand = Chance(0.75);
  const int64_t m = expand ? Int(c, max_c) : c;
  const int64_t k = Pick(std::vector<int64_t>{3, 3, 5}), stride = Chance(0.6) ? 1 : 2;
  // Dilated, as DeepLab's MobileNet backbones are in their last stages
  // (the fusion takes the block; the cpu kernel declines it, so it runs as
  // composed steps).
  const int64_t dilation = Chance(0.2) ? 2 : 1, dk = DilatedKernel(k, dilation);
  Window1D wh{k, stride, dilation, 0, 0}, ww{k, stride, dilation, 0, 0};
  const bool same = Chance(0.5);
  for (Window1D* win : {&wh, &ww}) {
    if (same) win->pad_begin = win->pad_end = dk / 2;
    else { win->pad_begin = Int(0, dk - 1); win->pad_end = Int(0, dk - 1); }
  }
  const int64_t oh = WindowOutSize(h, wh), ow = WindowOutSize(w, ww);
  const int64_t oc = Chance(0.4) ? c : Int(1, max_c);
  const Shape expanded = {n, m, h, w}, filtered = {n, m, oh, ow}, out = {n, oc, oh, ow};
  if (oh < 1 || ow < 1 || !Fits(expanded) || !Fits(out)) return false;
  std::string t = x.name;
  if (expand) {
    const double se = ConvScale(c);
    t = Activation(Node("Conv", {t, Weight({m, c, 1, 1}, -se, se), Weight({m}, -0.5, 0.5)}), expanded);
  }
  const double sd = ConvScale(k * k), sp = ConvScale(m);
  t = Node("Conv", {t, Weight({m, 1, k, k}, -sd, sd), Weight({m}, -0.5, 0.5)},
           {Attribute::Int("group", m), Attribute::Ints("kernel_shape", {k, k}), Attribute::Ints("strides", {stride, stride}),
            Attribute::Ints("pads", {wh.pad_begin, ww.pad_begin, wh.pad_end, ww.pad_end}), Attribute::Ints("dilations", {dilation, dilation})});
  t = Activation(t, filtered);
  std::string y = Node("Conv", {t, Weight({oc, m, 1, 1}, -sp, sp), Weight({oc}, -0.5, 0.5)});
  if (out == x.shape && Chance(0.6)) {
    inner_.push_back({y, out});
    y = Node("Add", {y, x.name});
  }
  Used("InvertedResidual");
  Spine(y, out);
  return true;
}

Result<ir::Model> Generator::Run() {
  // The input: NHWC transposed inside the model (usually), or NCHW.
  const int64_t n = Chance(0.85) ? 1 : 2;
  const int64_t c = Pick(std::vector<int64_t>{1, 3, 3, 4, 8, 8, 16, 32});
  const int64_t h = Int(4, o_.limits.max_spatial), w = Chance(0.6) ? h : Int(4, o_.limits.max_spatial);
  // Symbolic batch and spatial dims (fed the concrete shape recorded in the
  // metadata): plans made from load-time dims must hold at run time.
  const bool dynamic = Chance(o_.dynamic_input_probability);
  auto add_input = [&](const std::string& name, bool channels_last) {
    const Shape s = channels_last ? Shape{n, h, w, c} : Shape{n, c, h, w};
    input_shapes_[name] = s;
    if (!dynamic) return b_.AddInput(name, DType::kFloat32, s);
    ir::Dims d = ir::DimsFromShape(s);
    d[0] = ir::Dim::Symbol("N");
    d[channels_last ? 1 : 2] = ir::Dim::Symbol("H");
    d[channels_last ? 2 : 3] = ir::Dim::Symbol("W");
    return b_.AddInput(name, DType::kFloat32, d);
  };
  if (dynamic) Used("DynamicInput");
  if (opset_ != 17) Used("Opset" + std::to_string(opset_));
  const bool nhwc = Chance(o_.nhwc_input_probability);
  if (nhwc) {
    std::string in = add_input("input_nhwc", true);
    inputs_.push_back(in);
    Spine(Node("Transpose", {in}, {Attribute::Ints("perm", {0, 3, 1, 2})}), {n, c, h, w});
    Used("InputNHWC");
  } else {
    inputs_.push_back(add_input("input", false));
    Spine(inputs_.back(), {n, c, h, w});
  }
  if (Chance(o_.second_input_probability)) {
    if (Chance(0.5)) {
      std::string in = add_input("input2_nhwc", true);
      inputs_.push_back(in);
      Spine(Node("Transpose", {in}, {Attribute::Ints("perm", {0, 3, 1, 2})}), {n, c, h, w});
    } else {
      inputs_.push_back(add_input("input2", false));
      Spine(inputs_.back(), {n, c, h, w});
    }
  }
  using Production = bool (Generator::*)();
  struct Entry { double weight; Production fn; };
  static const Entry kTable[] = {
      {10, &Generator::Conv},       {3, &Generator::ConvTranspose}, {5, &Generator::Transpose},
      {7, &Generator::Resize},      {4, &Generator::Pool},          {1.5, &Generator::GlobalPool},
      {4, &Generator::Concat},      {3, &Generator::Split},         {3, &Generator::Slice},
      {3, &Generator::Pad},         {7, &Generator::Binary},        {5, &Generator::ActivationProduction},
      {2.5, &Generator::BatchNorm}, {2.5, &Generator::Reshape},     {2, &Generator::FlattenGemm},
      {2, &Generator::MatMul},      {2, &Generator::SqueezeUnsqueeze}, {2, &Generator::Softmax},
      {2, &Generator::ReduceMean},  {1.5, &Generator::SqueezeExcite},  {3, &Generator::ConvResidual},
      {3, &Generator::InvertedResidual},
  };
  double total = 0;
  for (const Entry& e : kTable) total += e.weight;
  const int64_t ops = Int(o_.min_ops, o_.max_ops);
  const size_t first_produced = spine_.size();
  for (int64_t done = 0, tries = 0; done < ops && tries < ops * 20; ++tries) {
    double r = Real(0, total);
    const Entry* e = &kTable[0];
    for (const Entry& cand : kTable) {
      if (r < cand.weight) { e = &cand; break; }
      r -= cand.weight;
    }
    if ((this->*(e->fn))()) ++done;
  }
  // Outputs: the newest spine value, and a few intermediate ones.
  std::vector<FVal> outs;
  auto is_input = [&](const std::string& v) { return std::find(inputs_.begin(), inputs_.end(), v) != inputs_.end(); };
  auto add_out = [&](const FVal& v) {
    if (is_input(v.name)) return;
    for (const FVal& o : outs) if (o.name == v.name) return;
    outs.push_back(v);
  };
  add_out(spine_.back());
  if (!side_.empty() && Chance(0.6)) add_out(side_.back());
  std::vector<FVal> all(spine_.begin() + static_cast<std::ptrdiff_t>(first_produced), spine_.end());
  all.insert(all.end(), side_.begin(), side_.end());
  const int64_t extra = Int(0, o_.max_extra_outputs);
  for (int64_t i = 0; i < extra && !all.empty(); ++i) add_out(Pick(all));
  if (!inner_.empty() && Chance(0.35)) add_out(Pick(inner_));
  if (outs.empty()) return Internal("fuzz seed " + std::to_string(seed_) + ": no value to output");
  for (const FVal& v : outs) b_.AddOutput(v.name, ir::TypeInfo::Tensor(DType::kFloat32, ir::DimsFromShape(v.shape)));
  std::string list;
  for (const std::string& u : used_) list += (list.empty() ? "" : " ") + u;
  b_.SetProducer("kiln-fuzz", "1");
  KILN_ASSIGN_OR_RETURN(ir::Model m, b_.Build());
  m.metadata["kiln.fuzz.seed"] = std::to_string(seed_);
  m.metadata["kiln.fuzz.productions"] = list;
  for (const auto& [name, shape] : input_shapes_) m.metadata["kiln.fuzz.input." + name] = ShapeToString(shape);
  return m;
}

}  // namespace

Result<ir::Model> GenerateGraph(uint64_t seed, const FuzzOptions& options) {
  Generator g(seed, options);
  KILN_ASSIGN_OR_RETURN(ir::Model m, g.Run());
  // Drawn from its own stream, so the float32 graphs of every seed stay
  // what they were before float16 existed.
  if (options.float16_probability > 0) {
    ir::SeededRng rng(ir::SeedFor(seed, "float16"));
    if (static_cast<double>(rng.Next() >> 11) * 0x1.0p-53 < options.float16_probability) {
      KILN_RETURN_IF_ERROR(ConvertToFloat16(m));
      m.metadata["kiln.fuzz.productions"] += " Float16";
    }
  }
  return m;
}

namespace {

// "[1,3,16,16]" -> {1, 3, 16, 16}.
Result<Shape> ParseShape(const std::string& text) {
  Shape s;
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return InvalidArgument("bad shape '" + text + "'");
  std::string body = text.substr(1, text.size() - 2);
  size_t p = 0;
  while (p < body.size()) {
    size_t q = body.find(',', p);
    if (q == std::string::npos) q = body.size();
    try {
      s.push_back(std::stoll(body.substr(p, q - p)));
    } catch (...) {
      return InvalidArgument("bad shape '" + text + "'");
    }
    p = q + 1;
  }
  return s;
}

}  // namespace

Result<std::map<std::string, Tensor>> GenerateFeeds(const ir::Model& model, uint64_t seed) {
  std::map<std::string, Tensor> feeds;
  for (const ir::Value* v : model.graph.RealInputs()) {
    if (v->type.kind != ir::TypeInfo::Kind::kTensor || !v->type.shape)
      return InvalidArgument("input '" + v->name + "' has no static tensor type");
    Shape s;
    auto recorded = model.metadata.find("kiln.fuzz.input." + v->name);
    if (recorded != model.metadata.end()) {
      KILN_ASSIGN_OR_RETURN(s, ParseShape(recorded->second));
    } else {
      for (const ir::Dim& d : *v->type.shape) {
        if (!d.known()) return InvalidArgument("input '" + v->name + "' has a dynamic dim");
        s.push_back(d.value);
      }
    }
    ir::SeededRng rng(ir::SeedFor(seed, v->name));
    KILN_ASSIGN_OR_RETURN(Tensor t, ir::RandomTensor(v->type.dtype, s, rng, -1, 1));
    feeds[v->name] = std::move(t);
  }
  return feeds;
}

const std::vector<std::string>& FuzzProductionNames() {
  static const std::vector<std::string> kNames = {
      "InputNHWC", "DynamicInput", "Opset11", "Opset13", "Conv", "ConvDepthwise", "ConvGrouped", "ConvTranspose", "ConvTransposeTiled", "Transpose",
      "TransposeChain",
      "ResizeNearestScales", "ResizeNearestSizes", "ResizeLinearScales", "ResizeLinearSizes", "ResizeCubicScales",
      "ResizeCubicSizes", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Concat", "Split", "Slice",
      "SliceStep", "PadConstant", "PadReflect", "PadEdge", "AddSame", "AddBroadcast", "AddConst", "AddScalar", "AddFull",
      "MulSame", "MulConst", "MulScalar", "SubConst", "DivConst", "DivScalar", "Relu", "LeakyRelu", "Sigmoid", "Tanh",
      "HardSigmoid", "HardSwish", "Relu6", "Clip", "SiLU", "HardSwishDecomposed", "HardSwishHardSigmoid",
      "BatchNormalization", "Reshape", "Flatten", "Gemm", "MatMul2D", "MatMul", "Squeeze", "Unsqueeze", "Softmax",
      "LogSoftmax", "ReduceMean", "SqueezeExcite", "ConvResidual", "InvertedResidual", "Float16"};
  return kNames;
}

}  // namespace kiln::verify
