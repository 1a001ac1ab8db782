// Tests of the normalization ops. Every expected value is worked by hand from
// the spec's formulas; the inputs are chosen so that var + epsilon is a
// perfect square where possible (comments show the arithmetic).
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
using testing::RunNode;
using testing::ToFloats;

constexpr float kTol = 1e-6f;

Tensor F64(const Shape& shape, const std::vector<double>& v) { return Tensor::FromVector<double>(DType::kFloat64, shape, v); }
Tensor F16(const Shape& shape, const std::vector<float>& v) {
  std::vector<Float16> h;
  for (float f : v) h.push_back(Float16(f));
  return Tensor::FromVector<Float16>(DType::kFloat16, shape, h);
}

std::vector<float> Run1(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs, int64_t opset = 18,
                        Shape* shape = nullptr) {
  auto out = RunNode(op, in, attrs, 1, opset);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  if (shape) *shape = (*out)[0].shape();
  return ToFloats((*out)[0]);
}

// ---------------------------------------------------------------------------
// BatchNormalization: y = (x - mean) / sqrt(var + epsilon) * scale + B.

// X [N=2, C=2, D=2]: n0c0 [1,5], n0c1 [-1,0], n1c0 [-3,1], n1c1 [3,-1].
// mean [1,-1], var [3.75,0.75], epsilon 0.25: std [2, 1]; scale [3,0.5], B [1,-1].
// c0: (x-1)/2*3+1: 1->1, 5->7, -3->-5, 1->1.
// c1: (x+1)/1*0.5-1: -1->-1, 0->-0.5, 3->1, -1->-1.
std::vector<Tensor> BnInferenceInputs() {
  return {F32({2, 2, 2}, {1, 5, -1, 0, -3, 1, 3, -1}), F32({2}, {3, 0.5f}), F32({2}, {1, -1}), F32({2}, {1, -1}),
          F32({2}, {3.75f, 0.75f})};
}
const std::vector<float> kBnInferenceY = {1, 7, -1, -0.5f, -5, 1, 1, -1};

TEST(BatchNormalization, InferenceAcrossOpsets) {
  for (int64_t opset : {9, 14, 15}) {
    SCOPED_TRACE(opset);
    Shape s;
    EXPECT_THAT(Run1("BatchNormalization", BnInferenceInputs(), {Attribute::Float("epsilon", 0.25f)}, opset, &s),
                Pointwise(FloatNear(kTol), kBnInferenceY));
    EXPECT_EQ(s, (Shape{2, 2, 2}));
  }
}

// Momentum only updates running statistics; at inference it changes nothing.
TEST(BatchNormalization, MomentumIgnoredAtInference) {
  for (int64_t opset : {9, 14, 15}) {
    SCOPED_TRACE(opset);
    EXPECT_THAT(Run1("BatchNormalization", BnInferenceInputs(), {Attribute::Float("epsilon", 0.25f), Attribute::Float("momentum", 0.1f)}, opset),
                Pointwise(FloatNear(kTol), kBnInferenceY));
  }
}

// Default epsilon 1e-5: x - mean = 1 with var 0 gives 1/sqrt(1e-5) = 316.22777
// (an epsilon of 0 would give inf, 1e-3 would give 31.6).
TEST(BatchNormalization, DefaultEpsilon) {
  auto y = Run1("BatchNormalization", {F32({1, 1, 1}, {1}), F32({1}, {1}), F32({1}, {0}), F32({1}, {0}), F32({1}, {0})}, {}, 15);
  EXPECT_THAT(y, ElementsAre(FloatNear(316.22777f, 1e-3f)));
}

