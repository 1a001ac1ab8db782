// The compiled-plan cache (issue 6): a warm session gives bit-identical
// results, and a bad entry or folder costs one warning, never an error.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "examples/seed.h"
#include "kiln/session.h"
#include "onnx/onnx_io.h"
#include "onnx/onnx_pb.h"
#include "runtime/plan_cache.h"
#include "runtime/session_internal.h"
#include "support/warn.h"
#include "verify/fuzz_grammar.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed after; warnings captured.
class PlanCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kiln_plan_cache_" + std::to_string(getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "cache");
    SetWarningSink([this](const std::string& m) { warnings_.push_back(m); });
  }
  void TearDown() override {
    SetWarningSink(nullptr);
    std::error_code ec;
    fs::permissions(root_ / "cache", fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }
  std::string SaveModel(const ir::Model& m, const std::string& name) {
    const std::string path = (root_ / name).string();
    EXPECT_TRUE(onnx_io::SaveModelFile(m, path).ok());
    return path;
  }
  SessionOptions Cpu() const {
    SessionOptions o;
    o.provider = "cpu";
    o.threads = 1;
    o.cache_dir = (root_ / "cache").string();
    return o;
  }
  std::vector<fs::path> Entries() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(root_ / "cache")) out.push_back(e.path());
    return out;
  }
  static std::string CacheState(const Session& s) { return s.impl().create_times.cache; }

  fs::path root_;
  std::vector<std::string> warnings_;
};

void ExpectBitIdentical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].dtype(), b[i].dtype());
    ASSERT_EQ(a[i].shape(), b[i].shape());
    const Tensor x = a[i].Contiguous(), y = b[i].Contiguous();
    EXPECT_EQ(std::memcmp(x.raw(), y.raw(), x.nbytes()), 0) << "output " << i;
  }
}

Tensor SeedInput() {
  Tensor t = Tensor::Zeros(DType::kFloat32, {1, 40, 40, 3});
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  return t;
}

TEST_F(PlanCacheTest, WarmSessionHitsAndMatchesColdBitForBit) {
  auto model = examples::BuildSeedModel();
  ASSERT_TRUE(model.ok());
  const std::string path = SaveModel(*model, "seed.onnx");
  auto cold = Session::Create(path, Cpu());
  ASSERT_TRUE(cold.ok()) << cold.status().ToString();
  EXPECT_EQ(CacheState(**cold), "miss");
  ASSERT_EQ(Entries().size(), 1u);
  auto warm = Session::Create(path, Cpu());
  ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  EXPECT_EQ(CacheState(**warm), "hit");
  // The pass notes come back with the plan (kiln inspect --plan shows them).
  EXPECT_EQ((*warm)->impl().pass_report.notes, (*cold)->impl().pass_report.notes);
  EXPECT_FALSE((*warm)->impl().pass_report.notes.empty());
  const std::map<std::string, Tensor> feeds = {{examples::kSeedInputName, SeedInput()}};
  auto a = (*cold)->Run(feeds), b = (*warm)->Run(feeds);
  ASSERT_TRUE(a.ok() && b.ok());
  ExpectBitIdentical(*a, *b);
  // And both agree with the reference provider (which never uses the cache).
  SessionOptions ref;
  ref.cache_dir = Cpu().cache_dir;
  auto r = Session::Create(path, ref);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(CacheState(**r), "off");
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(PlanCacheTest, OptionsThatChangeThePlanChangeTheKey) {
  auto model = examples::BuildSeedModel();
  ASSERT_TRUE(model.ok());
  const std::string path = SaveModel(*model, "seed.onnx");
  for (const char* level : {"disable", "basic", "extended", "all"}) {
    SessionOptions o = Cpu();
    o.opt_level = level;
    auto s = Session::Create(path, o);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(CacheState(**s), "miss") << level;
  }
  EXPECT_EQ(Entries().size(), 4u);
  // Threads do not change the graph: the entry is shared.
  SessionOptions o = Cpu();
  o.threads = 2;
  auto s = Session::Create(path, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(CacheState(**s), "hit");
  // Each pass switch set is another graph, so another entry; unset again,
  // the first entry is found.
  for (const char* var : passes::kPassSwitches) {
    ASSERT_EQ(setenv(var, "0", 1), 0);
    auto off = Session::Create(path, Cpu());
    ASSERT_EQ(unsetenv(var), 0);
    ASSERT_TRUE(off.ok());
    EXPECT_EQ(CacheState(**off), "miss") << var;
  }
  auto again = Session::Create(path, Cpu());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(CacheState(**again), "hit");
  // A different model (other weights) is another entry.
  examples::SeedOptions so;
  so.weight_seed = 7;
  auto other = examples::BuildSeedModel(so);
  ASSERT_TRUE(other.ok());
  auto s2 = Session::Create(SaveModel(*other, "other.onnx"), Cpu());
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ(CacheState(**s2), "miss");
}

// Round trip of graphs the fuzzer generates (every layout-sensitive op, fused
// and unfused): the cached plan must compute exactly what the fresh one does.
TEST_F(PlanCacheTest, GeneratedGraphsRoundTripBitForBit) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    auto m = verify::GenerateGraph(seed);
    ASSERT_TRUE(m.ok()) << seed;
    auto feeds = verify::GenerateFeeds(*m, seed);
    ASSERT_TRUE(feeds.ok());
    const std::string path = SaveModel(*m, "g" + std::to_string(seed) + ".onnx");
    auto cold = Session::Create(path, Cpu());
    ASSERT_TRUE(cold.ok()) << seed << ": " << cold.status().ToString();
    auto warm = Session::Create(path, Cpu());
    ASSERT_TRUE(warm.ok()) << seed << ": " << warm.status().ToString();
    ASSERT_EQ(CacheState(**warm), "hit") << seed;
    auto a = (*cold)->Run(*feeds), b = (*warm)->Run(*feeds);
    ASSERT_TRUE(a.ok() && b.ok()) << seed;
    ExpectBitIdentical(*a, *b);
    ++checked;
  }
  EXPECT_EQ(checked, 24);
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
}

