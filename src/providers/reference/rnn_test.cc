// Tests of RNN, GRU and LSTM with one hidden unit, so every expected value
// is the spec's equation written out by hand in the test.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/op_test_util.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::Pointwise;
using testing::F32;
using testing::RunNode;
using testing::ToDoubles;

MATCHER_P(Near, tol, "") { return std::abs(std::get<0>(arg) - std::get<1>(arg)) <= tol; }

double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// W = 0.5, R = 0.25, Wb = 0.1, Rb = 0.2, X = [1, 2] (seq 2, batch 1, input 1).
std::vector<Tensor> RnnInputs(float w = 0.5f) {
  return {F32({2, 1, 1}, {1, 2}), F32({1, 1, 1}, {w}), F32({1, 1, 1}, {0.25f}), F32({1, 2}, {0.1f, 0.2f})};
}

TEST(Rnn, ForwardDefaults) {
  auto r = RunNode("RNN", RnnInputs(), {ir::Attribute::Int("hidden_size", 1)}, 2, 14);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double h1 = std::tanh(0.5 + 0.3), h2 = std::tanh(1.0 + 0.25 * h1 + 0.3);
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 1, 1, 1}));
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-6), std::vector<double>{h1, h2}));
  EXPECT_EQ((*r)[1].shape(), (Shape{1, 1, 1}));
  EXPECT_THAT(ToDoubles((*r)[1]), Pointwise(Near(1e-6), std::vector<double>{h2}));
}

TEST(Rnn, ReverseAndBidirectional) {
  const double f1 = std::tanh(0.8), f2 = std::tanh(1.3 + 0.25 * f1);
  const double b1 = std::tanh(1.3), b0 = std::tanh(0.8 + 0.25 * b1);  // reverse: t=1 first
  auto r = RunNode("RNN", RnnInputs(), {ir::Attribute::String("direction", "reverse")}, 2, 14);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-6), std::vector<double>{b0, b1}));
  EXPECT_THAT(ToDoubles((*r)[1]), Pointwise(Near(1e-6), std::vector<double>{b0}));
  std::vector<Tensor> in = {F32({2, 1, 1}, {1, 2}), F32({2, 1, 1}, {0.5f, 0.5f}), F32({2, 1, 1}, {0.25f, 0.25f}),
                            F32({2, 2}, {0.1f, 0.2f, 0.1f, 0.2f})};
  auto bi = RunNode("RNN", in, {ir::Attribute::String("direction", "bidirectional")}, 2, 14);
  ASSERT_TRUE(bi.ok()) << bi.status().ToString();
  EXPECT_EQ((*bi)[0].shape(), (Shape{2, 2, 1, 1}));
  EXPECT_THAT(ToDoubles((*bi)[0]), Pointwise(Near(1e-6), std::vector<double>{f1, b0, f2, b1}));
  EXPECT_THAT(ToDoubles((*bi)[1]), Pointwise(Near(1e-6), std::vector<double>{f2, b0}));
}

TEST(Rnn, ActivationsAlphaAndClip) {
  // W = -0.5: pre-activation at t=0 is -0.2.
  auto relu = RunNode("RNN", RnnInputs(-0.5f), {ir::Attribute::Strings("activations", {"Relu"})}, 2, 14);
  ASSERT_TRUE(relu.ok()) << relu.status().ToString();
  const double r2 = std::max(0.0, -1.0 + 0.25 * 0 + 0.3);
  EXPECT_THAT(ToDoubles((*relu)[0]), Pointwise(Near(1e-6), std::vector<double>{0, r2}));
  auto leaky = RunNode("RNN", RnnInputs(-0.5f),
                       {ir::Attribute::Strings("activations", {"LeakyRelu"}), ir::Attribute::Floats("activation_alpha", {0.1f})}, 2, 14);
  ASSERT_TRUE(leaky.ok());
  const double l1 = 0.1 * -0.2, l2 = 0.1 * (-1.0 + 0.25 * l1 + 0.3);
  EXPECT_THAT(ToDoubles((*leaky)[0]), Pointwise(Near(1e-6), std::vector<double>{l1, l2}));
  auto clip = RunNode("RNN", RnnInputs(), {ir::Attribute::Float("clip", 0.5f)}, 2, 14);
  ASSERT_TRUE(clip.ok());
  EXPECT_THAT(ToDoubles((*clip)[0]), Pointwise(Near(1e-6), std::vector<double>{std::tanh(0.5), std::tanh(0.5)}));
  auto bad = RunNode("RNN", RnnInputs(), {ir::Attribute::Strings("activations", {"Gelu"})}, 2, 14);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("node 'n0'"));
}

TEST(Rnn, LayoutSequenceLensAndInitialH) {
  // batch 2, seq 2, layout 1: X[b][t]. Batch 1 has length 1.
  std::vector<Tensor> in = {F32({2, 2, 1}, {1, 2, 3, 4}), F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {0.25f}), F32({1, 2}, {0.1f, 0.2f}),
                            Tensor::FromVector<int32_t>(DType::kInt32, {2}, {2, 1}), F32({2, 1, 1}, {1.0f, -1.0f})};
  auto r = RunNode("RNN", in, {ir::Attribute::Int("layout", 1)}, 2, 14);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double a1 = std::tanh(0.5 + 0.25 + 0.3), a2 = std::tanh(1.0 + 0.25 * a1 + 0.3);
  const double b1 = std::tanh(1.5 - 0.25 + 0.3);
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 2, 1, 1}));
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-6), std::vector<double>{a1, a2, b1, 0}));
  EXPECT_EQ((*r)[1].shape(), (Shape{2, 1, 1}));
  EXPECT_THAT(ToDoubles((*r)[1]), Pointwise(Near(1e-6), std::vector<double>{a2, b1}));
}

