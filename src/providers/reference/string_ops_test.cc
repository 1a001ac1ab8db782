// Tests of the string ops: StringNormalizer (opset 10) and TfIdfVectorizer
// (opset 9). Expected values follow the spec's definitions (several are the
// spec's backend-test cases); each comment shows the counting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ir::Attribute;
using testing::I64;
using testing::RunNode;
using testing::ToFloats;

Tensor Str(const Shape& s, const std::vector<std::string>& v) { return Tensor::FromVector<std::string>(DType::kString, s, v); }
Tensor I32(const Shape& s, const std::vector<int32_t>& v) { return Tensor::FromVector<int32_t>(DType::kInt32, s, v); }

std::vector<std::string> Strings(const Tensor& t) {
  if (t.dtype() != DType::kString) return {"<not a string tensor>"};
  return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.numel());
}

// ------------------------------------------------------- StringNormalizer

struct NormOut {
  Shape shape;
  std::vector<std::string> v;
};

NormOut Normalize(Tensor x, std::vector<Attribute> attrs) {
  auto out = RunNode("StringNormalizer", {std::move(x)}, attrs, 1, 10);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  return {(*out)[0].shape(), Strings((*out)[0])};
}

Attribute Case(const std::string& c) { return Attribute::String("case_change_action", c); }
Attribute Sensitive(int64_t v) { return Attribute::Int("is_case_sensitive", v); }
Attribute Stop(std::vector<std::string> w) { return Attribute::Strings("stopwords", std::move(w)); }

// Spec tests: stopwords are removed first, then the case changes.
TEST(StringNormalizer, CaseChangeAction) {
  Tensor x = Str({4}, {"monday", "Tuesday", "WEDNESDAY", "thursday"});
  EXPECT_THAT(Normalize(x, {Case("NONE")}).v, ElementsAre("monday", "Tuesday", "WEDNESDAY", "thursday"));
  EXPECT_THAT(Normalize(x, {}).v, ElementsAre("monday", "Tuesday", "WEDNESDAY", "thursday"));  // default NONE
  EXPECT_THAT(Normalize(x, {Case("LOWER")}).v, ElementsAre("monday", "tuesday", "wednesday", "thursday"));
  EXPECT_THAT(Normalize(x, {Case("UPPER")}).v, ElementsAre("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY"));
  // Digits and punctuation have no case.
  EXPECT_THAT(Normalize(Str({1}, {"a1-B_2"}), {Case("UPPER")}).v, ElementsAre("A1-B_2"));
}

// Spec "monday_casesensintive_upper": stopword "monday" (case sensitive)
// drops "monday" only, then the rest is upper-cased.
TEST(StringNormalizer, StopwordsCaseSensitive) {
  NormOut o = Normalize(Str({4}, {"monday", "tuesday", "wednesday", "thursday"}), {Case("UPPER"), Sensitive(1), Stop({"monday"})});
  EXPECT_EQ(o.shape, (Shape{3}));
  EXPECT_THAT(o.v, ElementsAre("TUESDAY", "WEDNESDAY", "THURSDAY"));
  // Case sensitive: "Monday" is not the stopword "monday".
  EXPECT_THAT(Normalize(Str({2}, {"Monday", "monday"}), {Sensitive(1), Stop({"monday"})}).v, ElementsAre("Monday"));
}

// is_case_sensitive 0 (the default): "MONDAY" and "Monday" match "monday".
TEST(StringNormalizer, StopwordsCaseInsensitive) {
  Tensor x = Str({4}, {"MONDAY", "tuesday", "Monday", "friday"});
  EXPECT_THAT(Normalize(x, {Stop({"monday"})}).v, ElementsAre("tuesday", "friday"));
  EXPECT_THAT(Normalize(x, {Sensitive(0), Stop({"MonDay", "FRIDAY"}), Case("LOWER")}).v, ElementsAre("tuesday"));
}

