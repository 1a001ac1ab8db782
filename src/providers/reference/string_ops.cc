// Reference kernels of the string ops: StringNormalizer and TfIdfVectorizer.
#include <map>
#include <string>
#include <vector>

#include "ops/string_ops.h"
#include "providers/reference/families.h"

namespace kiln::reference {
namespace {

using runtime::KernelContext;

// StringNormalizer-10: drop stopwords, then change case. When every string
// is dropped the output is one empty string ([1] or [1, 1]).
Status StringNormalizer(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::StringNormalizerAttrs a, ops::ParseStringNormalizer(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kString) return ctx.Error("input must be a string tensor");
  if (x.rank() != 1 && !(x.rank() == 2 && x.dim(0) == 1))
    return ctx.Error("input must have shape [C] or [1, C], got " + ShapeToString(x.shape()));
  std::vector<std::string> in(x.data<std::string>(), x.data<std::string>() + x.numel());
  std::vector<std::string> kept = ops::FilterStopwords(a, in);
  if (kept.empty()) kept.push_back("");
  for (std::string& s : kept) {
    if (a.case_change == ops::StringNormalizerAttrs::Case::kLower) s = ops::Utf8ToLower(s);
    else if (a.case_change == ops::StringNormalizerAttrs::Case::kUpper) s = ops::Utf8ToUpper(s);
  }
  Shape shape = x.rank() == 1 ? Shape{static_cast<int64_t>(kept.size())} : Shape{1, static_cast<int64_t>(kept.size())};
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kString, shape));
  for (size_t i = 0; i < kept.size(); ++i) y.data<std::string>()[i] = std::move(kept[i]);
  return ctx.SetOutput(0, y);
}

// An n-gram key: int64 items or strings (one of the two vectors is used).
struct Gram {
  std::vector<int64_t> ints;
  std::vector<std::string> strs;
  bool operator<(const Gram& o) const { return ints != o.ints ? ints < o.ints : strs < o.strs; }
};

// TfIdfVectorizer-9. For each row, every n-gram with min_gram_length <= n
// <= max_gram_length and items `skip + 1` apart (0 <= skip <= max_skip_count)
// is looked up in the pool; unigrams are counted once per position, not once
// per skip. TF = count, IDF = weight if count > 0, TFIDF = count * weight.
Status TfIdfVectorizer(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::TfIdfAttrs a, ops::ParseTfIdf(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  const bool is_str = x.dtype() == DType::kString;
  if (is_str != a.string_pool || (!is_str && x.dtype() != DType::kInt32 && x.dtype() != DType::kInt64))
    return ctx.Error(std::string("input dtype ") + DTypeName(x.dtype()) + " does not match the pool");
  if (x.rank() != 1 && x.rank() != 2) return ctx.Error("input must have shape [C] or [N, C], got " + ShapeToString(x.shape()));

  // Pool n-gram -> its index j (weights[j], ngram_indexes[j]).
  std::map<Gram, size_t> pool;
  const int64_t pool_size = static_cast<int64_t>(a.string_pool ? a.pool_strings.size() : a.pool_int64s.size());
  size_t j = 0;
  for (size_t k = 0; k < a.ngram_counts.size(); ++k) {
    const int64_t n = static_cast<int64_t>(k) + 1;
    const int64_t end = k + 1 < a.ngram_counts.size() ? a.ngram_counts[k + 1] : pool_size;
    for (int64_t p = a.ngram_counts[k]; p + n <= end; p += n, ++j) {
      Gram g;
      for (int64_t q = p; q < p + n; ++q) {
        if (a.string_pool) g.strs.push_back(a.pool_strings[static_cast<size_t>(q)]);
        else g.ints.push_back(a.pool_int64s[static_cast<size_t>(q)]);
      }
      pool.emplace(std::move(g), j);
    }
  }

  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
  const int64_t cols = x.rank() == 2 ? x.dim(1) : x.dim(0);
  Shape shape = x.rank() == 2 ? Shape{rows, a.output_size} : Shape{a.output_size};
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, shape));
  float* out = y.data<float>();
  auto item = [&](int64_t r, int64_t c, Gram& g) {
    const int64_t i = r * cols + c;
    if (is_str) g.strs.push_back(x.data<std::string>()[i]);
    else if (x.dtype() == DType::kInt32) g.ints.push_back(x.data<int32_t>()[i]);
    else g.ints.push_back(x.data<int64_t>()[i]);
  };
  std::vector<double> counts(pool.size());
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(counts.begin(), counts.end(), 0.0);
    for (int64_t n = a.min_gram_length; n <= a.max_gram_length; ++n) {
      const int64_t max_skip = n == 1 ? 0 : a.max_skip_count;
      for (int64_t skip = 0; skip <= max_skip; ++skip) {
        const int64_t step = skip + 1;
        for (int64_t start = 0; start + (n - 1) * step < cols; ++start) {
          Gram g;
          for (int64_t q = 0; q < n; ++q) item(r, start + q * step, g);
          auto it = pool.find(g);
          if (it != pool.end()) counts[it->second] += 1;
        }
      }
    }
    for (size_t p = 0; p < counts.size(); ++p) {
      if (counts[p] == 0) continue;
      const double w = a.weights.empty() ? 1.0 : a.weights[p];
      double v = counts[p];
      if (a.mode == ops::TfIdfAttrs::Mode::kIDF) v = w;
      else if (a.mode == ops::TfIdfAttrs::Mode::kTFIDF) v = counts[p] * w;
      out[r * a.output_size + a.ngram_indexes[p]] = static_cast<float>(v);
    }
  }
  return ctx.SetOutput(0, y);
}

}  // namespace

void RegisterStringKernels(runtime::KernelRegistry& r) {
  r.Register("", "StringNormalizer", StringNormalizer);
  r.Register("", "TfIdfVectorizer", TfIdfVectorizer);
}

}  // namespace kiln::reference
