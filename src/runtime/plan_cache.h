// The compiled-plan cache: the optimized graph of a (model, options) pair,
// stored on disk so that the next session of the same model skips parsing
// the ONNX file's weights and the pass pipeline.
//
// An entry is one file DIR/<key>.kplan:
//   header (64 bytes: magic, format version, file size, offsets, checksum)
//   meta   (JSON: key, kiln version, external files with their hashes,
//           pass notes, one record per initializer)
//   graph  (the optimized ModelProto with its main-graph initializers left out)
//   data   (each initializer's bytes, 64-byte aligned)
// The key hashes the model bytes, every option that changes the plan,
// kiln's build and the CPU's features; external data files are checked by
// content hash when an entry is read. Entries are written to a temporary
// file and renamed, so a reader never sees half of one, and checksummed, so
// a corrupted, truncated or foreign entry is detected, reported once and
// rebuilt. The folder is bounded: least recently used entries go first.
//
// Nothing here fails a session: every problem is one warning (WarnOnce)
// and a session without the cache.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "kiln/session.h"
#include "passes/pipeline.h"

namespace kiln::runtime {

struct PlanCacheConfig {
  std::string dir;           // absolute, exists
  uint64_t max_bytes = 0;    // total size of the entries kept
};

// The folder for `options`: options.cache_dir, else $KILN_CACHE_DIR, else
// $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln (empty or relative variables
// are ignored, so nothing is ever written to the working directory).
// nullopt when the cache is off, or unusable (one warning says why).
std::optional<PlanCacheConfig> ResolvePlanCache(const SessionOptions& options);

// Hex key of a model's bytes under `options`.
std::string PlanCacheKey(const void* model_bytes, size_t size, const SessionOptions& options);

struct CachedPlan {
  ir::Model model;  // optimized; initializers are views of the entry's data
  passes::PassReport report;
};

// The entry for `key`, or nullopt on a miss (or an entry found unusable,
// reported). `model_dir` resolves the external files the entry recorded.
std::optional<CachedPlan> LoadPlan(const PlanCacheConfig& cache, const std::string& key, const std::string& model_dir);

// Writes the entry for `key` (then evicts to the size bound). Failures are
// warnings.
void StorePlan(const PlanCacheConfig& cache, const std::string& key, const ir::Model& optimized,
               const passes::PassReport& report, const std::string& model_dir);

// The entry file of `key` (tests corrupt it).
std::string PlanCachePath(const PlanCacheConfig& cache, const std::string& key);

}  // namespace kiln::runtime
