#include "runtime/plan_cache.h"

#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <oneapi/dnnl/dnnl.hpp>
#include <thread>
#include <vector>

#include "onnx/onnx_io.h"
#include "support/warn.h"

namespace kiln::runtime {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'P', 'L', 'A', 'N'};
// Bump when the entry layout or the meaning of a cached graph changes.
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kAlign = 64;
constexpr size_t kHeaderBytes = 128;  // the header's room at the file's start
constexpr const char* kSuffix = ".kplan";

struct Header {
  char magic[8];
  uint32_t format_version;
  uint32_t reserved;
  uint64_t file_size;
  uint64_t meta_offset, meta_size;
  uint64_t graph_offset, graph_size;
  uint64_t data_offset;  // tensors' offsets count from here
  uint64_t checksum;  // XXH3-64 of every byte after the header
};
static_assert(sizeof(Header) <= kHeaderBytes && kHeaderBytes % kAlign == 0);

size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

std::string Hex128(XXH128_hash_t h) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

std::string Hex64(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The GNU build-id of the binary (or shared library) holding this code: it
// changes with every build, so a cached graph never outlives the passes that
// made it. Empty when the linker wrote none.
std::string BuildId() {
  static const std::string id = [] {
    struct Search {
      uintptr_t addr;
      std::string id;
    } search{reinterpret_cast<uintptr_t>(&BuildId), ""};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
          auto* s = static_cast<Search*>(data);
          bool mine = false;
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const auto& ph = info->dlpi_phdr[i];
            const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
            if (ph.p_type == PT_LOAD && s->addr >= lo && s->addr < lo + ph.p_memsz) mine = true;
          }
          if (!mine) return 0;
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const auto& ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_NOTE) continue;
            const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
            const char* end = p + ph.p_memsz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
              const auto* nh = reinterpret_cast<const ElfW(Nhdr)*>(p);
              const char* name = p + sizeof(ElfW(Nhdr));
              const char* desc = name + ((nh->n_namesz + 3) & ~3u);
              if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                for (uint32_t k = 0; k < nh->n_descsz; ++k) {
                  char b[3];
                  std::snprintf(b, sizeof b, "%02x", static_cast<unsigned char>(desc[k]));
                  s->id += b;
                }
                return 1;
              }
              p = desc + ((nh->n_descsz + 3) & ~3u);
            }
          }
          return 1;
        },
        &search);
    // Without a build-id, the compile time of this file is the best proxy.
    return search.id.empty() ? std::string("built ") + __DATE__ " " __TIME__ : search.id;
  }();
  return id;
}

std::string CpuFeatures() {
  std::string f = "isa" + std::to_string(static_cast<int>(dnnl::get_effective_cpu_isa()));
  __builtin_cpu_init();
#define KILN_FEATURE(name) \
  if (__builtin_cpu_supports(name)) f += std::string(" ") + name;
  KILN_FEATURE("sse4.2") KILN_FEATURE("avx") KILN_FEATURE("avx2") KILN_FEATURE("fma") KILN_FEATURE("f16c")
  KILN_FEATURE("avx512f") KILN_FEATURE("avx512bw") KILN_FEATURE("avx512vl") KILN_FEATURE("avx512dq")
  KILN_FEATURE("avx512vnni") KILN_FEATURE("avx512bf16")
#undef KILN_FEATURE
  return f;
}

// A directory from the environment: unset, empty and relative values are
// ignored (the XDG rule), so an unset HOME never means the working folder.
std::optional<fs::path> EnvDir(const char* var) {
  const char* v = std::getenv(var);
  if (!v || !*v) return std::nullopt;
  fs::path p(v);
  if (!p.is_absolute()) return std::nullopt;
  return p;
}

Result<std::pair<uint64_t, uint64_t>> HashFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return IoError("cannot open '" + p.string() + "'");
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  std::vector<char> buf(size_t{1} << 20);
  uint64_t size = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = in.gcount();
    if (got <= 0) break;
    XXH3_64bits_update(st, buf.data(), static_cast<size_t>(got));
    size += static_cast<uint64_t>(got);
  }
  const uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  if (in.bad()) return IoError("cannot read '" + p.string() + "'");
  return std::make_pair(size, h);
}