// Flips one byte of the entry, truncates it, or replaces it with another
// file: each is detected once, the session is built fresh and the entry
// rewritten (the next session hits again).
TEST_F(PlanCacheTest, CorruptedTruncatedAndForeignEntriesAreRebuilt) {
  auto model = examples::BuildSeedModel();
  ASSERT_TRUE(model.ok());
  const std::string path = SaveModel(*model, "seed.onnx");
  ASSERT_TRUE(Session::Create(path, Cpu()).ok());
  ASSERT_EQ(Entries().size(), 1u);
  const fs::path entry = Entries()[0];
  const std::map<std::string, Tensor> feeds = {{examples::kSeedInputName, SeedInput()}};
  auto expected = (*Session::Create(path, Cpu()))->Run(feeds);
  ASSERT_TRUE(expected.ok());

  auto damage = [&](const std::string& how) {
    std::string bytes;
    {
      std::ifstream in(entry, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    if (how == "flip") bytes[bytes.size() / 2] ^= 0x5a;
    if (how == "truncate") bytes.resize(bytes.size() / 3);
    if (how == "foreign") bytes = "not a kiln plan at all, just some text that is long enough to hold a header......................................................................";
    if (how == "empty") bytes.clear();
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
  };
  for (const char* how : {"flip", "truncate", "foreign", "empty"}) {
    warnings_.clear();
    damage(how);
    auto s = Session::Create(path, Cpu());
    ASSERT_TRUE(s.ok()) << how << ": " << s.status().ToString();
    EXPECT_EQ(CacheState(**s), "miss") << how;
    ASSERT_EQ(warnings_.size(), 1u) << how;
    EXPECT_NE(warnings_[0].find(entry.string()), std::string::npos) << warnings_[0];
    auto out = (*s)->Run(feeds);
    ASSERT_TRUE(out.ok());
    ExpectBitIdentical(*expected, *out);
    auto again = Session::Create(path, Cpu());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(CacheState(**again), "hit") << how << ": the entry was rewritten";
  }
}

TEST_F(PlanCacheTest, UnusableFolderIsOneWarningAndNoCache) {
  auto model = examples::BuildSeedModel();
  ASSERT_TRUE(model.ok());
  const std::string path = SaveModel(*model, "seed.onnx");
  // A path under a regular file cannot be created.
  std::ofstream(root_ / "file") << "x";
  SessionOptions o = Cpu();
  o.cache_dir = (root_ / "file" / "cache").string();
  for (int i = 0; i < 3; ++i) {
    auto s = Session::Create(path, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(CacheState(**s), "off");
  }
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("cannot be created"), std::string::npos) << warnings_[0];
  // --no-cache: nothing written, nothing said.
  warnings_.clear();
  o = Cpu();
  o.use_cache = false;
  auto s = Session::Create(path, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(CacheState(**s), "off");
  EXPECT_TRUE(Entries().empty());
  EXPECT_TRUE(warnings_.empty());
}

// A folder that exists but takes no new files (read-only, or full): the
// session runs, one warning says the entry was not written, and entries
// already there are still read.
TEST_F(PlanCacheTest, UnwritableFolderRunsWithOneWarning) {
  auto model = examples::BuildSeedModel();
  ASSERT_TRUE(model.ok());
  const std::string path = SaveModel(*model, "seed.onnx");
  ASSERT_TRUE(Session::Create(path, Cpu()).ok());  // one entry, written while writable
  SessionOptions o = Cpu();
  if (geteuid() == 0) {
    // Root writes anywhere permissions say no; /proc/self takes no files.
    o.cache_dir = "/proc/self";
  } else {
    fs::permissions(root_ / "cache", fs::perms::owner_read | fs::perms::owner_exec);
  }
  for (int i = 0; i < 2; ++i) {
    auto s = Session::Create(path, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(CacheState(**s), geteuid() == 0 ? "miss" : "hit");
  }
  if (geteuid() == 0) {
    ASSERT_EQ(warnings_.size(), 1u);
    EXPECT_NE(warnings_[0].find("cannot write plan cache entry"), std::string::npos) << warnings_[0];
  }
  // A model the folder has no entry for: written nowhere, one warning.
  examples::SeedOptions so;
  so.weight_seed = 9;
  auto other = examples::BuildSeedModel(so);
  ASSERT_TRUE(other.ok());
  warnings_.clear();
  auto s = Session::Create(SaveModel(*other, "other.onnx"), o);
  ASSERT_TRUE(s.ok());
  EXPECT_LE(warnings_.size(), 1u);
}

TEST_F(PlanCacheTest, NoHomeNoXdgNeverWritesToTheWorkingFolder) {
  auto model = examples::BuildSeedModel();
  ASSERT_TRUE(model.ok());
  const std::string path = SaveModel(*model, "seed.onnx");
  // Unset every source of a folder; relative values must be ignored too.
  struct Env {
    const char* name;
    std::string saved;
    bool had;
  };
  std::vector<Env> env = {{"HOME", "", false}, {"XDG_CACHE_HOME", "", false}, {"KILN_CACHE_DIR", "", false}};
  for (Env& e : env) {
    if (const char* v = std::getenv(e.name)) { e.saved = v; e.had = true; }
  }
  setenv("HOME", "", 1);
  setenv("XDG_CACHE_HOME", "relative/dir", 1);
  setenv("KILN_CACHE_DIR", "", 1);
  const fs::path cwd = fs::current_path();
  fs::create_directories(root_ / "cwd");
  fs::current_path(root_ / "cwd");
  SessionOptions o = Cpu();
  o.cache_dir.clear();
  auto s = Session::Create(path, o);
  fs::current_path(cwd);
  for (const Env& e : env) {
    if (e.had) setenv(e.name, e.saved.c_str(), 1);
    else unsetenv(e.name);
  }
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(CacheState(**s), "off");
  EXPECT_TRUE(fs::is_empty(root_ / "cwd"));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("no plan cache folder"), std::string::npos) << warnings_[0];
}

TEST_F(PlanCacheTest, BoundEvictsLeastRecentlyUsed) {
  std::vector<std::string> paths;
  for (uint64_t k = 0; k < 3; ++k) {
    examples::SeedOptions so;
    so.weight_seed = 100 + k;
    auto m = examples::BuildSeedModel(so);
    ASSERT_TRUE(m.ok());
    paths.push_back(SaveModel(*m, "m" + std::to_string(k) + ".onnx"));
  }
  SessionOptions o = Cpu();
  ASSERT_TRUE(Session::Create(paths[0], o).ok());
  ASSERT_EQ(Entries().size(), 1u);
  const uint64_t one = fs::file_size(Entries()[0]);
  // Room for two entries: the third evicts the least recently used.
  o.cache_max_bytes = 2 * one + one / 2;
  ASSERT_TRUE(Session::Create(paths[1], o).ok());
  // Make entry 0 the most recent use, then add entry 2: entry 1 goes.
  ::sleep(1);  // file times have a coarse resolution on some file systems
  auto hit = Session::Create(paths[0], o);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(CacheState(**hit), "hit");
  ASSERT_TRUE(Session::Create(paths[2], o).ok());
  EXPECT_EQ(Entries().size(), 2u);
  auto s0 = Session::Create(paths[0], o);
  auto s1 = Session::Create(paths[1], o);
  ASSERT_TRUE(s0.ok() && s1.ok());
  EXPECT_EQ(CacheState(**s0), "hit");
  EXPECT_EQ(CacheState(**s1), "miss");
  // An entry larger than the whole bound is not written, with a warning.
  warnings_.clear();
  o.cache_max_bytes = 1000;
  auto big = Session::Create(paths[2], o);
  ASSERT_TRUE(big.ok());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("larger than the cache bound"), std::string::npos) << warnings_[0];
}

// ONNX names are bytes, the entry's metadata is JSON (UTF-8): a model with a
// non-UTF-8 name runs uncached with one warning (the store used to throw
// and terminate the process; found by loader_fuzz).
TEST_F(PlanCacheTest, NonUtf8NamesRunUncached) {
  auto model = examples::BuildSeedModel();
  ASSERT_TRUE(model.ok());
  ir::Model m = *model;
  const std::string old_name = m.graph.initializers.begin()->first, new_name = old_name + "\xff1";
  m.graph.initializers[new_name] = m.graph.initializers.at(old_name);
  m.graph.initializers.erase(old_name);
  for (ir::Node& n : m.graph.nodes)
    for (std::string& in : n.inputs)
      if (in == old_name) in = new_name;
  const std::string path = SaveModel(m, "bytes.onnx");
  for (int i = 0; i < 2; ++i) {
    auto s = Session::Create(path, Cpu());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(CacheState(**s), "miss");
  }
  EXPECT_TRUE(Entries().empty());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("UTF-8"), std::string::npos) << warnings_[0];
}

// External data is part of the key: change the weights file, keep the
// .onnx, and the entry must not be used.
TEST_F(PlanCacheTest, ChangedExternalDataIsAMiss) {
  auto model = examples::BuildSeedModel();
  ASSERT_TRUE(model.ok());
  // Write the .onnx with every initializer in weights.bin by hand: the
  // exporter keeps tensors inline.
  ir::Model m = *model;
  std::string blob;
  struct Ext {
    std::string name;
    size_t offset, length;
  };
  std::vector<Ext> ext;
  for (const auto& [name, t] : m.graph.initializers) {
    const Tensor c = t.Contiguous();
    ext.push_back({name, blob.size(), c.nbytes()});
    blob.append(static_cast<const char*>(c.raw()), c.nbytes());
  }
  auto bytes = onnx_io::SerializeModel(m);
  ASSERT_TRUE(bytes.ok());
  // Re-encode through the ONNX proto: mark each initializer external.
  const std::string path = (root_ / "ext.onnx").string();
  {
    onnx::ModelProto mp;
    ASSERT_TRUE(mp.ParseFromString(*bytes));
    for (auto& tp : *mp.mutable_graph()->mutable_initializer()) {
      for (const Ext& e : ext) {
        if (e.name != tp.name()) continue;
        tp.clear_raw_data();
        tp.clear_float_data();
        tp.set_data_location(onnx::TensorProto::EXTERNAL);
        auto add = [&](const std::string& k, const std::string& v) {
          auto* kv = tp.add_external_data();
          kv->set_key(k);
          kv->set_value(v);
        };
        add("location", "weights.bin");
        add("offset", std::to_string(e.offset));
        add("length", std::to_string(e.length));
      }
    }
    std::ofstream(path, std::ios::binary) << mp.SerializeAsString();
  }
  std::ofstream(root_ / "weights.bin", std::ios::binary) << blob;
  const std::map<std::string, Tensor> feeds = {{examples::kSeedInputName, SeedInput()}};
  auto cold = Session::Create(path, Cpu());
  ASSERT_TRUE(cold.ok()) << cold.status().ToString();
  auto warm = Session::Create(path, Cpu());
  ASSERT_TRUE(warm.ok());
  EXPECT_EQ(CacheState(**warm), "hit");
  // New weights, same .onnx bytes.
  // Only the convolution weights (rank 4): the Resize scales must stay 2.
  for (const Ext& e : ext)
    if (m.graph.initializers.at(e.name).rank() == 4)
      for (size_t i = e.offset; i < e.offset + e.length; ++i) blob[i] = static_cast<char>(blob[i] ^ 0x01);
  std::ofstream(root_ / "weights.bin", std::ios::binary | std::ios::trunc) << blob;
  auto changed = Session::Create(path, Cpu());
  ASSERT_TRUE(changed.ok());
  EXPECT_EQ(CacheState(**changed), "miss");
  auto a = (*warm)->Run(feeds), b = (*changed)->Run(feeds);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->at(0).shape(), b->at(0).shape());
  EXPECT_NE(std::memcmp(a->at(0).Contiguous().raw(), b->at(0).Contiguous().raw(), a->at(0).nbytes()), 0)
      << "the changed weights were used";
  // The reference on the changed files agrees with the fresh session.
  SessionOptions ref;
  auto r = Session::Create(path, ref);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(warnings_.size(), 1u);
}

}  // namespace
}  // namespace kiln
