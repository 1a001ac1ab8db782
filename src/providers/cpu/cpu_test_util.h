// Shared by the cpu kernel tests (header only: it uses gtest, so it must not
// be compiled into the library).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/tensor.h"
#include "ops/fused.h"
#include "runtime/session_internal.h"

namespace kiln::cpu::testing {

// The cpu kernels' tolerance against the reference: |a - e| <= 1e-4 * max(1, |e|);
// equal values (infinities too: MaxPool over padding only is -inf) agree.
inline void ExpectClose(const Tensor& a, const Tensor& e, const std::string& what) {
  ASSERT_EQ(a.shape(), e.shape()) << what;
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < e.numel(); ++i) {
    const double x = a.GetAsDouble(i), y = e.GetAsDouble(i);
    if (x == y) continue;
    const double d = std::fabs(x - y);
    if (!(d <= 1e-4 * std::max(1.0, std::fabs(y)))) {
      ++bad;
      worst = std::isnan(d) ? d : std::max(worst, d);
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << e.numel() << " differ (worst |diff| " << worst << ")";
}

// Bit-identical tensors: two kernels that sum in different orders differ
// somewhere, so tests use this to show which kernel ran.
inline bool SameBits(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.Contiguous().raw(), b.Contiguous().raw(), a.nbytes()) == 0;
}

// An activation for the kernels' own constructors.
// The output of conv (a kernel with Run(x, y, residual): DirectConv,
// WinogradConv, PointwiseConv) on x, with residual z or none; in_place: y
// starts as a copy of z and is passed as the residual too (written over).
template <typename Conv>
std::vector<float> RunWithResidual(const Conv& conv, const std::vector<float>& x, const std::vector<float>& z, bool with_residual,
                                   bool in_place) {
  std::vector<float> y(z.size(), -99.f);
  if (in_place) {
    y = z;
    conv.Run(x.data(), y.data(), y.data());
  } else {
    conv.Run(x.data(), y.data(), with_residual ? z.data() : nullptr);
  }
  return y;
}

inline ops::ActivationAttrs Act(ops::Activation kind, float alpha = 0, float beta = 0) {
  ops::ActivationAttrs a;
  a.kind = kind;
  a.alpha = alpha;
  a.beta = beta;
  return a;
}

// The cpu provider with no passes: the kernel under test sees the node as built.
inline SessionOptions CpuOptions() {
  SessionOptions o;
  o.provider = "cpu";
  o.opt_level = "disable";
  return o;
}

// Output 0 of `model` on the reference provider (want) and on the cpu
// provider with no passes (got), and the provider that ran node 0 on cpu.
// A failed session or run is reported here; `ok` is then false.
struct BothRuns {
  bool ok = false;
  Tensor want, got;
  std::string provider;
};
inline BothRuns RunOnBoth(const ir::Model& model, const std::map<std::string, Tensor>& feeds, const std::string& what) {
  BothRuns r;
  auto ref = CreateSessionFromModel(model);
  auto cpu = CreateSessionFromModel(model, CpuOptions());
  if (!ref.ok() || !cpu.ok()) {
    ADD_FAILURE() << what << ": " << (ref.ok() ? cpu.status() : ref.status()).ToString();
    return r;
  }
  r.provider = (*cpu)->impl().executor->node_providers()[0];
  auto want = (*ref)->Run(feeds);
  auto got = (*cpu)->Run(feeds);
  if (!want.ok() || !got.ok()) {
    ADD_FAILURE() << what << ": " << (want.ok() ? got.status() : want.status()).ToString();
    return r;
  }
  r.ok = true;
  r.want = (*want)[0];
  r.got = (*got)[0];
  return r;
}

}  // namespace kiln::cpu::testing
