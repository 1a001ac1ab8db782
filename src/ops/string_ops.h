// String ops: StringNormalizer and TfIdfVectorizer attributes, shared by
// shape inference and the kernels. StringNormalizer's filtering lives here
// because its output length (a shape) depends on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

struct StringNormalizerAttrs {
  enum class Case { kNone, kLower, kUpper };
  Case case_change = Case::kNone;
  bool case_sensitive = false;
  std::vector<std::string> stopwords;
  std::vector<std::string> folded_stopwords;  // lower-cased, for case-insensitive matching
  std::string locale;  // accepted, not used: kiln's case mapping is locale independent
};
Result<StringNormalizerAttrs> ParseStringNormalizer(const ir::Node& node, int64_t opset);

// Locale-independent UTF-8 case mapping of ASCII, Latin-1, Latin Extended-A,
// Greek and Cyrillic letters; other code points and invalid bytes are kept.
std::string Utf8ToLower(const std::string& s);
std::string Utf8ToUpper(const std::string& s);

// The strings kept after removing stopwords, in order (before case change).
std::vector<std::string> FilterStopwords(const StringNormalizerAttrs& a, const std::vector<std::string>& in);

struct TfIdfAttrs {
  enum class Mode { kTF, kIDF, kTFIDF };
  Mode mode = Mode::kTF;
  int64_t min_gram_length = 1;
  int64_t max_gram_length = 1;
  int64_t max_skip_count = 0;
  std::vector<int64_t> ngram_counts;   // start in the pool of each n-gram length (1, 2, ...)
  std::vector<int64_t> ngram_indexes;  // output coordinate of each pool n-gram
  std::vector<int64_t> pool_int64s;
  std::vector<std::string> pool_strings;
  std::vector<float> weights;          // per pool n-gram; empty = all 1
  bool string_pool = false;
  int64_t output_size = 0;             // max(ngram_indexes) + 1
};
Result<TfIdfAttrs> ParseTfIdf(const ir::Node& node, int64_t opset);

}  // namespace kiln::ops