// Rank 4 (NCHW) and rank 2 (NC): the channel is always dim 1.
// X [1,2,2,1] = c0 [2,4], c1 [6,8]; mean [3,7], var [1,4], eps 0: (x-m)/std.
// c0: (2-3)/1=-1, (4-3)/1=1; c1: (6-7)/2=-0.5, (8-7)/2=0.5.
TEST(BatchNormalization, Rank4AndRank2) {
  std::vector<Tensor> prm = {F32({2}, {1, 1}), F32({2}, {0, 0}), F32({2}, {3, 7}), F32({2}, {1, 4})};
  std::vector<Tensor> in4 = {F32({1, 2, 2, 1}, {2, 4, 6, 8})};
  in4.insert(in4.end(), prm.begin(), prm.end());
  EXPECT_THAT(Run1("BatchNormalization", in4, {Attribute::Float("epsilon", 0)}, 15), Pointwise(FloatNear(kTol), {-1.f, 1.f, -0.5f, 0.5f}));
  // X [2,2] = [[2,6],[4,8]]: row n is (c0, c1).
  std::vector<Tensor> in2 = {F32({2, 2}, {2, 6, 4, 8})};
  in2.insert(in2.end(), prm.begin(), prm.end());
  EXPECT_THAT(Run1("BatchNormalization", in2, {Attribute::Float("epsilon", 0)}, 15), Pointwise(FloatNear(kTol), {-1.f, -0.5f, 1.f, 0.5f}));
}

// Opset 15 lets scale/B (T1) and mean/var (T2) differ from X (T): X float16
// with float32 parameters; Y keeps X's type. Same numbers as above.
TEST(BatchNormalization, Opset15MixedTypes) {
  auto out = RunNode("BatchNormalization",
                     {F16({2, 2, 2}, {1, 5, -1, 0, -3, 1, 3, -1}), F32({2}, {3, 0.5f}), F32({2}, {1, -1}), F32({2}, {1, -1}),
                      F32({2}, {3.75f, 0.75f})},
                     {Attribute::Float("epsilon", 0.25f)}, 1, 15);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat16);
  EXPECT_THAT(ToFloats((*out)[0]), Pointwise(FloatNear(kTol), kBnInferenceY));
}

// training_mode = 1 uses the batch statistics. X [2,2,2] = [3,-1, 5,-3, -1,-1, 1,1]:
// c0 = {3,-1,-1,-1}: mean 0, biased var (9+1+1+1)/4 = 3;
// c1 = {5,-3,1,1}: mean 1, var (16+16+0+0)/4 = 8. epsilon 1: std [2, 3].
// scale [1,1.5], B [0,1]: c0 x/2: 1.5,-0.5,-0.5,-0.5; c1 (x-1)/3*1.5+1: 3,-1,1,1.
// Input mean [2,-1], var [1,4] (ignored by Y). momentum 0.75:
// running_mean = [2*.75 + 0*.25, -1*.75 + 1*.25] = [1.5, -0.5]
// running_var  = [1*.75 + 3*.25, 4*.75 + 8*.25] = [1.5, 5].
std::vector<Tensor> BnTrainingInputs() {
  return {F32({2, 2, 2}, {3, -1, 5, -3, -1, -1, 1, 1}), F32({2}, {1, 1.5f}), F32({2}, {0, 1}), F32({2}, {2, -1}), F32({2}, {1, 4})};
}
const std::vector<float> kBnTrainingY = {1.5f, -0.5f, 3, -1, -0.5f, -0.5f, 1, 1};

