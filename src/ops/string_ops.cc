// String ops: StringNormalizer (opset 10) and TfIdfVectorizer (opset 9).
#include "ops/string_ops.h"

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {
namespace {

// ---- UTF-8 case mapping ---------------------------------------------------
// kiln does not use the C library's locales (they may not be installed and
// are process-global): the simple one-to-one Unicode case mappings of the
// scripts below are spelled out here.

char32_t LowerCp(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0x80) return c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;  // Latin-1 letters
  if (c == 0x130) return 'i';                               // İ
  if (c >= 0x100 && c <= 0x137) return (c % 2 == 0) ? c + 1 : c;
  if (c >= 0x139 && c <= 0x148) return (c % 2 == 1) ? c + 1 : c;
  if (c >= 0x14A && c <= 0x177) return (c % 2 == 0) ? c + 1 : c;
  if (c == 0x178) return 0xFF;  // Ÿ
  if (c >= 0x179 && c <= 0x17E) return (c % 2 == 1) ? c + 1 : c;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;  // Greek
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x410 && c <= 0x42F) return c + 32;  // Cyrillic
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

char32_t UpperCp(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c < 0x80) return c;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;  // micro sign -> Greek capital mu
  if (c == 0x131) return 'I';   // dotless ı
  if (c >= 0x101 && c <= 0x137) return (c % 2 == 1) ? c - 1 : c;
  if (c >= 0x13A && c <= 0x148) return (c % 2 == 0) ? c - 1 : c;
  if (c >= 0x14B && c <= 0x177) return (c % 2 == 1) ? c - 1 : c;
  if (c >= 0x17A && c <= 0x17E) return (c % 2 == 0) ? c - 1 : c;
  if (c == 0x17F) return 'S';   // long s
  if (c == 0x3C2) return 0x3A3;  // final sigma
  if (c >= 0x3B1 && c <= 0x3C9) return c - 32;
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

// Decodes one UTF-8 sequence at s[i]; returns its length, 0 when invalid.
size_t DecodeUtf8(const std::string& s, size_t i, char32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t len = 0;
  if (c < 0x80) { cp = c; return 1; }
  if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
  else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
  else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
  else return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  // Overlong forms are invalid; they are passed through untouched.
  if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
  return len;
}

void EncodeUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

template <typename F>
std::string MapUtf8(const std::string& s, F f) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const size_t len = DecodeUtf8(s, i, cp);
    if (len == 0) {
      out += s[i++];
      continue;
    }
    EncodeUtf8(f(cp), out);
    i += len;
  }
  return out;
}

}  // namespace

std::string Utf8ToLower(const std::string& s) { return MapUtf8(s, LowerCp); }
std::string Utf8ToUpper(const std::string& s) { return MapUtf8(s, UpperCp); }

Result<StringNormalizerAttrs> ParseStringNormalizer(const ir::Node& node, int64_t opset) {
  StringNormalizerAttrs a;
  KILN_ASSIGN_OR_RETURN(std::string cc, node.GetString("case_change_action", "NONE"));
  if (cc == "NONE") a.case_change = StringNormalizerAttrs::Case::kNone;
  else if (cc == "LOWER") a.case_change = StringNormalizerAttrs::Case::kLower;
  else if (cc == "UPPER") a.case_change = StringNormalizerAttrs::Case::kUpper;
  else return node.Invalid("attribute 'case_change_action' must be LOWER, UPPER or NONE, got '" + cc + "'");
  KILN_ASSIGN_OR_RETURN(int64_t cs, node.GetInt("is_case_sensitive", 0));
  a.case_sensitive = cs != 0;
  KILN_ASSIGN_OR_RETURN(a.stopwords, node.GetStrings("stopwords"));
  KILN_ASSIGN_OR_RETURN(a.locale, node.GetString("locale", ""));
  for (const std::string& w : a.stopwords) a.folded_stopwords.push_back(Utf8ToLower(w));
  return a;
}

std::vector<std::string> FilterStopwords(const StringNormalizerAttrs& a, const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const std::string& s : in) {
    const bool stop = a.case_sensitive
                          ? std::find(a.stopwords.begin(), a.stopwords.end(), s) != a.stopwords.end()
                          : std::find(a.folded_stopwords.begin(), a.folded_stopwords.end(), Utf8ToLower(s)) !=
                                a.folded_stopwords.end();
    if (!stop) out.push_back(s);
  }
  return out;
}

