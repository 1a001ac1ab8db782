// Tests of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. Expected
// values are worked by hand from the spec: loss[n, d] = -input[n, t, d] *
// weight[t] with t = target[n, d] (0 for ignore_index), "mean" divides the
// sum by the sum of the applied weights. Comments show the arithmetic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using ir::Attribute;
using testing::F32;
using testing::I64;
using testing::RunNode;
using testing::ToFloats;

constexpr float kTol = 1e-6f;

Attribute Red(const std::string& r) { return Attribute::String("reduction", r); }

Result<Tensor> Loss(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, int64_t opset = 13) {
  KILN_ASSIGN_OR_RETURN(auto out, RunNode(op, in, attrs, 1, opset));
  return out[0];
}

// Floats of a successful run's first output, or a failure.
std::vector<float> RunLoss(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, Shape* shape = nullptr,
                       int64_t opset = 13) {
  auto out = Loss(op, in, attrs, opset);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  if (shape) *shape = out->shape();
  return ToFloats(*out);
}

// ---------------------------------------------------------------------------
// NegativeLogLikelihoodLoss

// input [3,3] log-probabilities, target [0,2,1]:
// picked -input = [1, 2.5, 0.25]; sum 3.75; mean 3.75/3 = 1.25.
Tensor NllInput() { return F32({3, 3}, {-1, -2, -3, -0.5f, -1.5f, -2.5f, -4, -0.25f, -2}); }
Tensor NllTarget() { return I64({3}, {0, 2, 1}); }

TEST(NegativeLogLikelihoodLoss, Reductions) {
  Shape s;
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget()}, {Red("none")}, &s), ElementsAre(1, 2.5f, 0.25f));
  EXPECT_EQ(s, (Shape{3}));
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget()}, {Red("sum")}, &s), ElementsAre(3.75f));
  EXPECT_EQ(s, (Shape{}));
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget()}, {Red("mean")}, &s), ElementsAre(1.25f));
  EXPECT_EQ(s, (Shape{}));
  // mean is the default; opset 12 behaves the same.
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget()}, {}, nullptr, 12), ElementsAre(1.25f));
}

// weights [0.5,2,1]: targets 0,2,1 weigh 0.5, 1, 2:
// none [1*0.5, 2.5*1, 0.25*2] = [0.5, 2.5, 0.5]; sum 3.5;
// mean 3.5 / (0.5+1+2) = 1 (not 3.5/3, not the unweighted 1.25).
TEST(NegativeLogLikelihoodLoss, Weights) {
  Tensor w = F32({3}, {0.5f, 2, 1});
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget(), w}, {Red("none")}), ElementsAre(0.5f, 2.5f, 0.5f));
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget(), w}, {Red("sum")}), ElementsAre(3.5f));
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget(), w}, {Red("mean")}), ElementsAre(1.0f));
}

// ignore_index 2 drops row 1 (target 2) from both the sum and the count:
// none [1, 0, 0.25]; sum 1.25; mean 1.25/2 = 0.625.
// With weights [0.5,2,1]: none [0.5, 0, 0.5]; sum 1; mean 1/(0.5+2) = 0.4.
TEST(NegativeLogLikelihoodLoss, IgnoreIndex) {
  Attribute ii = Attribute::Int("ignore_index", 2);
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget()}, {Red("none"), ii}), ElementsAre(1, 0, 0.25f));
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget()}, {Red("sum"), ii}), ElementsAre(1.25f));
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget()}, {Red("mean"), ii}), ElementsAre(0.625f));
  Tensor w = F32({3}, {0.5f, 2, 1});
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget(), w}, {Red("none"), ii}), ElementsAre(0.5f, 0, 0.5f));
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget(), w}, {Red("mean"), ii}), ElementsAre(FloatNear(0.4f, kTol)));
  // A negative ignore_index (outside [0, C)) is allowed as a target value.
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {NllInput(), I64({3}, {0, -1, 1})}, {Red("mean"), Attribute::Int("ignore_index", -1)}),
              ElementsAre(0.625f));
}