TEST(BatchNormalization, TrainingModeOutputs) {
  for (int64_t opset : {14, 15}) {
    SCOPED_TRACE(opset);
    auto out = RunNode("BatchNormalization", BnTrainingInputs(),
                       {Attribute::Int("training_mode", 1), Attribute::Float("epsilon", 1), Attribute::Float("momentum", 0.75f)}, 3, opset);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_THAT(ToFloats((*out)[0]), Pointwise(FloatNear(kTol), kBnTrainingY));
    EXPECT_THAT(ToFloats((*out)[1]), Pointwise(FloatNear(kTol), {1.5f, -0.5f}));
    EXPECT_THAT(ToFloats((*out)[2]), Pointwise(FloatNear(kTol), {1.5f, 5.f}));
  }
  // Default momentum 0.9: running_mean = [1.8 + 0, -0.9 + 0.1] = [1.8, -0.8],
  // running_var = [0.9 + 0.3, 3.6 + 0.8] = [1.2, 4.4].
  auto def = RunNode("BatchNormalization", BnTrainingInputs(), {Attribute::Int("training_mode", 1), Attribute::Float("epsilon", 1)}, 3, 15);
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_THAT(ToFloats((*def)[0]), Pointwise(FloatNear(kTol), kBnTrainingY));
  EXPECT_THAT(ToFloats((*def)[1]), Pointwise(FloatNear(kTol), {1.8f, -0.8f}));
  EXPECT_THAT(ToFloats((*def)[2]), Pointwise(FloatNear(kTol), {1.2f, 4.4f}));
  // training_mode = 1 with only Y requested: Y still uses the batch statistics.
  EXPECT_THAT(Run1("BatchNormalization", BnTrainingInputs(), {Attribute::Int("training_mode", 1), Attribute::Float("epsilon", 1)}, 15),
              Pointwise(FloatNear(kTol), kBnTrainingY));
}

// Opset 9 has no training_mode: asking for the 5 outputs selects training.
// Outputs: Y, running mean, running var, saved (batch) mean, saved (batch) var.
TEST(BatchNormalization, Opset9TrainingByOutputCount) {
  auto out = RunNode("BatchNormalization", BnTrainingInputs(), {Attribute::Float("epsilon", 1), Attribute::Float("momentum", 0.75f)}, 5, 9);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), Pointwise(FloatNear(kTol), kBnTrainingY));
  EXPECT_THAT(ToFloats((*out)[1]), Pointwise(FloatNear(kTol), {1.5f, -0.5f}));
  EXPECT_THAT(ToFloats((*out)[2]), Pointwise(FloatNear(kTol), {1.5f, 5.f}));
  EXPECT_THAT(ToFloats((*out)[3]), Pointwise(FloatNear(kTol), {0.f, 1.f}));
  EXPECT_THAT(ToFloats((*out)[4]), Pointwise(FloatNear(kTol), {3.f, 8.f}));
}

TEST(BatchNormalization, Errors) {
  // Scale with 3 values for 2 channels.
  std::vector<Tensor> in = BnInferenceInputs();
  in[1] = F32({3}, {1, 1, 1});
  auto bad = RunNode("BatchNormalization", in, {}, 1, 15);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'n0' (BatchNormalization)"));
  EXPECT_THAT(bad.status().message(), HasSubstr("input 1"));
  // running_mean/running_var outputs without training_mode.
  auto no_train = RunNode("BatchNormalization", BnInferenceInputs(), {}, 3, 15);
  ASSERT_FALSE(no_train.ok());
  EXPECT_THAT(no_train.status().message(), HasSubstr("'n0' (BatchNormalization)"));
  EXPECT_THAT(no_train.status().message(), HasSubstr("training_mode"));
  // Rank 1 X has no channel dim.
  auto rank1 = RunNode("BatchNormalization", {F32({2}, {1, 2}), F32({2}, {1, 1}), F32({2}, {0, 0}), F32({2}, {0, 0}), F32({2}, {1, 1})}, {}, 1, 15);
  ASSERT_FALSE(rank1.ok());
  EXPECT_THAT(rank1.status().message(), HasSubstr("rank"));
}

// ---------------------------------------------------------------------------
// InstanceNormalization: per (n, c) statistics over the spatial dims.

// epsilon 144 (so d^2 + 144 is a square for d = 0, 5, 9, 16).
// X [2,2,2]: n0c0 [0,10] (mean 5, dev +-5, std 13), n0c1 [1,19] (mean 10, dev
// +-9, std 15), n1c0 [-16,16] (mean 0, dev +-16, std 20), n1c1 [7,7] (std 12).
// scale [26,30], B [1,-1]:
// n0c0: -+5/13*26+1 = -9, 11;   n0c1: -+9/15*30-1 = -19, 17;
// n1c0: -+16/20*26+1 = -19.8, 21.8;   n1c1: 0*30-1 = -1, -1.
TEST(InstanceNormalization, Epsilon) {
  Shape s;
  EXPECT_THAT(Run1("InstanceNormalization", {F32({2, 2, 2}, {0, 10, 1, 19, -16, 16, 7, 7}), F32({2}, {26, 30}), F32({2}, {1, -1})},
                   {Attribute::Float("epsilon", 144)}, 18, &s),
              Pointwise(FloatNear(1e-5f), {-9.f, 11.f, -19.f, 17.f, -19.8f, 21.8f, -1.f, -1.f}));
  EXPECT_EQ(s, (Shape{2, 2, 2}));
}