// The entry's files in `dir`, oldest use first.
std::vector<std::pair<fs::file_time_type, fs::path>> Entries(const std::string& dir, uint64_t* total) {
  std::vector<std::pair<fs::file_time_type, fs::path>> out;
  *total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != kSuffix) continue;
    std::error_code e2;
    const auto size = it->file_size(e2);
    const auto time = it->last_write_time(e2);
    if (e2) continue;
    *total += size;
    out.emplace_back(time, it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Evict(const PlanCacheConfig& cache, const fs::path& keep) {
  uint64_t total = 0;
  auto entries = Entries(cache.dir, &total);
  for (const auto& [time, path] : entries) {
    if (total <= cache.max_bytes) break;
    if (path == keep) continue;
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (!ec && fs::remove(path, ec)) total -= size;
  }
}

// Appends sections, each 64-byte aligned, to a temporary file beside `path`,
// hashing them; Finish writes the header (once the checksum is known) and
// renames the file to `path`.
class EntryWriter {
 public:
  explicit EntryWriter(const fs::path& path) : path_(path) {
    static std::atomic<uint64_t> counter{0};
    tmp_ = path.parent_path() /
           ("." + path.filename().string() + "." + std::to_string(getpid()) + "." +
            std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." +
            std::to_string(counter++) + ".tmp");
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) error_ = errno;
    XXH3_64bits_reset(state_);
  }
  ~EntryWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!done_) ::unlink(tmp_.c_str());
    XXH3_freeState(state_);
  }
  // Appends bytes (hashed) at the current end, padded to the alignment.
  uint64_t Append(const void* data, size_t n) {
    const uint64_t at = offset_;
    if (n) Write(data, n);
    static const char zeros[kAlign] = {};
    const size_t pad = AlignUp(offset_) - offset_;
    if (pad) Write(zeros, pad);
    return at;
  }
  // Header at offset 0, then the rename. Returns errno, 0 on success.
  int Finish(Header h) {
    h.file_size = offset_;
    h.checksum = XXH3_64bits_digest(state_);
    if (!error_ && ::pwrite(fd_, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) error_ = errno ? errno : EIO;
    if (!error_ && ::close(fd_) != 0) error_ = errno;
    fd_ = -1;
    if (!error_ && ::rename(tmp_.c_str(), path_.c_str()) != 0) error_ = errno;
    done_ = error_ == 0;
    return error_;
  }
  int error() const { return error_; }
  void Skip(size_t n) { offset_ += n; }  // the header's room (not hashed)

 private:
  void Write(const void* data, size_t n) {
    if (error_) { offset_ += n; return; }
    if (offset_ >= kHeaderBytes) XXH3_64bits_update(state_, data, n);
    const char* p = static_cast<const char*>(data);
    size_t left = n;
    uint64_t at = offset_;
    while (left > 0) {
      const ssize_t w = ::pwrite(fd_, p, left, static_cast<off_t>(at));
      if (w <= 0) { error_ = w < 0 ? errno : ENOSPC; break; }
      p += w;
      left -= static_cast<size_t>(w);
      at += static_cast<uint64_t>(w);
    }
    offset_ += n;
  }

  fs::path path_, tmp_;
  int fd_ = -1;
  int error_ = 0;
  bool done_ = false;
  uint64_t offset_ = 0;
  XXH3_state_t* state_ = XXH3_createState();
};

}  // namespace

std::optional<PlanCacheConfig> ResolvePlanCache(const SessionOptions& options) {
  if (!options.use_cache) return std::nullopt;
  fs::path dir;
  if (!options.cache_dir.empty()) dir = options.cache_dir;
  else if (auto d = EnvDir("KILN_CACHE_DIR")) dir = *d;
  else if (auto x = EnvDir("XDG_CACHE_HOME")) dir = *x / "kiln";
  else if (auto h = EnvDir("HOME")) dir = *h / ".cache" / "kiln";
  else {
    WarnOnce("plan-cache:no-dir",
             "no plan cache folder (HOME, XDG_CACHE_HOME and KILN_CACHE_DIR unset or not absolute): sessions are not cached");
    return std::nullopt;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    WarnOnce("plan-cache:dir:" + dir.string(), "plan cache folder '" + dir.string() + "' cannot be created (" +
                                                   (ec ? ec.message() : std::string("not a folder")) +
                                                   "): sessions are not cached");
    return std::nullopt;
  }
  PlanCacheConfig c;
  c.dir = fs::absolute(dir, ec).string();
  c.max_bytes = options.cache_max_bytes;
  return c;
}

