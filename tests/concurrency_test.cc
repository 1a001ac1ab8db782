// Sessions and threads (issue 6): many sessions of mixed providers, run
// concurrently from many threads, give results bit-identical to sequential
// runs; sessions are created and destroyed from many threads in any order.
// Run under TSan by `make test-sanitize`.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "examples/seed.h"
#include "ir/builder.h"
#include "runtime/session_internal.h"

namespace kiln {
namespace {

struct Fixture {
  std::unique_ptr<Session> session;
  examples::SeedLayout layout;
  std::vector<Tensor> expected;  // per input, from a sequential run
};

std::vector<Tensor> Inputs(examples::SeedLayout layout) {
  std::vector<Tensor> v;
  for (uint64_t seed : {1, 2, 3}) {
    ir::SeededRng rng(seed);
    v.push_back(*ir::RandomTensor(DType::kFloat32, examples::SeedInputShape(layout), rng, -1, 1));
  }
  return v;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(Concurrency, EightThreadsFourMixedSessionsTwoHundredRunsEach) {
  std::vector<Fixture> fx;
  for (const char* provider : {"reference", "cpu"})
    for (examples::SeedLayout layout : {examples::SeedLayout::kNhwc, examples::SeedLayout::kNchw}) {
      examples::SeedOptions so;
      so.layout = layout;
      auto m = examples::BuildSeedModel(so);
      ASSERT_TRUE(m.ok());
      SessionOptions o;
      o.provider = provider;
      o.threads = 1;  // eight callers already use the cores
      auto s = CreateSessionFromModel(std::move(m).value(), o);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      Fixture f{std::move(s).value(), layout, {}};
      for (const Tensor& x : Inputs(layout)) {
        auto out = f.session->Run({{examples::kSeedInputName, x}});
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        f.expected.push_back((*out)[0].Contiguous());
      }
      fx.push_back(std::move(f));
    }
  const auto nhwc = Inputs(examples::SeedLayout::kNhwc), nchw = Inputs(examples::SeedLayout::kNchw);
  constexpr int kThreads = 8, kRuns = 200;
  std::atomic<int> mismatches{0}, failures{0}, runs{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        Fixture& f = fx[static_cast<size_t>(t + i) % fx.size()];
        const size_t k = static_cast<size_t>(i * 7 + t) % 3;
        const Tensor& x = f.layout == examples::SeedLayout::kNhwc ? nhwc[k] : nchw[k];
        auto out = f.session->Run({{examples::kSeedInputName, x}});
        if (!out.ok()) {
          ++failures;
          continue;
        }
        if (!SameBits((*out)[0].Contiguous(), f.expected[k])) ++mismatches;
        ++runs;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(runs.load(), kThreads * kRuns);
}

// Sessions of different providers created and destroyed from many threads in
// interleaved order (the runtime that motivates kiln corrupted its heap when
// two sessions of different providers were torn down).
TEST(Concurrency, SessionsCreatedAndDestroyedFromManyThreads) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::vector<std::unique_ptr<Session>> mine;
      for (int i = 0; i < 6; ++i) {
        examples::SeedOptions so;
        so.layout = (t + i) % 2 ? examples::SeedLayout::kNhwc : examples::SeedLayout::kNchw;
        auto m = examples::BuildSeedModel(so);
        if (!m.ok()) { ++failures; continue; }
        SessionOptions o;
        o.provider = (t + i) % 3 ? "cpu" : "reference";
        o.threads = 1;
        auto s = CreateSessionFromModel(std::move(m).value(), o);
        if (!s.ok()) { ++failures; continue; }
        Tensor x = Tensor::Zeros(DType::kFloat32, examples::SeedInputShape(so.layout));
        if (!(*s)->Run({{examples::kSeedInputName, x}}).ok()) ++failures;
        mine.push_back(std::move(s).value());
        if (i % 2) mine.erase(mine.begin());  // destroy in another order than created
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace kiln