// Default epsilon 1e-5, X [1,1,2,2] = [0, .002, 0, .002]: mean .001, var 1e-6,
// y = -+.001/sqrt(1e-6 + 1e-5) = -+0.30151134 (without epsilon: -+1).
TEST(InstanceNormalization, DefaultEpsilonRank4) {
  EXPECT_THAT(Run1("InstanceNormalization", {F32({1, 1, 2, 2}, {0, 0.002f, 0, 0.002f}), F32({1}, {1}), F32({1}, {0})}, {}),
              Pointwise(FloatNear(1e-5f), {-0.30151134f, 0.30151134f, -0.30151134f, 0.30151134f}));
}

TEST(InstanceNormalization, Errors) {
  auto bad = RunNode("InstanceNormalization", {F32({1, 2, 2}, {1, 2, 3, 4}), F32({3}, {1, 1, 1}), F32({2}, {0, 0})}, {}, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("'n0' (InstanceNormalization)"));
  EXPECT_THAT(bad.status().message(), HasSubstr("input 1"));
  auto rank1 = RunNode("InstanceNormalization", {F32({2}, {1, 2}), F32({2}, {1, 1}), F32({2}, {0, 0})}, {}, 1);
  ASSERT_FALSE(rank1.ok());
  EXPECT_THAT(rank1.status().message(), HasSubstr("rank"));
}

// ---------------------------------------------------------------------------
// LayerNormalization (opset 17): statistics over dims [axis, rank).

// Default axis -1, X [2,4], epsilon 4:
// row0 [-3,-1,1,3]: mean 0, var (9+1+1+9)/4 = 5, std sqrt(9) = 3;
// row1 [7,-1,-1,-1]: mean 1, dev [6,-2,-2,-2], var 48/4 = 12, std sqrt(16) = 4.
// scale [1,2,3,4]: row0 dev/3*s = [-3/3*1, -1/3*2, 1/3*3, 3/3*4] = [-1, -2/3, 1, 4]; row1 dev/4*s = [1.5, -1, -1.5, -2].
// Mean [2,1] = [0, 1]; InvStdDev = [1/3, 1/4].
TEST(LayerNormalization, DefaultAxisNoBiasAndStatistics) {
  auto out = RunNode("LayerNormalization", {F32({2, 4}, {-3, -1, 1, 3, 7, -1, -1, -1}), F32({4}, {1, 2, 3, 4})},
                     {Attribute::Float("epsilon", 4)}, 3, 17);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), Pointwise(FloatNear(kTol), {-1.f, -2.f / 3, 1.f, 4.f, 1.5f, -1.f, -1.5f, -2.f}));
  EXPECT_EQ((*out)[1].shape(), (Shape{2, 1}));
  EXPECT_EQ((*out)[1].dtype(), DType::kFloat32);
  EXPECT_THAT(ToFloats((*out)[1]), Pointwise(FloatNear(kTol), {0.f, 1.f}));
  EXPECT_EQ((*out)[2].shape(), (Shape{2, 1}));
  EXPECT_THAT(ToFloats((*out)[2]), Pointwise(FloatNear(kTol), {1.f / 3, 0.25f}));
}

// The same with bias [10,20,30,40] added to each row.
TEST(LayerNormalization, Bias) {
  EXPECT_THAT(Run1("LayerNormalization", {F32({2, 4}, {-3, -1, 1, 3, 7, -1, -1, -1}), F32({4}, {1, 2, 3, 4}), F32({4}, {10, 20, 30, 40})},
                   {Attribute::Float("epsilon", 4)}, 17),
              Pointwise(FloatNear(1e-5f), {9.f, 20.f - 2.f / 3, 31.f, 44.f, 11.5f, 19.f, 28.5f, 38.f}));
}