// Spec "monday_empty_output": everything filtered leaves one empty string;
// [1, C] input keeps its leading 1.
TEST(StringNormalizer, EmptyOutputAndTwoDimInput) {
  NormOut e = Normalize(Str({2}, {"monday", "monday"}), {Case("UPPER"), Sensitive(1), Stop({"monday"})});
  EXPECT_EQ(e.shape, (Shape{1}));
  EXPECT_THAT(e.v, ElementsAre(""));
  NormOut m = Normalize(Str({1, 3}, {"a", "b", "c"}), {Stop({"b"}), Case("UPPER")});
  EXPECT_EQ(m.shape, (Shape{1, 2}));
  EXPECT_THAT(m.v, ElementsAre("A", "C"));
  NormOut me = Normalize(Str({1, 2}, {"b", "B"}), {Stop({"b"})});
  EXPECT_EQ(me.shape, (Shape{1, 1}));
  EXPECT_THAT(me.v, ElementsAre(""));
}

// locale selects the case mapping; with "en_US" (and the default) Latin
// letters beyond ASCII map too: Ä <-> ä, É <-> é, Ö <-> ö.
TEST(StringNormalizer, Locale) {
  EXPECT_THAT(Normalize(Str({2}, {"Straße", "ÄÉÖ"}), {Case("LOWER"), Attribute::String("locale", "en_US")}).v,
              ElementsAre("straße", "äéö"));
  EXPECT_THAT(Normalize(Str({1}, {"äéö"}), {Case("UPPER"), Attribute::String("locale", "en_US")}).v, ElementsAre("ÄÉÖ"));
  EXPECT_THAT(Normalize(Str({1}, {"äéö"}), {Case("UPPER")}).v, ElementsAre("ÄÉÖ"));
}

TEST(StringNormalizer, BadInputsAreErrors) {
  auto bad_case = RunNode("StringNormalizer", {Str({1}, {"a"})}, {Case("TITLE")}, 1, 10);
  ASSERT_FALSE(bad_case.ok());
  EXPECT_THAT(bad_case.status().ToString(), HasSubstr("case_change_action"));
  // Only [C] and [1, C] are accepted.
  EXPECT_FALSE(RunNode("StringNormalizer", {Str({2, 2}, {"a", "b", "c", "d"})}, {}, 1, 10).ok());
}

// ------------------------------------------------------- TfIdfVectorizer

// The spec backend tests' pool: unigrams [2], [3], [5], [4] (pool items
// 0-3, n-grams 0-3), bigrams [5,6], [7,8], [6,7] (items 4-9, n-grams 4-6).
std::vector<Attribute> SpecPool(const std::string& mode, int64_t min_n, int64_t max_n, int64_t skip) {
  return {Attribute::String("mode", mode),
          Attribute::Int("min_gram_length", min_n),
          Attribute::Int("max_gram_length", max_n),
          Attribute::Int("max_skip_count", skip),
          Attribute::Ints("ngram_counts", {0, 4}),
          Attribute::Ints("ngram_indexes", {0, 1, 2, 3, 4, 5, 6}),
          Attribute::Ints("pool_int64s", {2, 3, 5, 4, 5, 6, 7, 8, 6, 7})};
}

// Input of the spec tests.
Tensor SpecInput() { return I32({12}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}); }

std::vector<float> TfIdf(Tensor x, std::vector<Attribute> attrs, Shape* shape = nullptr) {
  auto out = RunNode("TfIdfVectorizer", {std::move(x)}, attrs, 1, 9);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat32);
  if (shape) *shape = (*out)[0].shape();
  return ToFloats((*out)[0]);
}

// Adjacent bigrams of the input: (1,1) (1,3) (3,3) (3,3) (3,7) (7,8) (8,6)
// (6,7) (7,5) (5,6) (6,8): [5,6], [7,8], [6,7] once each.
TEST(TfIdfVectorizer, OnlyBigramsSkip0) {
  Shape s;
  EXPECT_THAT(TfIdf(SpecInput(), SpecPool("TF", 2, 2, 0), &s), ElementsAre(0, 0, 0, 0, 1, 1, 1));
  EXPECT_EQ(s, (Shape{7}));
}

