#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "kiln/tensor.h"

#include "support/strided_copy.h"
#include "support/check.h"
#include "support/dtype_dispatch.h"

namespace kiln {

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kInt32: case DType::kUint32: return 4;
    case DType::kFloat64: case DType::kInt64: case DType::kUint64: return 8;
    case DType::kFloat16: case DType::kBFloat16: case DType::kInt16: case DType::kUint16: return 2;
    case DType::kInt8: case DType::kUint8: case DType::kBool: return 1;
    case DType::kString: return sizeof(std::string);
    case DType::kUndefined: return 0;
  }
  return 0;
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUint8: return "uint8";
    case DType::kUint16: return "uint16";
    case DType::kUint32: return "uint32";
    case DType::kUint64: return "uint64";
    case DType::kBool: return "bool";
    case DType::kString: return "string";
    case DType::kUndefined: return "undefined";
  }
  return "unknown";
}

bool DTypeIsFloat(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16 || t == DType::kBFloat16;
}
bool DTypeIsSignedInt(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
bool DTypeIsUnsignedInt(DType t) {
  return t == DType::kUint8 || t == DType::kUint16 || t == DType::kUint32 || t == DType::kUint64;
}
bool DTypeIsKnown(int v) { return (v >= 1 && v <= 13) || v == 16; }

Result<int64_t> CheckedElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument("shape " + ShapeToString(shape) + " has a negative dimension");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return OutOfRange("element count of shape " + ShapeToString(shape) + " overflows int64");
    n *= d;
  }
  return n;
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

// Buffers of a few MiB and up (weights, model files, large activations) ask
// for transparent huge pages: first-touch page faults dominate loading a
// 100 MB model on virtual machines, and 2 MiB pages take 512x fewer. Where
// THP is off the advice is ignored.
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeThreshold = 4 * kHugePage;

}  // namespace

Storage::Storage(size_t bytes, bool zero_fill) : bytes_(bytes) {
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  if (rounded >= kHugeThreshold) {
    rounded = (rounded + kHugePage - 1) / kHugePage * kHugePage;
    data_ = std::aligned_alloc(kHugePage, rounded);
    if (data_) madvise(data_, rounded, MADV_HUGEPAGE);
  } else {
    data_ = std::aligned_alloc(64, rounded);
  }
  KILN_CHECK(data_ != nullptr);
  if (zero_fill) std::memset(data_, 0, rounded);
}
Storage::Storage(std::vector<std::string> strings) : bytes_(strings.size() * sizeof(std::string)), strings_(std::move(strings)) {}
Storage::Storage(void* data, size_t bytes, std::function<void(void*)> release)
    : data_(data), bytes_(bytes), release_(std::move(release)) {}
Storage::~Storage() {
  if (release_) release_(data_);
  else std::free(data_);
}

Tensor Tensor::Wrap(DType dtype, const Shape& shape, std::shared_ptr<Storage> storage) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.strides_ = ContiguousStrides(shape);
  t.storage_ = std::move(storage);
  KILN_CHECK(static_cast<size_t>(t.numel()) * DTypeSize(dtype) <= t.storage_->bytes());
  return t;
}

std::vector<int64_t> ContiguousStrides(const Shape& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    // Zero dims count as 1, so an empty tensor's other dims may multiply
    // past int64 (CheckedElementCount bounds only non-empty shapes): its
    // strides are never used to address anything; saturate them.
    if (__builtin_mul_overflow(acc, shape[i] == 0 ? 1 : shape[i], &acc)) acc = std::numeric_limits<int64_t>::max();
  }
  return s;
}

// Tensors above this size are refused before any allocation is attempted
// (256 GiB), so an absurd shape from a model is an error, not an OOM kill.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 38;

namespace {

Result<Tensor> AllocateImpl(DType dtype, const Shape& shape, bool zero_fill) {
  if (dtype == DType::kUndefined) return InvalidArgument("cannot allocate a tensor of undefined dtype");
  KILN_ASSIGN_OR_RETURN(int64_t n, CheckedElementCount(shape));
  if (static_cast<uint64_t>(n) > kMaxTensorBytes / DTypeSize(dtype))
    return ResourceExhausted("tensor " + std::string(DTypeName(dtype)) + ShapeToString(shape) + " is too large to allocate");
  if (dtype == DType::kString)
    return Tensor::Wrap(dtype, shape, std::make_shared<Storage>(std::vector<std::string>(static_cast<size_t>(n))));
  return Tensor::Wrap(dtype, shape, std::make_shared<Storage>(static_cast<size_t>(n) * DTypeSize(dtype), zero_fill));
}

}  // namespace