std::string PlanCacheKey(const void* model_bytes, size_t size, const SessionOptions& options) {
  const XXH128_hash_t model = XXH3_128bits(model_bytes, size);
  // Every option that changes the cached graph. Threads and the memory
  // limit do not: they act when the executor is built from it, as do the
  // KILN_CPU_* kernel switches. The KILN_FUSE_* switches turn passes off,
  // so an A/B run with one set must not be served the other's graph.
  std::string material = "kiln plan cache\nformat " + std::to_string(kFormatVersion) + "\nkiln " KILN_VERSION_STRING
                         "\nbuild " + BuildId() + "\ncpu " + CpuFeatures() + "\nprovider " + options.provider +
                         "\nopt-level " + options.opt_level + "\nmodel " + Hex128(model) + " " + std::to_string(size) + "\n";
  for (const char* var : passes::kPassSwitches)
    if (const char* v = std::getenv(var)) material += std::string(var) + "=" + v + "\n";
  return Hex128(XXH3_128bits(material.data(), material.size()));
}

std::string PlanCachePath(const PlanCacheConfig& cache, const std::string& key) {
  return (fs::path(cache.dir) / (key + kSuffix)).string();
}

std::optional<CachedPlan> LoadPlan(const PlanCacheConfig& cache, const std::string& key, const std::string& model_dir) {
  const std::string path = PlanCachePath(cache, key);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // the ordinary miss
  struct stat st;
  std::shared_ptr<Storage> buf;
  bool read_ok = ::fstat(fd, &st) == 0 && st.st_size >= static_cast<off_t>(kHeaderBytes);
  if (read_ok) {
    buf = std::make_shared<Storage>(static_cast<size_t>(st.st_size), /*zero_fill=*/false);
    size_t got = 0;
    while (got < buf->bytes()) {
      const ssize_t r = ::read(fd, static_cast<char*>(buf->data()) + got, buf->bytes() - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    read_ok = got == buf->bytes();
  }
  ::close(fd);
  auto bad = [&](const std::string& why) -> std::optional<CachedPlan> {
    WarnOnce("plan-cache:bad:" + path + ":" + why, "plan cache entry '" + path + "' " + why + ": rebuilding it");
    return std::nullopt;
  };
  if (!read_ok) return bad("is truncated or unreadable");
  const char* base = static_cast<const char*>(buf->data());
  Header h;
  std::memcpy(&h, base, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return bad("is not a kiln plan");
  if (h.format_version != kFormatVersion)
    return bad("has format " + std::to_string(h.format_version) + ", this kiln writes " + std::to_string(kFormatVersion));
  if (h.file_size != buf->bytes()) return bad("is truncated (" + std::to_string(buf->bytes()) + " of " + std::to_string(h.file_size) + " bytes)");
  if (XXH3_64bits(base + kHeaderBytes, buf->bytes() - kHeaderBytes) != h.checksum) return bad("is corrupted (checksum mismatch)");
  auto inside = [&](uint64_t off, uint64_t n) { return off <= buf->bytes() && n <= buf->bytes() - off; };
  if (!inside(h.meta_offset, h.meta_size) || !inside(h.graph_offset, h.graph_size) || h.data_offset > buf->bytes())
    return bad("has sections out of bounds");

  CachedPlan plan;
  json meta;
  try {
    meta = json::parse(base + h.meta_offset, base + h.meta_offset + h.meta_size);
    if (meta.at("key").get<std::string>() != key) return bad("belongs to another key");
    for (const auto& n : meta.at("notes")) plan.report.notes.push_back(n.get<std::string>());
    // External data: the key covers the .onnx file only, so each data file
    // must still hold what the entry was built from.
    for (const auto& e : meta.at("external")) {
      const std::string rel = e.at("path").get<std::string>();
      auto hf = HashFile(fs::path(model_dir) / rel);
      if (!hf.ok() || hf->first != e.at("size").get<uint64_t>() || Hex64(hf->second) != e.at("hash").get<std::string>()) {
        WarnOnce("plan-cache:external:" + path + ":" + rel,
                 "plan cache entry '" + path + "' was built from other contents of external data '" + rel + "': rebuilding it");
        return std::nullopt;
      }
      plan.model.external_files.push_back(rel);
    }
  } catch (const std::exception& e) {
    return bad(std::string("has unreadable metadata (") + e.what() + ")");
  }
  auto m = onnx_io::LoadModelBytes(base + h.graph_offset, h.graph_size, model_dir);
  if (!m.ok()) return bad("holds a graph that does not load (" + m.status().ToString() + ")");
  std::vector<std::string> external = std::move(plan.model.external_files);
  plan.model = std::move(m).value();
  plan.model.external_files = std::move(external);
  try {
    for (const auto& t : meta.at("tensors")) {
      const std::string name = t.at("name").get<std::string>();
      const int dtype = t.at("dtype").get<int>();
      const Shape shape = t.at("shape").get<Shape>();
      const uint64_t rel = t.at("offset").get<uint64_t>(), n = t.at("bytes").get<uint64_t>();
      if (rel > buf->bytes()) return bad("has a tensor record out of bounds ('" + name + "')");
      const uint64_t off = h.data_offset + rel;
      if (!DTypeIsKnown(dtype) || dtype == static_cast<int>(DType::kString)) return bad("has a tensor of bad dtype");
      auto count = CheckedElementCount(shape);
      if (!count.ok() || static_cast<uint64_t>(*count) * DTypeSize(static_cast<DType>(dtype)) != n || !inside(off, n) ||
          off % kAlign != 0)
        return bad("has a tensor record out of bounds ('" + name + "')");
      // A view of the entry's buffer: the buffer lives while any weight does.
      auto view = std::make_shared<Storage>(const_cast<char*>(base) + off, static_cast<size_t>(n), [buf](void*) {});
      plan.model.graph.initializers[name] = Tensor::Wrap(static_cast<DType>(dtype), shape, std::move(view));
    }
  } catch (const std::exception& e) {
    return bad(std::string("has unreadable tensor records (") + e.what() + ")");
  }
  // Mark the entry as recently used for eviction (a read-only folder just
  // keeps its old time).
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  return plan;
}

void StorePlan(const PlanCacheConfig& cache, const std::string& key, const ir::Model& optimized,
               const passes::PassReport& report, const std::string& model_dir) {
  const std::string path = PlanCachePath(cache, key);
  auto warn = [&](const std::string& why) {
    WarnOnce("plan-cache:store:" + cache.dir + ":" + why,
             "cannot write plan cache entry in '" + cache.dir + "' (" + why + "): the session runs without caching it");
  };
  // The main graph's weights go to the data section; string tensors (rare,
  // small) stay in the graph.
  ir::Model graph_only = optimized;
  std::vector<std::pair<std::string, Tensor>> weights;
  for (auto it = graph_only.graph.initializers.begin(); it != graph_only.graph.initializers.end();) {
    if (it->second.dtype() == DType::kString) { ++it; continue; }
    weights.emplace_back(it->first, it->second.Contiguous());
    it = graph_only.graph.initializers.erase(it);
  }
  auto bytes = onnx_io::SerializeModel(graph_only);
  if (!bytes.ok()) return warn(bytes.status().ToString());

  json meta;
  meta["key"] = key;
  meta["kiln"] = KILN_VERSION_STRING;
  meta["notes"] = report.notes;
  meta["external"] = json::array();
  for (const std::string& rel : optimized.external_files) {
    auto hf = HashFile(fs::path(model_dir) / rel);
    if (!hf.ok()) return warn(hf.status().ToString());
    meta["external"].push_back({{"path", rel}, {"size", hf->first}, {"hash", Hex64(hf->second)}});
  }
  // Tensor offsets are relative to the data section, which starts after
  // the meta and graph sections (header.data_offset).
  uint64_t data_bytes = 0;
  meta["tensors"] = json::array();
  for (const auto& [name, t] : weights) {
    meta["tensors"].push_back({{"name", name}, {"dtype", static_cast<int>(t.dtype())}, {"shape", t.shape()},
                               {"offset", data_bytes}, {"bytes", t.nbytes()}});
    data_bytes += AlignUp(t.nbytes());
  }
  // ONNX names are bytes; JSON text must be UTF-8. A model whose names are
  // not is simply not cached (re-encoding them would break the lookup of
  // names when the plan is read back).
  std::string meta_text;
  try {
    meta_text = meta.dump();
  } catch (const json::exception&) {
    return warn("a value name or pass note is not valid UTF-8");
  }
  if (kHeaderBytes + AlignUp(meta_text.size()) + AlignUp(bytes->size()) + data_bytes > cache.max_bytes)
    return warn("the entry is larger than the cache bound of " + std::to_string(cache.max_bytes) + " bytes");

  EntryWriter w(path);
  if (w.error()) return warn(std::strerror(w.error()));
  w.Skip(kHeaderBytes);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.format_version = kFormatVersion;
  h.meta_size = meta_text.size();
  h.meta_offset = w.Append(meta_text.data(), meta_text.size());
  h.graph_size = bytes->size();
  h.graph_offset = w.Append(bytes->data(), bytes->size());
  h.data_offset = w.Append(nullptr, 0);
  for (const auto& [name, t] : weights) w.Append(t.raw(), t.nbytes());
  if (int err = w.Finish(h)) return warn(std::strerror(err));
  Evict(cache, path);
}

}  // namespace kiln::runtime