// Unigram counts: 2 -> 0, 3 -> 3, 5 -> 1, 4 -> 0. min=max=1 counts those only.
TEST(TfIdfVectorizer, MinMaxGramLength) {
  EXPECT_THAT(TfIdf(SpecInput(), SpecPool("TF", 1, 1, 0)), ElementsAre(0, 3, 1, 0, 0, 0, 0));
  EXPECT_THAT(TfIdf(SpecInput(), SpecPool("TF", 1, 2, 0)), ElementsAre(0, 3, 1, 0, 1, 1, 1));
}

// Spec "uniandbigrams_skip5": bigrams of items 1..6 apart. [7,8]: 7 at 5, 8;
// 8 at 6, 11: pairs (5,6) (5,11) (8,11) (gap 6 - 1 = 5 skips at most) -> 3;
// [5,6]: 5 at 9, 6 at 10 -> 1; [6,7]: 6 at 7, 7 at 8 -> 1 (7 at 5 is before
// both 6s). Unigrams are counted once per position, not per skip.
TEST(TfIdfVectorizer, MaxSkipCount) {
  EXPECT_THAT(TfIdf(SpecInput(), SpecPool("TF", 1, 2, 5)), ElementsAre(0, 3, 1, 0, 1, 3, 1));
  // max_skip_count 1 (gaps 1 and 2): [7,8] only at (5,6) (7@8 -> 8@11 is
  // gap 3); [5,6] at (9,10); [6,7] at (7,8): all ones.
  EXPECT_THAT(TfIdf(SpecInput(), SpecPool("TF", 2, 2, 1)), ElementsAre(0, 0, 0, 0, 1, 1, 1));
  // max_skip_count 2: [7,8] gains (8, 11), gap 3.
  EXPECT_THAT(TfIdf(SpecInput(), SpecPool("TF", 2, 2, 2)), ElementsAre(0, 0, 0, 0, 1, 2, 1));
}

// Spec "batch_onlybigrams_skip5": rows [1,1,3,3,3,7] and [8,6,7,5,6,8].
// Row 0 holds no 5, 6 or 8: zeros. Row 1: [5,6] (3,4); [7,8] (2,5); [6,7]
// (1,2) -> ones. The output is [N, size].
TEST(TfIdfVectorizer, BatchInput) {
  Shape s;
  EXPECT_THAT(TfIdf(I32({2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}), SpecPool("TF", 2, 2, 5), &s),
              ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1));
  EXPECT_EQ(s, (Shape{2, 7}));
}

// With TF counts [0, 3, 1, 0, 1, 1, 1] (min 1, max 2, skip 0) and weights
// w = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]:
//   IDF   = w where count > 0:  [0, 1.5, 2.5, 0, 4.5, 5.5, 6.5]
//   TFIDF = count * w:          [0, 4.5, 2.5, 0, 4.5, 5.5, 6.5]
//   IDF without weights = 1 where count > 0.
TEST(TfIdfVectorizer, ModesAndWeights) {
  auto with_w = [](const std::string& mode) {
    std::vector<Attribute> a = SpecPool(mode, 1, 2, 0);
    a.push_back(Attribute::Floats("weights", {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f}));
    return a;
  };
  EXPECT_THAT(TfIdf(SpecInput(), with_w("TF")), ElementsAre(0, 3, 1, 0, 1, 1, 1));
  EXPECT_THAT(TfIdf(SpecInput(), with_w("IDF")), ElementsAre(0, 1.5f, 2.5f, 0, 4.5f, 5.5f, 6.5f));
  EXPECT_THAT(TfIdf(SpecInput(), with_w("TFIDF")), ElementsAre(0, 4.5f, 2.5f, 0, 4.5f, 5.5f, 6.5f));
  EXPECT_THAT(TfIdf(SpecInput(), SpecPool("IDF", 1, 2, 0)), ElementsAre(0, 1, 1, 0, 1, 1, 1));
  EXPECT_THAT(TfIdf(SpecInput(), SpecPool("TFIDF", 1, 2, 0)), ElementsAre(0, 3, 1, 0, 1, 1, 1));
}

