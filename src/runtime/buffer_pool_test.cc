#include "runtime/buffer_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "ir/builder.h"
#include "runtime/session_internal.h"
#include "support/layout.h"

namespace kiln::runtime {
namespace {

TEST(BufferPool, ReusesReleasedBlocksOfTheSameClass) {
  auto pool = BufferPool::Create();
  void* first = nullptr;
  {
    auto t = pool->Allocate(DType::kFloat32, {1, 16, 64, 64}, kRowMajor, true);
    ASSERT_TRUE(t.ok());
    first = t->raw();
    EXPECT_EQ(t->data<float>()[123], 0.f);  // zeroed on request
    t->data<float>()[123] = 5.f;
  }
  EXPECT_EQ(pool->stats().in_use, 0u);
  auto again = pool->Allocate(DType::kFloat32, {1, 16, 64, 64}, kChannelsLast, true);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->raw(), first);               // the same block
  EXPECT_EQ(again->data<float>()[123], 0.f);    // zeroed again
  EXPECT_TRUE(IsDenseInOrder(*again, kChannelsLast));
  EXPECT_EQ(pool->stats().system_allocations, 1u);
  EXPECT_EQ(pool->stats().reuses, 1u);
  // A size in another class gets another block.
  auto other = pool->Allocate(DType::kFloat32, {1, 32, 64, 64}, kRowMajor, false);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->raw(), first);
  EXPECT_EQ(pool->stats().peak_in_use, BufferPool::SizeClass(16 * 64 * 64 * 4) + BufferPool::SizeClass(32 * 64 * 64 * 4));
}

TEST(BufferPool, SizeClassesWasteAtMostAQuarter) {
  for (size_t b : {1ul, 63ul, 65ul, 4097ul, 65537ul, 100000ul, 1000000ul, 13107200ul}) {
    const size_t c = BufferPool::SizeClass(b);
    EXPECT_GE(c, b);
    EXPECT_LE(static_cast<double>(c), 1.25 * static_cast<double>(b) + 64) << b;
  }
}

TEST(BufferPool, TensorsOutliveThePool) {
  Tensor kept;
  {
    auto pool = BufferPool::Create();
    auto t = pool->Allocate(DType::kFloat32, {1000}, kRowMajor, true);
    ASSERT_TRUE(t.ok());
    kept = *t;
  }
  kept.data<float>()[999] = 1.f;  // still valid (ASan checks it); freed with the tensor
  EXPECT_EQ(kept.data<float>()[999], 1.f);
}

TEST(BufferPool, HugeShapesAreErrorsNotAborts) {
  auto pool = BufferPool::Create();
  EXPECT_FALSE(pool->Allocate(DType::kFloat32, {int64_t{1} << 40, 1024}, kRowMajor, false).ok());
  EXPECT_FALSE(pool->Allocate(DType::kFloat32, {-1}, kRowMajor, false).ok());
}

// A session's second run of a static-shape model takes no new memory.
TEST(BufferPool, SecondRunAllocatesNothingNew) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 8, 32, 32});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {8, 8, 3, 3}, -1, 1);
  auto c = b.AddNode("Conv", {x, w}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})});
  auto r = b.AddNode("Relu", {c}, {});
  b.AddOutput(b.AddNode("Add", {r, c}, {}));
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  for (const char* provider : {"reference", "cpu"}) {
    SessionOptions o;
    o.provider = provider;
    auto s = CreateSessionFromModel(*m, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    std::map<std::string, Tensor> feeds = {{"x", Tensor::Zeros(DType::kFloat32, {1, 8, 32, 32})}};
    ASSERT_TRUE((*s)->Run(feeds).ok());
    const uint64_t after_first = (*s)->impl().executor->pool().stats().system_allocations;
    EXPECT_GT(after_first, 0u) << provider;
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*s)->Run(feeds).ok());
    EXPECT_EQ((*s)->impl().executor->pool().stats().system_allocations, after_first) << provider;
  }
}

// A graph output the cpu provider stores channels-last is returned row-major
// in a pool buffer: later runs take no new memory for it (fresh heap pages
// faulted in on many early runs before), and a result the caller still holds
// is never handed out again, so its values survive the next runs.
TEST(BufferPool, OutputsConvertedOnReturnComeFromThePoolAndStayTheCallers) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 3, 16, 16});
  auto w = b.AddRandomInitializer("w", DType::kFloat32, {24, 3, 3, 3}, -1, 1);
  const std::string y = b.AddNode("Conv", {x, w}, {ir::Attribute::Ints("pads", {1, 1, 1, 1})});
  b.AddOutput(y);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  SessionOptions o;
  o.provider = "cpu";
  auto s = CreateSessionFromModel(*m, o);
  auto ref = CreateSessionFromModel(*m);
  ASSERT_TRUE(s.ok() && ref.ok());
  ASSERT_TRUE(SameOrder((*s)->impl().executor->PlanLayouts().orders[y], kChannelsLast, 4)) << "the output is not converted on return";
  auto feeds = [](uint64_t seed) {
    ir::SeededRng rng(seed);
    return std::map<std::string, Tensor>{{"x", *ir::RandomTensor(DType::kFloat32, {1, 3, 16, 16}, rng, -1, 1)}};
  };
  auto run = [&](uint64_t seed) {
    auto r = (*s)->Run(feeds(seed));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0] : Tensor();
  };
  auto values = [](const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); };
  const BufferPool& pool = (*s)->impl().executor->pool();
  const Tensor held = run(1);
  ASSERT_TRUE(held.defined());
  EXPECT_TRUE(held.is_contiguous());
  EXPECT_GE(pool.stats().in_use, held.nbytes()) << "the returned output is not a pool buffer";
  const std::vector<float> held_values = values(held);
  run(2);  // warms the pool for a run while `held` is alive
  const BufferPool::Stats warm = pool.stats();
  for (uint64_t seed = 3; seed < 6; ++seed) {
    const Tensor got = run(seed);
    auto want = (*ref)->Run(feeds(seed));
    ASSERT_TRUE(want.ok() && got.defined());
    const std::vector<float> g = values(got), e = values((*want)[0]);
    ASSERT_EQ(g.size(), e.size());
    for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], e[i], 1e-4f * std::max(1.f, std::fabs(e[i]))) << i;
  }
  EXPECT_EQ(pool.stats().system_allocations, warm.system_allocations);
  EXPECT_GT(pool.stats().reuses, warm.reuses);
  EXPECT_EQ(values(held), held_values);
}

