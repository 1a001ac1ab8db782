// The entry points of kiln's libFuzzer targets (fuzz/*_fuzz.cc), in a header
// so tests/fuzz_regressions_test.cc replays saved reproducers through exactly
// the same code. Each takes arbitrary bytes; a Status error is a fine answer,
// a crash, a sanitizer report or a hang is a finding.
//
//   LoadAndRun:        bytes -> Session::CreateFromBytes on "reference" and
//                      "cpu" -> one Run on small generated inputs; on cpu
//                      also through the plan cache (a private folder per
//                      input): the cached session must load and agree.
//   ParseTensorFiles:  bytes -> npy::Parse, onnx_io::ParseTensorProto, and
//                      ReadDatumFile as a SequenceProto and an OptionalProto;
//                      whatever parses is touched element by element and
//                      written back (the writer must accept what the reader
//                      made of it).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/datum.h"
#include "kiln/session.h"
#include "kiln/tensor.h"
#include "onnx/onnx_io.h"
#include "support/npy.h"

namespace kiln::fuzz {

// A finding that is not a crash by itself (our own output rejected by our own
// reader): abort so libFuzzer saves the input.
[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "kiln fuzz: %s\n", what.c_str());
  std::abort();
}

// Deterministic per input: the same bytes give the same generated inputs.
class Rng {
 public:
  Rng(const uint8_t* data, size_t size) {
    for (size_t i = 0; i < size; ++i) state_ = (state_ ^ data[i]) * 1099511628211ull;
  }
  uint64_t Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 2685821657736338717ull;
  }

 private:
  uint64_t state_ = 14695981039346656037ull;
};

constexpr int64_t kMaxInputElements = 4096;  // all inputs of one run together
// Session::memory_limit: absurd models fail cleanly. 16 MiB, not more: the
// reference provider under ASan+UBSan takes ~1 us an element, and a legit
// Resize to 64 MiB of output already ran past libFuzzer's 10 s timeout.
constexpr uint64_t kMemoryLimit = 16ull << 20;

// Small inputs for a session: every non-optional tensor input, dynamic dims 1
// or 2, values small (so they also work as indices and counts). False when
// the model cannot be fed that way (a non-tensor input, a static shape over
// the cap): then there is no run.
inline bool MakeInputs(const Session& session, Rng& rng, std::map<std::string, Tensor>* out) {
  int64_t total = 0;
  for (const IoInfo& in : session.inputs()) {
    if (in.optional) continue;
    if (in.kind != "tensor" || !DTypeIsKnown(static_cast<int>(in.dtype)) || in.dtype == DType::kUndefined) return false;
    Shape shape = in.has_shape ? in.shape : Shape{2};
    int64_t n = 1;
    for (int64_t& d : shape) {
      if (d < 0) d = 1 + static_cast<int64_t>(rng.Next() % 2);
      if (d > kMaxInputElements) return false;
      n *= d;
      if (n > kMaxInputElements) return false;
    }
    total += n;
    if (total > kMaxInputElements) return false;
    auto t = Tensor::Allocate(in.dtype, shape);
    if (!t.ok()) return false;
    Tensor x = std::move(t).value();
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t r = rng.Next();
      if (in.dtype == DType::kString) {
        x.data<std::string>()[i] = std::string(1 + r % 3, static_cast<char>('a' + (r >> 8) % 26));
      } else if (DTypeIsFloat(in.dtype)) {
        x.SetFromDouble(i, static_cast<double>(static_cast<int64_t>(r % 33) - 16) / 8.0);
      } else if (DTypeIsSignedInt(in.dtype)) {
        x.SetFromDouble(i, static_cast<double>(static_cast<int64_t>(r % 5) - 1));  // -1..3
      } else {
        x.SetFromDouble(i, static_cast<double>(r % 4));  // bool: 0/1 after the cast below
      }
      if (in.dtype == DType::kBool) x.SetFromDouble(i, static_cast<double>(r & 1));
    }
    (*out)[in.name] = std::move(x);
  }
  return true;
}

// How far one provider got with an input (the regression test checks that
// the harness reaches Run on a known-good model).
enum class Outcome { kNotLoaded, kNotRun, kRunFailed, kRan };

// Bitwise equality of two runs' outputs (NaNs with the same bits agree).
inline bool SameOutputs(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].dtype() != b[i].dtype() || a[i].shape() != b[i].shape()) return false;
    if (!a[i].defined()) continue;
    const Tensor x = a[i].Contiguous(), y = b[i].Contiguous();
    if (x.dtype() == DType::kString) {
      for (int64_t k = 0; k < x.numel(); ++k)
        if (x.data<std::string>()[k] != y.data<std::string>()[k]) return false;
    } else if (x.nbytes() && std::memcmp(x.raw(), y.raw(), x.nbytes()) != 0) {
      return false;
    }
  }
  return true;
}