// axis 1 (and -2) on X [2,2,2], epsilon 1:
// n0 [0,4,4,8]: mean 4, dev [-4,0,0,4], var 32/4 = 8, std 3;
// n1 [1,1,1,1]: mean 1, var 0, std 1.
// scale [2,2] = [3,1.5,3,1.5], B [2,2] = [1,2,3,4]:
// n0: [-4/3*3+1, 0+2, 0+3, 4/3*1.5+4] = [-3, 2, 3, 6]; n1: B = [1,2,3,4].
// Mean [2,1,1] = [4,1]; InvStdDev = [1/3, 1].
TEST(LayerNormalization, AxisPositiveAndNegative) {
  for (int64_t axis : {1, -2}) {
    SCOPED_TRACE(axis);
    auto out = RunNode("LayerNormalization",
                       {F32({2, 2, 2}, {0, 4, 4, 8, 1, 1, 1, 1}), F32({2, 2}, {3, 1.5f, 3, 1.5f}), F32({2, 2}, {1, 2, 3, 4})},
                       {Attribute::Int("axis", axis), Attribute::Float("epsilon", 1)}, 3, 17);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_THAT(ToFloats((*out)[0]), Pointwise(FloatNear(kTol), {-3.f, 2.f, 3.f, 6.f, 1.f, 2.f, 3.f, 4.f}));
    EXPECT_EQ((*out)[1].shape(), (Shape{2, 1, 1}));
    EXPECT_THAT(ToFloats((*out)[1]), Pointwise(FloatNear(kTol), {4.f, 1.f}));
    EXPECT_EQ((*out)[2].shape(), (Shape{2, 1, 1}));
    EXPECT_THAT(ToFloats((*out)[2]), Pointwise(FloatNear(kTol), {1.f / 3, 1.f}));
  }
  // axis 0 normalizes everything: [0,4,4,8,1,1,1,1] has mean 20/8 = 2.5,
  // sum of squared devs 6.25+2.25+2.25+30.25+4*2.25 = 50, var 6.25; with
  // epsilon 3.75 the std is 3.16227766 (sqrt 10). Scale 1 everywhere.
  auto all = RunNode("LayerNormalization", {F32({2, 2, 2}, {0, 4, 4, 8, 1, 1, 1, 1}), F32({2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1})},
                     {Attribute::Int("axis", 0), Attribute::Float("epsilon", 3.75f)}, 2, 17);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  const float r = 1 / std::sqrt(10.0f);
  EXPECT_THAT(ToFloats((*all)[0]), Pointwise(FloatNear(kTol), {-2.5f * r, 1.5f * r, 1.5f * r, 5.5f * r, -1.5f * r, -1.5f * r, -1.5f * r, -1.5f * r}));
  EXPECT_EQ((*all)[1].shape(), (Shape{1, 1, 1}));
  EXPECT_THAT(ToFloats((*all)[1]), ElementsAre(FloatNear(2.5f, kTol)));
}

// Default epsilon 1e-5: X [0, .002] has mean .001, var 1e-6, InvStdDev
// 1/sqrt(1.1e-5) = 301.511345, y = -+.001 * 301.511345 = -+0.30151134.
TEST(LayerNormalization, DefaultEpsilon) {
  auto out = RunNode("LayerNormalization", {F32({1, 2}, {0, 0.002f}), F32({2}, {1, 1})}, {}, 3, 17);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), Pointwise(FloatNear(1e-5f), {-0.30151134f, 0.30151134f}));
  EXPECT_THAT(ToFloats((*out)[2]), ElementsAre(FloatNear(301.511345f, 1e-3f)));
}