Result<Tensor> Tensor::Allocate(DType dtype, const Shape& shape) { return AllocateImpl(dtype, shape, true); }
Result<Tensor> Tensor::AllocateForOverwrite(DType dtype, const Shape& shape) { return AllocateImpl(dtype, shape, false); }

Tensor Tensor::Zeros(DType dtype, const Shape& shape) {
  auto r = Allocate(dtype, shape);
  KILN_CHECK(r.ok());
  return std::move(r).value();
}

Tensor Tensor::Scalar(float v) { return FromVector<float>(DType::kFloat32, {}, {v}); }
Tensor Tensor::ScalarInt64(int64_t v) { return FromVector<int64_t>(DType::kInt64, {}, {v}); }

int64_t Tensor::numel() const {
  if (!defined()) return 0;
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

bool Tensor::is_contiguous() const {
  // An empty tensor is trivially contiguous (checked first: its other dims
  // may multiply past int64).
  for (int64_t d : shape_)
    if (d == 0) return true;
  int64_t expect = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expect) return false;
    expect *= shape_[i];
  }
  return true;
}

void* Tensor::raw() const {
  if (!storage_) return nullptr;
  if (dtype_ == DType::kString) return storage_->strings().data() + offset_;
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(DTypeSize(dtype_));
}

namespace {
// Visits every element of a strided tensor in row-major order: f(linear, elem_offset).
template <typename F>
void ForEachStrided(const Shape& shape, const std::vector<int64_t>& strides, F&& f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0) return;
  const size_t r = shape.size();
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    f(i, off);
    for (size_t k = r; k-- > 0;) {
      if (++idx[k] < shape[k]) { off += strides[k]; break; }
      off -= strides[k] * (shape[k] - 1);
      idx[k] = 0;
    }
  }
}
}  // namespace

Tensor Tensor::Contiguous() const {
  if (!defined() || is_contiguous()) return *this;
  return Clone();
}

Tensor Tensor::Clone() const {
  if (!defined()) return *this;
  // Every element is written below, so no zero fill (strings are constructed anyway).
  auto fresh = AllocateForOverwrite(dtype_, shape_);
  Tensor out = fresh.ok() ? std::move(fresh).value() : Zeros(dtype_, shape_);
  if (dtype_ == DType::kString) {
    const std::string* src = data<std::string>();
    std::string* dst = out.data<std::string>();
    ForEachStrided(shape_, strides_, [&](int64_t i, int64_t off) { dst[i] = src[off]; });
    return out;
  }
  if (is_contiguous()) std::memcpy(out.raw(), raw(), nbytes());
  else CopyToRowMajor(out.raw(), raw(), DTypeSize(dtype_), shape_, strides_);
  return out;
}

Tensor Tensor::Permuted(const std::vector<int64_t>& perm) const {
  KILN_CHECK(perm.size() == shape_.size());
  Tensor t = *this;
  for (size_t i = 0; i < perm.size(); ++i) {
    t.shape_[i] = shape_[static_cast<size_t>(perm[i])];
    t.strides_[i] = strides_[static_cast<size_t>(perm[i])];
  }
  return t;
}

Tensor Tensor::Reshaped(const Shape& shape) const {
  KILN_CHECK(is_contiguous());
  Tensor t = *this;
  t.shape_ = shape;
  t.strides_ = ContiguousStrides(shape);
  KILN_CHECK(t.numel() == numel());
  return t;
}

Tensor Tensor::View(const Shape& shape, const std::vector<int64_t>& strides, int64_t offset) const {
  Tensor t = *this;
  t.shape_ = shape;
  t.strides_ = strides;
  t.offset_ = offset;
  return t;
}

double Tensor::GetAsDouble(int64_t linear) const {
  int64_t off = 0, rem = linear;
  for (size_t k = shape_.size(); k-- > 0;) {
    off += (rem % shape_[k]) * strides_[k];
    rem /= shape_[k];
  }
  double out = 0;
  Status s = VisitNumeric(dtype_, [&](auto tag) {
    using T = decltype(tag);
    out = ToDouble(data<T>()[off]);
  });
  (void)s;
  return out;
}

void Tensor::SetFromDouble(int64_t linear, double v) {
  Status s = VisitNumeric(dtype_, [&](auto tag) {
    using T = decltype(tag);
    data<T>()[linear] = FromDouble<T>(v);
  });
  (void)s;
}

std::string Tensor::Describe() const { return std::string(DTypeName(dtype_)) + ShapeToString(shape_); }

}  // namespace kiln