// A composed kernel (FusedSeparableConv run as three FusedConv kernels,
// KILN_CPU_SEPARABLE=0) takes its intermediate values from the session's
// pool, as the executor does for the same three convolutions left unfused
// (KILN_FUSE_SEPARABLE=0): as many pool buffers per run, none new after the
// first run. Plain allocations would show as fewer reuses per run.
TEST(BufferPool, ComposedKernelTakesItsIntermediatesFromThePool) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, Shape{1, 8, 12, 12});
  auto ints = [](const char* n, std::vector<int64_t> v) { return ir::Attribute::Ints(n, std::move(v)); };
  auto we = b.AddRandomInitializer("we", DType::kFloat32, {32, 8, 1, 1}, -1, 1);
  auto wd = b.AddRandomInitializer("wd", DType::kFloat32, {32, 1, 3, 3}, -1, 1);
  auto wp = b.AddRandomInitializer("wp", DType::kFloat32, {8, 32, 1, 1}, -1, 1);
  auto h = b.AddNode("Relu", {b.AddNode("Conv", {x, we}, {})}, {});
  auto d = b.AddNode("Relu", {b.AddNode("Conv", {h, wd}, {ir::Attribute::Int("group", 32), ints("pads", {1, 1, 1, 1})})}, {});
  b.AddOutput(b.AddNode("Conv", {d, wp}, {}));
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  auto reuses_per_run = [&](const char* env) -> uint64_t {
    setenv(env, "0", 1);
    SessionOptions o;
    o.provider = "cpu";
    auto s = CreateSessionFromModel(*m, o);
    unsetenv(env);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (!s.ok()) return 0;
    std::map<std::string, Tensor> feeds = {{"x", Tensor::Zeros(DType::kFloat32, {1, 8, 12, 12})}};
    EXPECT_TRUE((*s)->Run(feeds).ok());
    const BufferPool& pool = (*s)->impl().executor->pool();
    const BufferPool::Stats first = pool.stats();
    EXPECT_TRUE((*s)->Run(feeds).ok());
    EXPECT_EQ(pool.stats().system_allocations, first.system_allocations) << env;
    return pool.stats().reuses - first.reuses;
  };
  const uint64_t composed = reuses_per_run("KILN_CPU_SEPARABLE"), unfused = reuses_per_run("KILN_FUSE_SEPARABLE");
  EXPECT_GE(unfused, 3u);  // the three convolutions' outputs at least
  EXPECT_GE(composed, unfused);
}

}  // namespace
}  // namespace kiln::runtime

namespace kiln::runtime {
namespace {

// SessionOptions::memory_limit: a run that would hold more fails cleanly,
// naming the node, and the session stays usable for inputs that fit.
TEST(BufferPool, MemoryLimitGivesAClearErrorNamingTheNode) {
  ir::GraphBuilder b(17);
  auto x = b.AddInput("x", DType::kFloat32, ir::Dims{ir::Dim::Symbol("N"), ir::Dim::Known(1024)});
  auto r = b.AddNode("Relu", {x}, {}, 1, "big_relu")[0];
  b.AddOutput(r);
  auto m = b.Build();
  ASSERT_TRUE(m.ok());
  for (const char* provider : {"reference", "cpu"}) {
    SessionOptions o;
    o.provider = provider;
    o.memory_limit = 1 << 20;  // 1 MiB
    auto s = CreateSessionFromModel(*m, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    auto small = (*s)->Run({{"x", Tensor::Zeros(DType::kFloat32, {16, 1024})}});  // 64 KiB
    EXPECT_TRUE(small.ok()) << provider << ": " << small.status().ToString();
    auto big = (*s)->Run({{"x", Tensor::Zeros(DType::kFloat32, {512, 1024})}});  // 2 MiB
    ASSERT_FALSE(big.ok()) << provider;
    EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted) << big.status().ToString();
    EXPECT_NE(big.status().message().find("big_relu"), std::string::npos) << big.status().ToString();
    EXPECT_NE(big.status().message().find("memory limit"), std::string::npos) << big.status().ToString();
    EXPECT_TRUE((*s)->Run({{"x", Tensor::Zeros(DType::kFloat32, {16, 1024})}}).ok()) << provider;
  }
}

}  // namespace
}  // namespace kiln::runtime