// stash_type is the type of Mean and InvStdDev: float32 (1) by default, even
// for a float64 X whose Y stays float64; bfloat16 (16) on request.
// X [1,2] = [1,3]: mean 2, var 1, epsilon 0: InvStdDev 1, y = [-1, 1].
TEST(LayerNormalization, StashType) {
  auto d = RunNode("LayerNormalization", {F64({1, 2}, {1, 3}), F64({2}, {1, 1})}, {Attribute::Float("epsilon", 0)}, 3, 17);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ((*d)[0].dtype(), DType::kFloat64);
  EXPECT_EQ((*d)[1].dtype(), DType::kFloat32);
  EXPECT_EQ((*d)[2].dtype(), DType::kFloat32);
  EXPECT_THAT(ToFloats((*d)[0]), ElementsAre(-1, 1));
  EXPECT_THAT(ToFloats((*d)[1]), ElementsAre(2));
  EXPECT_THAT(ToFloats((*d)[2]), ElementsAre(1));
  auto b = RunNode("LayerNormalization", {F32({1, 2}, {1, 3}), F32({2}, {1, 1})},
                   {Attribute::Float("epsilon", 0), Attribute::Int("stash_type", 16)}, 3, 17);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)[0].dtype(), DType::kFloat32);
  EXPECT_EQ((*b)[1].dtype(), DType::kBFloat16);
  EXPECT_EQ((*b)[2].dtype(), DType::kBFloat16);
  EXPECT_THAT(ToFloats((*b)[0]), ElementsAre(-1, 1));
  EXPECT_THAT(ToFloats((*b)[1]), ElementsAre(2));
  EXPECT_THAT(ToFloats((*b)[2]), ElementsAre(1));
}

TEST(LayerNormalization, Errors) {
  auto bad_scale = RunNode("LayerNormalization", {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({3}, {1, 1, 1})}, {}, 1, 17);
  ASSERT_FALSE(bad_scale.ok());
  EXPECT_THAT(bad_scale.status().message(), HasSubstr("'n0' (LayerNormalization)"));
  EXPECT_THAT(bad_scale.status().message(), HasSubstr("broadcast"));
  auto bad_axis = RunNode("LayerNormalization", {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({4}, {1, 1, 1, 1})}, {Attribute::Int("axis", 2)}, 1, 17);
  ASSERT_FALSE(bad_axis.ok());
  EXPECT_THAT(bad_axis.status().message(), HasSubstr("'n0' (LayerNormalization)"));
  EXPECT_THAT(bad_axis.status().message(), HasSubstr("axis 2"));
  auto neg_axis = RunNode("LayerNormalization", {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({4}, {1, 1, 1, 1})}, {Attribute::Int("axis", -3)}, 1, 17);
  ASSERT_FALSE(neg_axis.ok());
  EXPECT_THAT(neg_axis.status().message(), HasSubstr("axis -3"));
  auto bad_stash = RunNode("LayerNormalization", {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({4}, {1, 1, 1, 1})},
                           {Attribute::Int("stash_type", 7)}, 3, 17);
  ASSERT_FALSE(bad_stash.ok());
  EXPECT_THAT(bad_stash.status().message(), HasSubstr("stash_type"));
}

// ---------------------------------------------------------------------------
// LRN: y = x / (bias + alpha/size * square_sum)^beta, square_sum over channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to [0, C-1].

// X [1,3,1,1] = [1,2,3], size 3 (window c-1..c+1), alpha 3 (alpha/size = 1),
// beta 1, bias 1: square sums [1+4, 1+4+9, 4+9] = [5,14,13];
// y = [1/6, 2/15, 3/14].
TEST(LRN, SizeAlphaBetaBias) {
  EXPECT_THAT(Run1("LRN", {F32({1, 3, 1, 1}, {1, 2, 3})},
                   {Attribute::Int("size", 3), Attribute::Float("alpha", 3), Attribute::Float("beta", 1), Attribute::Float("bias", 1)}),
              Pointwise(FloatNear(kTol), {1.f / 6, 2.f / 15, 3.f / 14}));
  // beta 0.5, bias 2, alpha 0.3 (alpha/size 0.1): denominators
  // sqrt(2 + [0.5, 1.4, 1.3]) = [sqrt 2.5, sqrt 3.4, sqrt 3.3]
  // y = [1/1.5811388, 2/1.8439089, 3/1.8165902] = [0.63245553, 1.08465229, 1.65144565].
  EXPECT_THAT(Run1("LRN", {F32({1, 3, 1, 1}, {1, 2, 3})},
                   {Attribute::Int("size", 3), Attribute::Float("alpha", 0.3f), Attribute::Float("beta", 0.5f), Attribute::Float("bias", 2)}),
              Pointwise(FloatNear(1e-6f), {0.63245553f, 1.08465229f, 1.65144565f}));
}

