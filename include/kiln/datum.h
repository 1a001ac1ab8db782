// A runtime value of an ONNX graph: a tensor, a sequence of tensors, or an
// empty optional. Most models only ever see tensors; sequences and optionals
// come from the Sequence*/Optional* ops and control flow.
#pragma once

#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

class Datum {
 public:
  enum class Kind { kEmpty, kTensor, kSequence, kNone };  // kNone: an optional with no value

  Datum() = default;
  Datum(Tensor t) : kind_(Kind::kTensor), tensor_(std::move(t)) {}  // NOLINT: implicit
  static Datum Sequence(std::vector<Tensor> items, DType elem_dtype = DType::kUndefined) {
    Datum d; d.kind_ = Kind::kSequence; d.seq_ = std::move(items); d.seq_dtype_ = elem_dtype; return d;
  }
  static Datum None() { Datum d; d.kind_ = Kind::kNone; return d; }

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool empty() const { return kind_ == Kind::kEmpty; }
  const Tensor& tensor() const { return tensor_; }
  Tensor& tensor() { return tensor_; }
  const std::vector<Tensor>& sequence() const { return seq_; }
  std::vector<Tensor>& sequence() { return seq_; }
  // dtype of a sequence's elements, known even when the sequence is empty.
  DType sequence_dtype() const { return seq_.empty() ? seq_dtype_ : seq_.front().dtype(); }
  void set_sequence_dtype(DType t) { seq_dtype_ = t; }
  std::string Describe() const;

 private:
  Kind kind_ = Kind::kEmpty;
  Tensor tensor_;
  std::vector<Tensor> seq_;
  DType seq_dtype_ = DType::kUndefined;
};

inline std::string Datum::Describe() const {
  switch (kind_) {
    case Kind::kTensor: return tensor_.Describe();
    case Kind::kSequence: return "seq(" + std::string(DTypeName(sequence_dtype())) + ", " + std::to_string(seq_.size()) + " items)";
    case Kind::kNone: return "none";
    case Kind::kEmpty: return "empty";
  }
  return "?";
}

}  // namespace kiln