// ngram_indexes maps pool n-gram j to output column ngram_indexes[j]:
// reversed, TF [0,3,1,0,1,1,1] lands as [1,1,1,0,1,3,0]. Sparse indexes
// [0, 2, 4] for three unigrams [3], [5], [9] make an output of 5 columns.
TEST(TfIdfVectorizer, NgramIndexes) {
  std::vector<Attribute> a = SpecPool("TF", 1, 2, 0);
  a[5] = Attribute::Ints("ngram_indexes", {6, 5, 4, 3, 2, 1, 0});
  EXPECT_THAT(TfIdf(SpecInput(), a), ElementsAre(1, 1, 1, 0, 1, 3, 0));
  Shape s;
  EXPECT_THAT(TfIdf(I64({4}, {3, 9, 3, 3}),
                    {Attribute::String("mode", "TF"), Attribute::Int("min_gram_length", 1), Attribute::Int("max_gram_length", 1),
                     Attribute::Int("max_skip_count", 0), Attribute::Ints("ngram_counts", {0}),
                     Attribute::Ints("ngram_indexes", {0, 2, 4}), Attribute::Ints("pool_int64s", {3, 5, 9})},
                    &s),
              ElementsAre(3, 0, 0, 0, 1));
  EXPECT_EQ(s, (Shape{5}));
}

// String pool (pool_strings): unigrams "a", "c", bigram ["b", "a"].
// Input [a, b, a, c]: a x2, c x1; bigrams (a,b) (b,a) (a,c): [b,a] x1.
TEST(TfIdfVectorizer, StringPool) {
  std::vector<Attribute> a = {Attribute::String("mode", "TF"),       Attribute::Int("min_gram_length", 1),
                              Attribute::Int("max_gram_length", 2),  Attribute::Int("max_skip_count", 0),
                              Attribute::Ints("ngram_counts", {0, 2}), Attribute::Ints("ngram_indexes", {0, 1, 2}),
                              Attribute::Strings("pool_strings", {"a", "c", "b", "a"})};
  EXPECT_THAT(TfIdf(Str({4}, {"a", "b", "a", "c"}), a), ElementsAre(2, 1, 1));
  // An int input does not match a string pool.
  EXPECT_FALSE(RunNode("TfIdfVectorizer", {I64({2}, {1, 2})}, a, 1, 9).ok());
}

// Spec "onlybigrams_levelempty": no unigrams (ngram_counts [0, 0]); the
// bigrams [5,6] [7,8] [6,7] each occur once in the input.
TEST(TfIdfVectorizer, EmptyUnigramLevel) {
  std::vector<Attribute> a = {Attribute::String("mode", "TF"), Attribute::Int("min_gram_length", 2),
                              Attribute::Int("max_gram_length", 2), Attribute::Int("max_skip_count", 0),
                              Attribute::Ints("ngram_counts", {0, 0}), Attribute::Ints("ngram_indexes", {0, 1, 2}),
                              Attribute::Ints("pool_int64s", {5, 6, 7, 8, 6, 7})};
  EXPECT_THAT(TfIdf(SpecInput(), a), ElementsAre(1, 1, 1));
}

TEST(TfIdfVectorizer, BadAttributesAreErrors) {
  std::vector<Attribute> a = SpecPool("TF", 1, 2, 0);
  a[0] = Attribute::String("mode", "BM25");
  auto r = RunNode("TfIdfVectorizer", {SpecInput()}, a, 1, 9);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().ToString(), HasSubstr("mode"));
  std::vector<Attribute> b = SpecPool("TF", 2, 1, 0);  // min > max
  EXPECT_FALSE(RunNode("TfIdfVectorizer", {SpecInput()}, b, 1, 9).ok());
  std::vector<Attribute> c = SpecPool("TF", 1, 2, 0);
  c.push_back(Attribute::Floats("weights", {1, 2}));  // 2 weights for 7 n-grams
  EXPECT_FALSE(RunNode("TfIdfVectorizer", {SpecInput()}, c, 1, 9).ok());
}

}  // namespace
}  // namespace kiln