// A plan-cache folder of this input alone: made before, removed after, so a
// run depends on its bytes only (and ~/.cache is left alone).
class TempCacheDir {
 public:
  TempCacheDir() {
    char t[] = "/tmp/kiln_fuzz_cache_XXXXXX";
    if (mkdtemp(t)) path_ = t;
  }
  ~TempCacheDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `provider` "cpu" goes through the plan cache: the first session stores the
// optimized plan, a second one loads it; both run the same inputs, and when
// the first session is deterministic (two runs agree bit for bit) the cached
// one must agree with it too.
inline Outcome LoadAndRunOn(const uint8_t* data, size_t size, const char* provider) {
  SessionOptions opts;
  opts.provider = provider;
  opts.threads = 1;
  opts.memory_limit = kMemoryLimit;
  opts.use_cache = false;
  const bool cached = std::string(provider) == "cpu";
  TempCacheDir cache_dir;
  if (cached && !cache_dir.path().empty()) {
    opts.use_cache = true;
    opts.cache_dir = cache_dir.path();
  }
  auto session = Session::CreateFromBytes(data, size, opts);
  if (!session.ok()) return Outcome::kNotLoaded;
  Rng rng(data, size);
  std::map<std::string, Tensor> inputs;
  if (!MakeInputs(**session, rng, &inputs)) return Outcome::kNotRun;
  auto outs = (*session)->Run(inputs);
  if (!outs.ok()) return Outcome::kRunFailed;
  // Touch every output element so a wrong size or stride shows under ASan.
  double sum = 0;
  for (const Tensor& t : *outs) {
    if (!t.defined() || t.dtype() == DType::kString) continue;
    for (int64_t i = 0; i < t.numel(); ++i) sum += t.GetAsDouble(i);
  }
  volatile double sink = sum;
  (void)sink;
  if (opts.use_cache) {
    auto again = (*session)->Run(inputs);
    auto hit = Session::CreateFromBytes(data, size, opts);
    if (!hit.ok()) Fail("plan cache: the model loaded once, not from its cached plan: " + hit.status().ToString());
    auto hit_outs = (*hit)->Run(inputs);
    if (again.ok() && SameOutputs(*outs, *again)) {
      if (!hit_outs.ok()) Fail("plan cache: the cached session fails where the first ran: " + hit_outs.status().ToString());
      if (!SameOutputs(*outs, *hit_outs)) Fail("plan cache: the cached session computes other outputs");
    }
  }
  return Outcome::kRan;
}

inline int LoadAndRun(const uint8_t* data, size_t size) {
  LoadAndRunOn(data, size, "reference");
  LoadAndRunOn(data, size, "cpu");
  return 0;
}

// Reads every element (ASan checks the storage really holds them).
inline void Touch(const Tensor& t) {
  if (!t.defined()) return;
  if (t.dtype() == DType::kString) {
    size_t n = 0;
    const Tensor c = t.Contiguous();
    for (int64_t i = 0; i < c.numel(); ++i) n += c.data<std::string>()[i].size();
    volatile size_t sink = n;
    (void)sink;
    return;
  }
  double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) sum += t.GetAsDouble(i);
  volatile double sink = sum;
  (void)sink;
}

inline void CheckSame(const Tensor& a, const Tensor& b, const std::string& what) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    Fail(what + ": written " + a.Describe() + ", read back " + b.Describe());
}

// A file holding `bytes` that ReadDatumFile can open by path, in memory.
class MemFile {
 public:
  MemFile() {
    fd_ = memfd_create("kiln_fuzz", 0);
    if (fd_ < 0) Fail("memfd_create failed");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  const std::string& Write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || (size && pwrite(fd_, data, size, 0) != static_cast<ssize_t>(size)))
      Fail("writing the memfd failed");
    return path_;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

inline int ParseTensorFiles(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);

  if (auto t = npy::Parse(bytes, "fuzz"); t.ok()) {
    Touch(*t);
    if (auto s = npy::Serialize(*t); s.ok()) {
      auto back = npy::Parse(*s, "fuzz round trip");
      if (!back.ok()) Fail("npy: Serialize's output does not parse: " + back.status().ToString());
      CheckSame(*t, *back, "npy round trip");
    }
  }

  std::string name;
  if (auto t = onnx_io::ParseTensorProto(bytes, &name); t.ok()) {
    Touch(*t);
    if (auto s = onnx_io::SerializeTensorProto(*t, name); s.ok()) {
      auto back = onnx_io::ParseTensorProto(*s);
      if (!back.ok()) Fail("TensorProto: the serialized tensor does not parse: " + back.status().ToString());
      CheckSame(*t, *back, "TensorProto round trip");
    }
  }

  static MemFile file;
  const std::string& path = file.Write(data, size);
  for (auto kind : {ir::TypeInfo::Kind::kSequence, ir::TypeInfo::Kind::kOptional}) {
    auto d = onnx_io::ReadDatumFile(path, kind);
    if (!d.ok()) continue;
    if (d->is_tensor()) Touch(d->tensor());
    if (d->is_sequence())
      for (const Tensor& t : d->sequence()) Touch(t);
  }
  return 0;
}

}  // namespace kiln::fuzz