// Even size 2: window [c - floor(1/2), c + ceil(1/2)] = [c, c+1].
// alpha 2 (alpha/size 1), beta 1, bias 1: square sums [1+4, 4+9, 9] = [5,13,9];
// y = [1/6, 2/14, 3/10].
TEST(LRN, EvenSizeWindowLeansForward) {
  EXPECT_THAT(Run1("LRN", {F32({1, 3, 1, 1}, {1, 2, 3})},
                   {Attribute::Int("size", 2), Attribute::Float("alpha", 2), Attribute::Float("beta", 1), Attribute::Float("bias", 1)}),
              Pointwise(FloatNear(kTol), {1.f / 6, 2.f / 14, 3.f / 10}));
}

// Defaults alpha 1e-4, beta 0.75, bias 1; size 1 (each channel alone):
// x = 10: 10 / (1 + 1e-4*100)^0.75 = 10 / 1.01^0.75 = 10 / 1.00749070 = 9.9256503;
// x = 100: 100 / 2^0.75 = 100 / 1.68179283 = 59.4603558.
// X [2,1,2] also checks that batches and spatial cells stay apart.
TEST(LRN, DefaultsAndLayout) {
  EXPECT_THAT(Run1("LRN", {F32({2, 1, 2}, {10, 0, 0, 100})}, {Attribute::Int("size", 1)}),
              Pointwise(FloatNear(1e-5f), {9.9256503f, 0.f, 0.f, 59.4603558f}));
  // X [2,2,2] size 3, alpha 3 (alpha/size 1), beta 1, bias 0: square sums over
  // both channels of the same (n, cell): n0 cells [1^2+3^2, 2^2+4^2] = [10, 20],
  // n1 [5^2+7^2, 6^2+8^2] = [74, 100]. y = x / sum.
  EXPECT_THAT(Run1("LRN", {F32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
                   {Attribute::Int("size", 3), Attribute::Float("alpha", 3), Attribute::Float("beta", 1), Attribute::Float("bias", 0)}),
              Pointwise(FloatNear(kTol), {0.1f, 0.1f, 0.3f, 0.2f, 5.f / 74, 0.06f, 7.f / 74, 0.08f}));
}

TEST(LRN, Errors) {
  auto no_size = RunNode("LRN", {F32({1, 2, 1}, {1, 2})}, {}, 1);
  ASSERT_FALSE(no_size.ok());
  EXPECT_THAT(no_size.status().message(), HasSubstr("'n0' (LRN)"));
  EXPECT_THAT(no_size.status().message(), HasSubstr("size"));
  auto zero = RunNode("LRN", {F32({1, 2, 1}, {1, 2})}, {Attribute::Int("size", 0)}, 1);
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("size 0"));
  auto rank1 = RunNode("LRN", {F32({2}, {1, 2})}, {Attribute::Int("size", 1)}, 1);
  ASSERT_FALSE(rank1.ok());
  EXPECT_THAT(rank1.status().message(), HasSubstr("rank"));
}

// ---------------------------------------------------------------------------
// MeanVarianceNormalization: (x - mean) / (sqrt(var) + 1e-9) over `axes`.