TEST(Rnn, ShapeErrors) {
  std::vector<Tensor> in = RnnInputs();
  in[1] = F32({1, 2, 1}, {0.5f, 0.5f});
  auto r = RunNode("RNN", in, {}, 2, 14);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("node 'n0'"));
  auto d = RunNode("RNN", RnnInputs(), {ir::Attribute::String("direction", "sideways")}, 2, 14);
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("direction"));
}

// GRU, one step: W = (z 0.1, r 0.2, h 0.3), R = (0.4, 0.5, 0.6), Wbh = 0.1,
// Rbh = 0.2, h0 = 0.5, x = 1.
std::vector<Tensor> GruInputs() {
  return {F32({1, 1, 1}, {1}), F32({1, 3, 1}, {0.1f, 0.2f, 0.3f}), F32({1, 3, 1}, {0.4f, 0.5f, 0.6f}),
          F32({1, 6}, {0, 0, 0.1f, 0, 0, 0.2f}), Tensor(), F32({1, 1, 1}, {0.5f})};
}

TEST(Gru, LinearBeforeReset) {
  const double z = Sig(0.1 + 0.4 * 0.5), r = Sig(0.2 + 0.5 * 0.5);
  const double hh0 = std::tanh(0.3 + 0.1 + (r * 0.5) * 0.6 + 0.2);
  const double hh1 = std::tanh(0.3 + 0.1 + r * (0.5 * 0.6 + 0.2));
  auto a = RunNode("GRU", GruInputs(), {}, 2, 14);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_THAT(ToDoubles((*a)[1]), Pointwise(Near(1e-6), std::vector<double>{(1 - z) * hh0 + z * 0.5}));
  auto b = RunNode("GRU", GruInputs(), {ir::Attribute::Int("linear_before_reset", 1)}, 2, 14);
  ASSERT_TRUE(b.ok());
  EXPECT_THAT(ToDoubles((*b)[1]), Pointwise(Near(1e-6), std::vector<double>{(1 - z) * hh1 + z * 0.5}));
  // Custom activations: f = HardSigmoid (defaults 0.2, 0.5), g = Softsign.
  auto c = RunNode("GRU", GruInputs(), {ir::Attribute::Strings("activations", {"HardSigmoid", "Softsign"})}, 2, 14);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto hs = [](double x) { return std::min(1.0, std::max(0.0, 0.2 * x + 0.5)); };
  const double z2 = hs(0.3), r2 = hs(0.45), p = 0.3 + 0.1 + (r2 * 0.5) * 0.6 + 0.2, hh2 = p / (1 + std::abs(p));
  EXPECT_THAT(ToDoubles((*c)[1]), Pointwise(Near(1e-6), std::vector<double>{(1 - z2) * hh2 + z2 * 0.5}));
}

// LSTM, one step: W = (i .1, o .2, f .3, c .4), R = (.5, .6, .7, .8),
// h0 = .5, c0 = .25, P = (i .1, o .2, f .3), x = 1.
std::vector<Tensor> LstmInputs() {
  return {F32({1, 1, 1}, {1}), F32({1, 4, 1}, {0.1f, 0.2f, 0.3f, 0.4f}), F32({1, 4, 1}, {0.5f, 0.6f, 0.7f, 0.8f}), Tensor(),
          Tensor(), F32({1, 1, 1}, {0.5f}), F32({1, 1, 1}, {0.25f}), F32({1, 3}, {0.1f, 0.2f, 0.3f})};
}

TEST(Lstm, PeepholesAndStates) {
  auto r = RunNode("LSTM", LstmInputs(), {}, 3, 14);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double i = Sig(0.1 + 0.5 * 0.5 + 0.1 * 0.25), f = Sig(0.3 + 0.7 * 0.5 + 0.3 * 0.25), g = std::tanh(0.4 + 0.8 * 0.5);
  const double c = f * 0.25 + i * g, o = Sig(0.2 + 0.6 * 0.5 + 0.2 * c), h = o * std::tanh(c);
  EXPECT_THAT(ToDoubles((*r)[0]), Pointwise(Near(1e-6), std::vector<double>{h}));
  EXPECT_THAT(ToDoubles((*r)[1]), Pointwise(Near(1e-6), std::vector<double>{h}));
  EXPECT_THAT(ToDoubles((*r)[2]), Pointwise(Near(1e-6), std::vector<double>{c}));
}

TEST(Lstm, InputForget) {
  auto r = RunNode("LSTM", LstmInputs(), {ir::Attribute::Int("input_forget", 1)}, 3, 14);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double i = Sig(0.1 + 0.5 * 0.5 + 0.1 * 0.25), f = 1 - i, g = std::tanh(0.4 + 0.8 * 0.5);
  const double c = f * 0.25 + i * g, o = Sig(0.2 + 0.6 * 0.5 + 0.2 * c);
  EXPECT_THAT(ToDoubles((*r)[2]), Pointwise(Near(1e-6), std::vector<double>{c}));
  EXPECT_THAT(ToDoubles((*r)[1]), Pointwise(Near(1e-6), std::vector<double>{o * std::tanh(c)}));
}

TEST(Lstm, BadPeepholeShape) {
  std::vector<Tensor> in = LstmInputs();
  in[7] = F32({1, 2}, {0.1f, 0.2f});
  auto r = RunNode("LSTM", in, {}, 3, 14);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("node 'n0'"));
  EXPECT_THAT(r.status().message(), HasSubstr("P"));
}

}  // namespace
}  // namespace kiln
