// The faulty providers' test inputs (gtest: a broken builder fails the test);
// faulty_provider.cc itself stays free of gtest, so the test-only CLI
// kiln_faulty links it too.
#include <gtest/gtest.h>

#include "ir/builder.h"
#include "support/faulty_provider.h"

namespace kiln::testing {

ir::Model SeedModel(examples::SeedLayout layout) {
  examples::SeedOptions o;
  o.layout = layout;
  auto m = examples::BuildSeedModel(o);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

std::map<std::string, Datum> RandomFeeds(const ir::Model& m, uint64_t seed) {
  std::map<std::string, Datum> feeds;
  ir::SeededRng rng(seed);
  for (const ir::Value* v : m.graph.RealInputs()) {
    Shape s;
    for (const ir::Dim& d : *v->type.shape) s.push_back(d.value);
    auto t = ir::RandomTensor(v->type.dtype, s, rng, -1, 1);
    EXPECT_TRUE(t.ok());
    feeds[v->name] = Datum(*t);
  }
  return feeds;
}

}  // namespace kiln::testing
