// Reference kernels of the random ops. Each run draws from a fresh
// std::mt19937_64 seeded by ops::SeedFor (see ops/random.h), and the
// distributions are computed here rather than by <random>'s distribution
// classes (whose output is implementation-defined), so results are the
// same on every run and platform:
//   uniform in [0, 1): the top 53 bits of one 64-bit draw times 2^-53;
//   normal: Box-Muller, sqrt(-2 ln(1 - u1)) * cos(2 pi u2), two draws.
#include <cmath>
#include <random>

#include "ops/random.h"
#include "providers/reference/families.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  double Uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  double Normal() {
    const double u1 = 1.0 - Uniform();  // (0, 1]: log stays finite
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }

 private:
  std::mt19937_64 gen_;
};

// RandomUniform(Like): low + (high - low) * u, kept below high after the
// rounding to T (redrawn when the rounding reaches high). RandomNormal(Like):
// mean + scale * z.
Status RandomKernel(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::RandomAttrs a, ops::ParseRandom(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  Rng rng(ops::SeedFor(ctx.node(), a.seed));
  return VisitNumeric(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      if (a.normal) {
        dst[i] = FromDouble<T>(a.a + a.b * rng.Normal());
        continue;
      }
      T v = FromDouble<T>(a.a);
      for (int tries = 0; tries < 64; ++tries) {
        const T c = FromDouble<T>(a.a + (a.b - a.a) * rng.Uniform());
        if (ToDouble(c) < a.b || a.b <= a.a) { v = c; break; }
      }
      dst[i] = v;
    }
  });
}

// Bernoulli (15): 1 with probability p (the input), else 0.
Status Bernoulli(runtime::KernelContext& ctx) {
  const Tensor& p = ctx.input(0);
  if (!p.defined() || !DTypeIsFloat(p.dtype())) return ctx.Error("input 0 must be a floating point tensor");
  KILN_ASSIGN_OR_RETURN(ops::BernoulliAttrs a, ops::ParseBernoulli(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  Rng rng(ops::SeedFor(ctx.node(), a.seed));
  return VisitNumeric(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) dst[i] = FromDouble<T>(rng.Uniform() < p.GetAsDouble(i) ? 1.0 : 0.0);
  });
}

// Multinomial (7): sample_size draws per row from softmax(input row) (the
// input holds unnormalized log-probabilities), by inverting the CDF.
Status Multinomial(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!x.defined() || x.rank() != 2 || !DTypeIsFloat(x.dtype()))
    return ctx.Error("input 0 must be a 2-D floating point tensor [batch_size, class_size]");
  KILN_ASSIGN_OR_RETURN(ops::MultinomialAttrs a, ops::ParseMultinomial(ctx.node(), ctx.opset()));
  const int64_t batch = x.dim(0), classes = x.dim(1);
  if (classes < 1 && batch > 0) return ctx.Error("class_size must be >= 1");
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  Rng rng(ops::SeedFor(ctx.node(), a.seed));
  std::vector<double> w(static_cast<size_t>(classes));
  for (int64_t b = 0; b < batch; ++b) {
    double m = -INFINITY;
    for (int64_t j = 0; j < classes; ++j) m = std::max(m, x.GetAsDouble(b * classes + j));
    if (std::isnan(m) || m == INFINITY || m == -INFINITY)
      return ctx.Error("row " + std::to_string(b) + " has no finite maximum log-probability");
    double total = 0;
    for (int64_t j = 0; j < classes; ++j) {
      const double v = x.GetAsDouble(b * classes + j);
      if (std::isnan(v)) return ctx.Error("row " + std::to_string(b) + " contains NaN");
      w[static_cast<size_t>(j)] = std::exp(v - m);
      total += w[static_cast<size_t>(j)];
    }
    for (int64_t s = 0; s < a.sample_size; ++s) {
      const double r = rng.Uniform() * total;
      double cum = 0;
      int64_t pick = -1;
      for (int64_t j = 0; j < classes; ++j) {
        cum += w[static_cast<size_t>(j)];
        if (w[static_cast<size_t>(j)] > 0) {
          pick = j;  // last class with weight, in case rounding leaves r >= cum
          if (r < cum) break;
        }
      }
      out.SetFromDouble(b * a.sample_size + s, static_cast<double>(pick));
    }
  }
  return Status::Ok();
}

// Dropout: in inference mode (the default; opset 12+ training_mode false,
// opset 7-11 always, opset 1/6 with is_test != 0) the output is the input
// and the mask all true. In training mode each element is kept when its
// uniform draw is >= ratio, and kept elements are scaled by 1 / (1 - ratio).
Status Dropout(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return ctx.Error("input 0 must be a tensor");
  KILN_ASSIGN_OR_RETURN(ops::DropoutAttrs a, ops::ParseDropout(ctx.node(), ctx.opset()));
  double ratio = a.ratio;
  bool training = a.attr_training;
  if (ctx.opset() >= 12) {
    if (ctx.has_input(1)) {
      const Tensor& r = ctx.input(1);
      if (!r.defined() || r.numel() != 1 || !DTypeIsFloat(r.dtype())) return ctx.Error("ratio must be a floating point scalar");
      ratio = r.GetAsDouble(0);
    }
    if (ctx.has_input(2)) {
      const Tensor& t = ctx.input(2);
      if (!t.defined() || t.numel() != 1 || t.dtype() != DType::kBool) return ctx.Error("training_mode must be a bool scalar");
      training = t.data<bool>()[0];
    }
  }
  Tensor mask;
  if (ctx.has_output(1)) {
    KILN_ASSIGN_OR_RETURN(mask, ctx.AllocOutput(1));
  }
  if (!training) {
    if (mask.defined())
      for (int64_t i = 0; i < mask.numel(); ++i) mask.SetFromDouble(i, 1.0);
    return ctx.SetOutput(0, ctx.input_datum(0));
  }
  if (!DTypeIsFloat(x.dtype())) return ctx.Error("training mode needs a floating point input");
  if (!(ratio >= 0.0 && ratio < 1.0)) return ctx.Error("ratio " + std::to_string(ratio) + " must be in [0, 1) in training mode");
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  const double scale = 1.0 / (1.0 - ratio);
  Rng rng(ops::SeedFor(ctx.node(), a.seed));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const bool keep = rng.Uniform() >= ratio;
    out.SetFromDouble(i, keep ? x.GetAsDouble(i) * scale : 0.0);
    if (mask.defined()) mask.SetFromDouble(i, keep ? 1.0 : 0.0);
  }
  return Status::Ok();
}

}  // namespace

void RegisterRandomKernels(runtime::KernelRegistry& r) {
  r.Register("", "RandomUniform", RandomKernel);
  r.Register("", "RandomNormal", RandomKernel);
  r.Register("", "RandomUniformLike", RandomKernel);
  r.Register("", "RandomNormalLike", RandomKernel);
  r.Register("", "Bernoulli", Bernoulli);
  r.Register("", "Multinomial", Multinomial);
  r.Register("", "Dropout", Dropout);
}

}  // namespace kiln::reference
