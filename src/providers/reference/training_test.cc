// Tests of the optimizers of ai.onnx.preview.training. Expected values are
// the spec's update rules worked in double (each test's comment shows the
// arithmetic); float outputs are compared within float rounding.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/training.h"
#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ir::Attribute;
using testing::F32;
using testing::I64;
using testing::ToFloats;

Result<std::vector<Tensor>> RunOpt(const std::string& op, const std::vector<Tensor>& in, const std::vector<Attribute>& attrs,
                                size_t outputs) {
  return testing::RunNode(op, in, attrs, outputs, 1, ops::kTrainingDomain);
}

constexpr float kTol = 2e-6f;

// x=1, g=-1+0.001*1=-0.999, V'=0.95*2+0.05g=1.85005, H'=0.85*0.5+0.15g^2=
// 0.5747, T=0 (no bias correction): X'=1-0.1*V'/(sqrt(H')+eps).
TEST(Adam, FirstStepWithDefaultEpsilon) {
  auto out = RunOpt("Adam", {F32({}, {0.1f}), I64({}, {0}), F32({1}, {1}), F32({1}, {-1}), F32({1}, {2}), F32({1}, {0.5f})},
                 {Attribute::Float("alpha", 0.95f), Attribute::Float("beta", 0.85f), Attribute::Float("norm_coefficient", 0.001f)}, 3);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(FloatNear(0.75595931f, kTol)));
  EXPECT_THAT(ToFloats((*out)[1]), ElementsAre(FloatNear(1.85005f, kTol)));
  EXPECT_THAT(ToFloats((*out)[2]), ElementsAre(FloatNear(0.57470015f, kTol)));
}

// The same inputs with epsilon=0.01 reproduce ONNX 1.12's test_adam_multiple
// data (X1_new 0.75913626): the data's generator used that epsilon without
// putting it on the node, which is why that test is a listed erratum.
TEST(Adam, MultipleGroupsMatchBackendDataWithItsEpsilon) {
  auto out = RunOpt("Adam",
                 {F32({}, {0.1f}), I64({}, {0}), F32({1}, {1}), F32({2}, {1, 2}), F32({1}, {-1}), F32({2}, {-1, -3}),
                  F32({1}, {2}), F32({2}, {4, 1}), F32({1}, {0.5f}), F32({2}, {1, 10})},
                 {Attribute::Float("alpha", 0.95f), Attribute::Float("beta", 0.85f), Attribute::Float("norm_coefficient", 0.001f),
                  Attribute::Float("epsilon", 0.01f)},
                 6);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(FloatNear(0.75913626f, kTol)));
  EXPECT_THAT(ToFloats((*out)[1]), ElementsAre(FloatNear(0.6286528f, kTol), FloatNear(1.9745853f, kTol)));
  EXPECT_THAT(ToFloats((*out)[2]), ElementsAre(FloatNear(1.85005f, kTol)));
  EXPECT_THAT(ToFloats((*out)[3]), ElementsAre(FloatNear(3.75005f, kTol), FloatNear(0.80009997f, kTol)));
  EXPECT_THAT(ToFloats((*out)[4]), ElementsAre(FloatNear(0.5747002f, kTol)));
  EXPECT_THAT(ToFloats((*out)[5]), ElementsAre(FloatNear(0.9997002f, kTol), FloatNear(9.848201f, kTol)));
}

// Defaults alpha 0.9, beta 0.999; T=2: V'=0.9*0.2+0.1*0.5=0.23,
// H'=0.999*0.3+0.001*0.25=0.29995, r'=0.1*sqrt(1-0.999^2)/(1-0.9^2),
// X'=1-r'V'/(sqrt(H')+1e-6)=0.99011776; norm_coefficient_post 0.5 halves it.
TEST(Adam, BiasCorrectionAndPostNorm) {
  std::vector<Tensor> in = {F32({}, {0.1f}), I64({}, {2}), F32({1}, {1}), F32({1}, {0.5f}), F32({1}, {0.2f}), F32({1}, {0.3f})};
  auto out = RunOpt("Adam", in, {}, 3);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(FloatNear(0.99011776f, kTol)));
  EXPECT_THAT(ToFloats((*out)[1]), ElementsAre(FloatNear(0.23f, kTol)));
  EXPECT_THAT(ToFloats((*out)[2]), ElementsAre(FloatNear(0.29995f, kTol)));
  auto post = RunOpt("Adam", in, {Attribute::Float("norm_coefficient_post", 0.5f)}, 3);
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  EXPECT_THAT(ToFloats((*post)[0]), ElementsAre(FloatNear(0.49505888f, kTol)));
}