// N-D: input [N=2, C=2, d1=2] = n0: c0 [-1,-2], c1 [-3,-4]; n1: c0 [-5,-6], c1 [-7,-8].
// target [[1,0],[0,1]] picks n0d0 c1 -> 3, n0d1 c0 -> 2, n1d0 c0 -> 5, n1d1 c1 -> 8.
// none [[3,2],[5,8]]; mean 18/4 = 4.5. int32 targets are accepted too.
TEST(NegativeLogLikelihoodLoss, NdInputAndInt32Target) {
  Tensor x = F32({2, 2, 2}, {-1, -2, -3, -4, -5, -6, -7, -8});
  Shape s;
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {x, I64({2, 2}, {1, 0, 0, 1})}, {Red("none")}, &s), ElementsAre(3, 2, 5, 8));
  EXPECT_EQ(s, (Shape{2, 2}));
  Tensor t32 = Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {1, 0, 0, 1});
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {x, t32}, {}), ElementsAre(4.5f));
  // Rank 4: input [1,2,1,2] with the same values per class, target [1,1,2].
  Tensor x4 = F32({1, 2, 1, 2}, {-1, -2, -3, -4});
  EXPECT_THAT(RunLoss("NegativeLogLikelihoodLoss", {x4, I64({1, 1, 2}, {1, 0})}, {Red("none")}, &s), ElementsAre(3, 2));
  EXPECT_EQ(s, (Shape{1, 1, 2}));
}

TEST(NegativeLogLikelihoodLoss, Errors) {
  auto range = Loss("NegativeLogLikelihoodLoss", {NllInput(), I64({3}, {0, 3, 1})}, {});
  ASSERT_FALSE(range.ok());
  EXPECT_THAT(range.status().message(), HasSubstr("'n0' (NegativeLogLikelihoodLoss)"));
  EXPECT_THAT(range.status().message(), HasSubstr("out of range"));
  auto red = Loss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget()}, {Red("avg")});
  ASSERT_FALSE(red.ok());
  EXPECT_THAT(red.status().message(), HasSubstr("'n0' (NegativeLogLikelihoodLoss)"));
  EXPECT_THAT(red.status().message(), HasSubstr("reduction"));
  auto rank = Loss("NegativeLogLikelihoodLoss", {NllInput(), I64({3, 1}, {0, 1, 2})}, {});
  ASSERT_FALSE(rank.ok());
  EXPECT_THAT(rank.status().message(), HasSubstr("target rank"));
  auto dims = Loss("NegativeLogLikelihoodLoss", {NllInput(), I64({2}, {0, 1})}, {});
  ASSERT_FALSE(dims.ok());
  EXPECT_THAT(dims.status().message(), HasSubstr("target"));
  auto w = Loss("NegativeLogLikelihoodLoss", {NllInput(), NllTarget(), F32({2}, {1, 1})}, {});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("weights"));
}

// ---------------------------------------------------------------------------
// SoftmaxCrossEntropyLoss: log_prob = LogSoftmax(scores, axis 1), then NLL.

// scores [3,3]:
// row0 [1,2,3]: logsumexp = 3 + ln(1 + e^-1 + e^-2) = 3.40760596,
//   log_prob [-2.40760596, -1.40760596, -0.40760596];
// row1 [0,0,0]: log_prob -ln 3 = -1.09861229 each;
// row2 [-1000,0,-1000]: log_prob [-1000, 0, -1000] (needs the max shift).
// target [2,0,1]: loss [0.40760596, 1.09861229, 0];
// sum 1.50621825; mean 1.50621825/3 = 0.50207275.
Tensor SceScores() { return F32({3, 3}, {1, 2, 3, 0, 0, 0, -1000, 0, -1000}); }
Tensor SceTarget() { return I64({3}, {2, 0, 1}); }

TEST(SoftmaxCrossEntropyLoss, ReductionsAndLogProb) {
  Shape s;
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget()}, {Red("none")}, &s),
              Pointwise(FloatNear(kTol), {0.40760596f, 1.09861229f, 0.f}));
  EXPECT_EQ(s, (Shape{3}));
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget()}, {Red("sum")}, &s), ElementsAre(FloatNear(1.50621825f, kTol)));
  EXPECT_EQ(s, (Shape{}));
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget()}, {}, &s), ElementsAre(FloatNear(0.50207275f, kTol)));
  EXPECT_EQ(s, (Shape{}));
  // Second output: the log-probabilities, shaped like the scores.
  auto out = RunNode("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget()}, {}, 2, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(FloatNear(0.50207275f, kTol)));
  EXPECT_EQ((*out)[1].shape(), (Shape{3, 3}));
  EXPECT_THAT(ToFloats((*out)[1]), Pointwise(FloatNear(1e-5f), {-2.40760596f, -1.40760596f, -0.40760596f, -1.09861229f, -1.09861229f,
                                                                 -1.09861229f, -1000.f, 0.f, -1000.f}));
}

