// Public tensor type. A Tensor is a dtype, a shape, element strides and an
// offset into shared storage, so transposes and slices are views; Contiguous()
// materializes a row-major copy when a view is not dense.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// Values equal ONNX TensorProto.DataType so conversion is a cast.
enum class DType : int {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBFloat16 = 16,
};

size_t DTypeSize(DType t);        // bytes per element; sizeof(std::string) for kString
const char* DTypeName(DType t);   // "float32", "int64", ...
bool DTypeIsFloat(DType t);       // float16/bfloat16/float32/float64
bool DTypeIsSignedInt(DType t);
bool DTypeIsUnsignedInt(DType t);
bool DTypeIsKnown(int onnx_type);

struct Float16 {
  uint16_t bits = 0;
  Float16() = default;
  explicit Float16(float f);
  explicit operator float() const;
  static Float16 FromBits(uint16_t b) { Float16 h; h.bits = b; return h; }
};
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f);  // round to nearest even
  explicit operator float() const;
  static BFloat16 FromBits(uint16_t b) { BFloat16 h; h.bits = b; return h; }
};

using Shape = std::vector<int64_t>;

// Product of dims, or an error when a dim is negative or the count overflows.
Result<int64_t> CheckedElementCount(const Shape& shape);
std::string ShapeToString(const Shape& shape);  // "[1,3,224,224]"

// Storage shared by views. Numeric data lives in a 64-byte aligned buffer;
// string tensors keep std::string objects.
class Storage {
 public:
  // 64-byte aligned; zero-filled unless `zero_fill` is false.
  explicit Storage(size_t bytes, bool zero_fill = true);
  explicit Storage(std::vector<std::string> strings);
  // Memory owned elsewhere (a session's buffer pool): `release` gets it back
  // when the last tensor using it is gone. Contents are not initialized.
  Storage(void* data, size_t bytes, std::function<void(void*)> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() { return data_; }
  size_t bytes() const { return bytes_; }
  std::vector<std::string>& strings() { return strings_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
  std::vector<std::string> strings_;
  std::function<void(void*)> release_;  // empty: data_ came from aligned_alloc
};

class Tensor {
 public:
  Tensor() = default;  // undefined: dtype kUndefined, no storage

  // Zero-filled contiguous tensor. Shapes come from models and users, so the
  // element count is checked: Allocate returns an error instead of aborting.
  static Result<Tensor> Allocate(DType dtype, const Shape& shape);
  // The same, contents NOT initialized: for code that writes every element
  // at once (loading weights). String tensors are always value-initialized.
  static Result<Tensor> AllocateForOverwrite(DType dtype, const Shape& shape);
  // For shapes already validated by the caller (KILN_CHECKs the count).
  static Tensor Zeros(DType dtype, const Shape& shape);
  template <typename T>
  static Tensor FromVector(DType dtype, const Shape& shape, const std::vector<T>& values);
  static Tensor Scalar(float v);
  static Tensor ScalarInt64(int64_t v);
  // A dense row-major tensor over existing storage (which must hold it).
  static Tensor Wrap(DType dtype, const Shape& shape, std::shared_ptr<Storage> storage);

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const std::vector<int64_t>& strides() const { return strides_; }  // in elements
  int64_t offset() const { return offset_; }                        // in elements
  int64_t dim(int i) const { return shape_[static_cast<size_t>(i)]; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype_); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Pointer to the first element (at offset). Linear indexing through it is
  // only valid when is_contiguous().
  void* raw() const;
  template <typename T>
  T* data() const { return static_cast<T*>(raw()); }

  // Dense row-major copy (or *this when already contiguous).
  Tensor Contiguous() const;
  // Deep copy, always new storage, always contiguous.
  Tensor Clone() const;
  // View with axes permuted: result dim i = this dim perm[i].
  Tensor Permuted(const std::vector<int64_t>& perm) const;
  // View of a contiguous tensor with another shape of the same element count.
  Tensor Reshaped(const Shape& shape) const;
  // General strided view over the same storage (used by Slice and layouts).
  Tensor View(const Shape& shape, const std::vector<int64_t>& strides, int64_t offset) const;

  // Element i of the row-major order, converted to double (any numeric dtype,
  // any strides). For tests, printing and the reference oracle.
  double GetAsDouble(int64_t linear_index) const;
  void SetFromDouble(int64_t linear_index, double v);  // contiguous only

  // Summary "float32[1,3,4,4]".
  std::string Describe() const;

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::vector<int64_t> strides_;
  int64_t offset_ = 0;
  std::shared_ptr<Storage> storage_;
};

std::vector<int64_t> ContiguousStrides(const Shape& shape);

template <typename T>
Tensor Tensor::FromVector(DType dtype, const Shape& shape, const std::vector<T>& values) {
  Tensor t = Zeros(dtype, shape);
  if constexpr (std::is_same_v<T, std::string>) {
    for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.numel()); ++i) t.data<std::string>()[i] = values[i];
  } else {
    T* p = t.data<T>();
    for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.numel()); ++i) p[i] = values[i];
  }
  return t;
}

}  // namespace kiln