TEST(Adam, ShapeMismatchIsAnError) {
  auto out = RunOpt("Adam", {F32({}, {0.1f}), I64({}, {0}), F32({2}, {1, 2}), F32({1}, {1}), F32({2}, {0, 0}), F32({2}, {0, 0})}, {}, 3);
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().ToString(), HasSubstr("shape"));
}

// r'=0.1/(1+3*0.1); H'=2+1=3; X'=1-r'*(-1)/(sqrt(3)+1e-6)=1.04441153.
TEST(Adagrad, DecayedRate) {
  auto out = RunOpt("Adagrad", {F32({}, {0.1f}), I64({}, {3}), F32({1}, {1}), F32({1}, {-1}), F32({1}, {2})},
                 {Attribute::Float("decay_factor", 0.1f)}, 2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_THAT(ToFloats((*out)[0]), ElementsAre(FloatNear(1.04441153f, kTol)));
  EXPECT_THAT(ToFloats((*out)[1]), ElementsAre(FloatNear(3.0f, kTol)));
}

// alpha 0.9, beta 0.1, R 0.5, x=1, g=2, v=3.
//  T=1 standard: V'=0.9*3+0.1*2=2.9, X'=1-0.5*2.9=-0.45.
//  T=0: beta counts as 1, V'=2.7+2=4.7, X'=-1.35.
//  T=1 nesterov: X'=1-0.5*(2+0.9*2.9)=-1.305.
TEST(Momentum, StandardFirstStepAndNesterov) {
  auto run = [&](int64_t t, const char* mode) {
    return RunOpt("Momentum", {F32({}, {0.5f}), I64({}, {t}), F32({1}, {1}), F32({1}, {2}), F32({1}, {3})},
               {Attribute::Float("alpha", 0.9f), Attribute::Float("beta", 0.1f), Attribute::String("mode", mode),
                Attribute::Float("norm_coefficient", 0.0f)},
               2);
  };
  auto std1 = run(1, "standard");
  ASSERT_TRUE(std1.ok()) << std1.status().ToString();
  EXPECT_THAT(ToFloats((*std1)[0]), ElementsAre(FloatNear(-0.45f, kTol)));
  EXPECT_THAT(ToFloats((*std1)[1]), ElementsAre(FloatNear(2.9f, kTol)));
  auto std0 = run(0, "standard");
  ASSERT_TRUE(std0.ok()) << std0.status().ToString();
  EXPECT_THAT(ToFloats((*std0)[0]), ElementsAre(FloatNear(-1.35f, kTol)));
  EXPECT_THAT(ToFloats((*std0)[1]), ElementsAre(FloatNear(4.7f, kTol)));
  auto nes = run(1, "nesterov");
  ASSERT_TRUE(nes.ok()) << nes.status().ToString();
  EXPECT_THAT(ToFloats((*nes)[0]), ElementsAre(FloatNear(-1.305f, kTol)));
  auto bad = run(1, "sideways");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().ToString(), HasSubstr("mode"));
  // All four attributes are required by the spec.
  auto missing = RunOpt("Momentum", {F32({}, {0.5f}), I64({}, {1}), F32({1}, {1}), F32({1}, {2}), F32({1}, {3})},
                        {Attribute::Float("alpha", 0.9f), Attribute::String("mode", "standard")}, 2);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().ToString(), HasSubstr("'beta' is required"));
}

}  // namespace
}  // namespace kiln