// weights [1,2,0.5]: targets 2,0,1 weigh 0.5, 1, 2:
// none [0.20380298, 1.09861229, 0]; sum 1.30241527;
// mean 1.30241527 / (0.5+1+2) = 0.37211865 (row 2's zero loss still counts its weight).
TEST(SoftmaxCrossEntropyLoss, Weights) {
  Tensor w = F32({3}, {1, 2, 0.5f});
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget(), w}, {Red("none")}),
              Pointwise(FloatNear(kTol), {0.20380298f, 1.09861229f, 0.f}));
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget(), w}, {Red("sum")}), ElementsAre(FloatNear(1.30241527f, kTol)));
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget(), w}, {Red("mean")}), ElementsAre(FloatNear(0.37211865f, kTol)));
}

// ignore_index 0 drops row 1: none [0.40760596, 0, 0]; mean 0.40760596/2 = 0.20380298.
// With weights [1,2,0.5]: none [0.20380298, 0, 0]; mean 0.20380298/(0.5+2) = 0.08152119.
// log_prob is not affected by ignore_index.
TEST(SoftmaxCrossEntropyLoss, IgnoreIndex) {
  Attribute ii = Attribute::Int("ignore_index", 0);
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget()}, {Red("none"), ii}), Pointwise(FloatNear(kTol), {0.40760596f, 0.f, 0.f}));
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget()}, {ii}), ElementsAre(FloatNear(0.20380298f, kTol)));
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget(), F32({3}, {1, 2, 0.5f})}, {ii}),
              ElementsAre(FloatNear(0.08152119f, kTol)));
  auto out = RunNode("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget()}, {ii}, 2, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[1]), Pointwise(FloatNear(1e-5f), {-2.40760596f, -1.40760596f, -0.40760596f, -1.09861229f, -1.09861229f,
                                                                 -1.09861229f, -1000.f, 0.f, -1000.f}));
}

// N-D: scores [N=1, C=2, d=2] = c0 [0, 0], c1 [ln 3, 0]:
// d0 (0, ln 3): log_prob [-ln 4, ln 3 - ln 4] = [-1.38629436, -0.28768207];
// d1 (0, 0): log_prob [-ln 2, -ln 2] = [-0.69314718, -0.69314718].
// target [[1,0]]: loss [[0.28768207, 0.69314718]]; mean 0.49041463.
TEST(SoftmaxCrossEntropyLoss, NdInput) {
  Tensor x = F32({1, 2, 2}, {0, 0, std::log(3.0f), 0});
  Tensor t = I64({1, 2}, {1, 0});
  auto out = RunNode("SoftmaxCrossEntropyLoss", {x, t}, {Red("none")}, 2, 13);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].shape(), (Shape{1, 2}));
  EXPECT_THAT(ToFloats((*out)[0]), Pointwise(FloatNear(kTol), {0.28768207f, 0.69314718f}));
  EXPECT_EQ((*out)[1].shape(), (Shape{1, 2, 2}));
  // Layout [n][c][d]: c0 = (d0, d1), then c1.
  EXPECT_THAT(ToFloats((*out)[1]), Pointwise(FloatNear(kTol), {-1.38629436f, -0.69314718f, -0.28768207f, -0.69314718f}));
  EXPECT_THAT(RunLoss("SoftmaxCrossEntropyLoss", {x, t}, {}), ElementsAre(FloatNear(0.49041463f, kTol)));
}

TEST(SoftmaxCrossEntropyLoss, Errors) {
  auto w = Loss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget(), F32({2}, {1, 1})}, {});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("'n0' (SoftmaxCrossEntropyLoss)"));
  EXPECT_THAT(w.status().message(), HasSubstr("weights"));
  auto range = Loss("SoftmaxCrossEntropyLoss", {SceScores(), I64({3}, {0, -1, 1})}, {});
  ASSERT_FALSE(range.ok());
  EXPECT_THAT(range.status().message(), HasSubstr("'n0' (SoftmaxCrossEntropyLoss)"));
  EXPECT_THAT(range.status().message(), HasSubstr("out of range"));
  auto red = Loss("SoftmaxCrossEntropyLoss", {SceScores(), SceTarget()}, {Red("Mean")});
  ASSERT_FALSE(red.ok());
  EXPECT_THAT(red.status().message(), HasSubstr("reduction"));
  auto rank1 = Loss("SoftmaxCrossEntropyLoss", {F32({3}, {1, 2, 3}), I64({}, {0})}, {});
  ASSERT_FALSE(rank1.ok());
  EXPECT_THAT(rank1.status().message(), HasSubstr("rank"));
}

}  // namespace
}  // namespace kiln
