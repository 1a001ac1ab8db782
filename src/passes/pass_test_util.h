// Shared by the pass tests (header only: it uses gtest, so it must not be
// compiled into the library). A pass test builds a small model, optimizes a
// copy, checks the ops left (structure) and runs both models on the
// reference provider with the same seeded inputs (meaning).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "passes/pipeline.h"
#include "runtime/session_internal.h"

namespace kiln::passes::testing {

// Op types of the main graph in file order.
inline std::vector<std::string> Ops(const ir::Model& m) {
  std::vector<std::string> ops;
  for (const auto& n : m.graph.nodes) ops.push_back(n.op_type);
  return ops;
}

inline size_t CountOp(const ir::Model& m, const std::string& op) {
  const auto ops = Ops(m);
  return static_cast<size_t>(std::count(ops.begin(), ops.end(), op));
}

inline const ir::Node* FindOp(const ir::Model& m, const std::string& op) {
  for (const auto& n : m.graph.nodes)
    if (n.op_type == op) return &n;
  return nullptr;
}

inline std::string ReportText(const PassReport& r) {
  std::string s;
  for (const auto& n : r.notes) s += "  " + n + "\n";
  return s;
}

// The optimized copy of `m`; fails the test when Optimize fails.
inline ir::Model Optimized(const ir::Model& m, OptLevel level, PassReport* report = nullptr) {
  ir::Model copy = m;
  PassReport local;
  Status s = Optimize(copy, level, report ? report : &local);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return copy;
}

// Seeded inputs for every input a user must feed; dims that are not known
// come from `shapes` (by input name) or are 1.
inline std::map<std::string, Tensor> SeededInputs(const ir::Model& m, uint64_t seed,
                                                  const std::map<std::string, Shape>& shapes = {}) {
  std::map<std::string, Tensor> feeds;
  for (const ir::Value* v : m.graph.RealInputs()) {
    Shape shape;
    auto it = shapes.find(v->name);
    if (it != shapes.end()) {
      shape = it->second;
    } else if (v->type.shape) {
      for (const auto& d : *v->type.shape) shape.push_back(d.known() ? d.value : 1);
    }
    ir::SeededRng rng(ir::SeedFor(seed, v->name));
    auto t = ir::RandomTensor(v->type.dtype, shape, rng, -1, 1);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (t.ok()) feeds[v->name] = *t;
  }
  return feeds;
}

// Outputs of `m` on the reference provider (which never optimizes).
inline std::vector<Tensor> RunReference(const ir::Model& m, const std::map<std::string, Tensor>& feeds) {
  auto s = CreateSessionFromModel(m);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return {};
  auto out = (*s)->Run(feeds);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? *out : std::vector<Tensor>{};
}

// |after - before| <= atol + rtol * |before| for every element of every output.
inline void ExpectSameOutputs(const ir::Model& before, const ir::Model& after, const std::map<std::string, Tensor>& feeds,
                              double rtol = 0.0, double atol = 1e-5) {
  const auto a = RunReference(before, feeds);
  const auto b = RunReference(after, feeds);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t o = 0; o < a.size(); ++o) {
    ASSERT_EQ(a[o].dtype(), b[o].dtype()) << "output " << o;
    ASSERT_EQ(a[o].shape(), b[o].shape()) << "output " << o;
    double worst = 0;
    int64_t worst_at = -1;
    for (int64_t i = 0; i < a[o].numel(); ++i) {
      const double x = a[o].GetAsDouble(i), y = b[o].GetAsDouble(i);
      if (std::isnan(x) && std::isnan(y)) continue;
      const double excess = std::fabs(x - y) - (atol + rtol * std::fabs(x));
      if (!(excess <= worst)) { worst = std::isnan(excess) ? 1e300 : excess; worst_at = i; }
    }
    EXPECT_LT(worst_at, 0) << "output " << o << " differs at " << worst_at << ": " << a[o].GetAsDouble(worst_at) << " vs "
                           << b[o].GetAsDouble(worst_at);
  }
}

// The usual check of one pass: optimize at `level`, expect the ops `ops`
// (file order), and the same outputs on seeded inputs. Returns the optimized model.
inline ir::Model ExpectRewrite(const ir::Model& m, OptLevel level, const std::vector<std::string>& ops,
                               const std::map<std::string, Shape>& shapes = {}) {
  PassReport report;
  ir::Model opt = Optimized(m, level, &report);
  EXPECT_EQ(Ops(opt), ops) << "report:\n" << ReportText(report) << "graph:\n" << ir::ToText(opt);
  ExpectSameOutputs(m, opt, SeededInputs(m, 42, shapes));
  return opt;
}

inline ir::Model BuildOrDie(const ir::GraphBuilder& b) {
  auto m = b.Build();
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(m).value() : ir::Model{};
}

}  // namespace kiln::passes::testing