// Default axes [0,2,3] on X [2,2,1,2]: per channel over N, H, W.
// c0 = {1,3 | 5,7}: mean 4, var (9+1+1+9)/4 = 5, std 2.2360680:
//   y = [-3,-1,1,3]/2.2360680 = [-1.3416408, -0.4472136, 0.4472136, 1.3416408].
// c1 = {2,2 | 2,6}: mean 3, dev [-1,-1,-1,3], var 12/4 = 3, std 1.7320508:
//   y = [-0.5773503 x3, 1.7320508].
TEST(MeanVarianceNormalization, DefaultAxes) {
  EXPECT_THAT(Run1("MeanVarianceNormalization", {F32({2, 2, 1, 2}, {1, 3, 2, 2, 5, 7, 2, 6})}, {}),
              Pointwise(FloatNear(1e-6f), {-1.3416408f, -0.4472136f, -0.5773503f, -0.5773503f, 0.4472136f, 1.3416408f, -0.5773503f,
                                           1.7320508f}));
}

// X [2,3] = [[1,2,3],[4,4,4]].
// axes [1] (or [-1]): row0 mean 2, var 2/3, std 0.81649658: [-1.2247449, 0, 1.2247449];
//   row1 var 0: 0 / (0 + 1e-9) = 0 (the epsilon avoids 0/0).
// axes [0]: columns [1,4], [2,4], [3,4] have devs +-1.5, +-1, +-0.5 and std
//   equal to them: every y is -1 (row 0) or 1 (row 1).
TEST(MeanVarianceNormalization, Axes) {
  for (int64_t ax : {1, -1}) {
    SCOPED_TRACE(ax);
    EXPECT_THAT(Run1("MeanVarianceNormalization", {F32({2, 3}, {1, 2, 3, 4, 4, 4})}, {Attribute::Ints("axes", {ax})}),
                Pointwise(FloatNear(1e-6f), {-1.2247449f, 0.f, 1.2247449f, 0.f, 0.f, 0.f}));
  }
  EXPECT_THAT(Run1("MeanVarianceNormalization", {F32({2, 3}, {1, 2, 3, 4, 4, 4})}, {Attribute::Ints("axes", {0})}),
              Pointwise(FloatNear(1e-6f), {-1.f, -1.f, -1.f, 1.f, 1.f, 1.f}));
  // axes [0,1]: all six, mean 3, devs [-2,-1,0,1,1,1], var 8/6, std 1.1547005:
  // y = dev / 1.1547005 = dev * 0.8660254.
  EXPECT_THAT(Run1("MeanVarianceNormalization", {F32({2, 3}, {1, 2, 3, 4, 4, 4})}, {Attribute::Ints("axes", {0, 1})}),
              Pointwise(FloatNear(1e-6f), {-1.7320508f, -0.8660254f, 0.f, 0.8660254f, 0.8660254f, 0.8660254f}));
}

// The 1e-9 is added to the standard deviation, not the variance: X [0, 2e-9]
// has dev +-1e-9 and std 1e-9, so y = +-1e-9 / 2e-9 = +-0.5 (adding it to the
// variance would give +-1e-9/sqrt(1e-18 + 1e-9) = +-3e-5).
TEST(MeanVarianceNormalization, EpsilonOnStd) {
  EXPECT_THAT(Run1("MeanVarianceNormalization", {F32({1, 2}, {0, 2e-9f})}, {Attribute::Ints("axes", {1})}),
              Pointwise(FloatNear(1e-5f), {-0.5f, 0.5f}));
}

TEST(MeanVarianceNormalization, Errors) {
  auto twice = RunNode("MeanVarianceNormalization", {F32({2, 3}, {1, 2, 3, 4, 5, 6})}, {Attribute::Ints("axes", {1, -1})}, 1);
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("'n0' (MeanVarianceNormalization)"));
  EXPECT_THAT(twice.status().message(), HasSubstr("twice"));
  // The default axes [0,2,3] need rank 4.
  auto rank2 = RunNode("MeanVarianceNormalization", {F32({2, 3}, {1, 2, 3, 4, 5, 6})}, {}, 1);
  ASSERT_FALSE(rank2.ok());
  EXPECT_THAT(rank2.status().message(), HasSubstr("out of range"));
}

}  // namespace
}  // namespace kiln