Result<TfIdfAttrs> ParseTfIdf(const ir::Node& node, int64_t opset) {
  TfIdfAttrs a;
  KILN_ASSIGN_OR_RETURN(std::string mode, node.GetString("mode", ""));
  if (mode == "TF") a.mode = TfIdfAttrs::Mode::kTF;
  else if (mode == "IDF") a.mode = TfIdfAttrs::Mode::kIDF;
  else if (mode == "TFIDF") a.mode = TfIdfAttrs::Mode::kTFIDF;
  else return node.Invalid("attribute 'mode' must be TF, IDF or TFIDF, got '" + mode + "'");
  KILN_ASSIGN_OR_RETURN(a.min_gram_length, node.GetInt("min_gram_length", 0));
  KILN_ASSIGN_OR_RETURN(a.max_gram_length, node.GetInt("max_gram_length", 0));
  KILN_ASSIGN_OR_RETURN(a.max_skip_count, node.GetInt("max_skip_count", 0));
  KILN_ASSIGN_OR_RETURN(a.ngram_counts, node.GetInts("ngram_counts"));
  KILN_ASSIGN_OR_RETURN(a.ngram_indexes, node.GetInts("ngram_indexes"));
  KILN_ASSIGN_OR_RETURN(a.pool_int64s, node.GetInts("pool_int64s"));
  KILN_ASSIGN_OR_RETURN(a.pool_strings, node.GetStrings("pool_strings"));
  KILN_ASSIGN_OR_RETURN(a.weights, node.GetFloats("weights"));
  if (a.min_gram_length < 1 || a.max_gram_length < a.min_gram_length)
    return node.Invalid("need 1 <= min_gram_length <= max_gram_length, got " + std::to_string(a.min_gram_length) +
                        " and " + std::to_string(a.max_gram_length));
  if (a.max_skip_count < 0) return node.Invalid("attribute 'max_skip_count' must not be negative");
  const bool has_i = node.FindAttr("pool_int64s") != nullptr, has_s = node.FindAttr("pool_strings") != nullptr;
  if (has_i == has_s) return node.Invalid("exactly one of 'pool_int64s' and 'pool_strings' must be given");
  a.string_pool = has_s;
  const int64_t pool = static_cast<int64_t>(a.string_pool ? a.pool_strings.size() : a.pool_int64s.size());
  // ngram_counts[k] is where the (k+1)-grams start in the pool; the pool
  // holds (next start - start) / (k+1) of them.
  int64_t total = 0;
  for (size_t k = 0; k < a.ngram_counts.size(); ++k) {
    const int64_t start = a.ngram_counts[k];
    const int64_t end = k + 1 < a.ngram_counts.size() ? a.ngram_counts[k + 1] : pool;
    if (start < 0 || end < start || end > pool)
      return node.Invalid("attribute 'ngram_counts' is not an increasing list of pool offsets within " +
                          std::to_string(pool));
    const int64_t n = static_cast<int64_t>(k) + 1;
    if ((end - start) % n != 0)
      return node.Invalid("pool section of " + std::to_string(n) + "-grams has " + std::to_string(end - start) +
                          " items, not a multiple of " + std::to_string(n));
    total += (end - start) / n;
  }
  if (static_cast<int64_t>(a.ngram_indexes.size()) != total)
    return node.Invalid("attribute 'ngram_indexes' has " + std::to_string(a.ngram_indexes.size()) +
                        " entries, the pool holds " + std::to_string(total) + " n-grams");
  if (!a.weights.empty() && static_cast<int64_t>(a.weights.size()) != total)
    return node.Invalid("attribute 'weights' has " + std::to_string(a.weights.size()) + " entries, the pool holds " +
                        std::to_string(total) + " n-grams");
  for (int64_t idx : a.ngram_indexes) {
    if (idx < 0 || idx > (int64_t{1} << 40)) return node.Invalid("attribute 'ngram_indexes' has an invalid index " + std::to_string(idx));
    a.output_size = std::max(a.output_size, idx + 1);
  }
  return a;
}

namespace {

Status InferStringNormalizer(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kString}));
  KILN_ASSIGN_OR_RETURN(StringNormalizerAttrs a, ParseStringNormalizer(ctx.node(), ctx.opset()));
  const ir::Dims* d = ctx.input_dims(0);
  if (!d) {
    SetOutputDims(ctx, 0, DType::kString, std::nullopt);
    return Status::Ok();
  }
  // StringNormalizer-10 takes [C] or [1, C].
  if (d->size() != 1 && d->size() != 2) return ctx.Error("input must have shape [C] or [1, C], got " + ir::DimsToString(*d));
  if (d->size() == 2 && (*d)[0].known() && (*d)[0].value != 1)
    return ctx.Error("input must have shape [C] or [1, C], got " + ir::DimsToString(*d));
  ir::Dims out = *d;
  out.back() = ir::Dim{};
  if (const Tensor* v = ctx.input_value(0); v && v->dtype() == DType::kString) {
    std::vector<std::string> in(v->data<std::string>(), v->data<std::string>() + v->numel());
    // Everything filtered: one empty string remains ([1] or [1, 1]).
    const int64_t kept = static_cast<int64_t>(FilterStopwords(a, in).size());
    out.back() = ir::Dim::Known(std::max<int64_t>(kept, 1));
    if (d->size() == 2) out[0] = ir::Dim::Known(1);
  }
  SetOutputDims(ctx, 0, DType::kString, out);
  return Status::Ok();
}

Status InferTfIdf(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kString, DType::kInt32, DType::kInt64}));
  KILN_ASSIGN_OR_RETURN(TfIdfAttrs a, ParseTfIdf(ctx.node(), ctx.opset()));
  const DType t = ctx.input_dtype(0);
  if (t != DType::kUndefined && (t == DType::kString) != a.string_pool)
    return ctx.Error(std::string("input dtype ") + DTypeName(t) + " does not match the " +
                     (a.string_pool ? "string" : "int64") + " pool");
  const ir::Dims* d = ctx.input_dims(0);
  if (!d) {
    SetOutputDims(ctx, 0, DType::kFloat32, std::nullopt);
    return Status::Ok();
  }
  if (d->size() == 1) {
    SetOutputDims(ctx, 0, DType::kFloat32, ir::Dims{ir::Dim::Known(a.output_size)});
  } else if (d->size() == 2) {
    SetOutputDims(ctx, 0, DType::kFloat32, ir::Dims{(*d)[0], ir::Dim::Known(a.output_size)});
  } else {
    return ctx.Error("input must have shape [C] or [N, C], got " + ir::DimsToString(*d));
  }
  return Status::Ok();
}

}  // namespace

void RegisterStringOps(OpRegistry& r) {
  r.Register({"", "StringNormalizer", 10, 1000, InferStringNormalizer});
  r.Register({"", "TfIdfVectorizer", 9, 1000, InferTfIdf});
}

}  // namespace kiln::ops
