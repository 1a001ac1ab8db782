#include "onnx/proto_convert.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "support/dtype_dispatch.h"

namespace kiln::onnx_io {
namespace {

namespace fs = std::filesystem;

// Reads `length` bytes at `offset` of `location`, which must stay inside
// `model_dir` (no absolute paths, no "..", no symlink escaping it).
Result<std::string> ReadExternal(const onnx::TensorProto& tp, const std::string& model_dir, size_t expected) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : tp.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (...) {
      return InvalidModel("tensor '" + tp.name() + "': external data key '" + kv.key() + "' has a non-numeric value '" + kv.value() + "'");
    }
  }
  if (model_dir.empty()) return InvalidModel("tensor '" + tp.name() + "' uses external data, but the model was not loaded from a file");
  if (location.empty()) return InvalidModel("tensor '" + tp.name() + "': external data without a location");
  if (offset < 0 || length < -1) return InvalidModel("tensor '" + tp.name() + "': negative external data offset or length");
  fs::path rel(location);
  if (rel.is_absolute()) return InvalidModel("tensor '" + tp.name() + "': external data location '" + location + "' is absolute; it must be relative to the model's folder");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(model_dir), ec);
  fs::path full = fs::weakly_canonical(base / rel, ec);
  auto [bend, fit] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (ec || bend != base.end())
    return InvalidModel("tensor '" + tp.name() + "': external data location '" + location + "' escapes the model's folder");
  std::ifstream in(full, std::ios::binary);
  if (!in) return InvalidModel("tensor '" + tp.name() + "': cannot open external data file '" + location + "'");
  in.seekg(0, std::ios::end);
  int64_t file_size = static_cast<int64_t>(in.tellg());
  size_t want = length >= 0 ? static_cast<size_t>(length) : expected;
  if (length >= 0 && static_cast<size_t>(length) != expected)
    return InvalidModel("tensor '" + tp.name() + "': external data length " + std::to_string(length) + " does not match its shape (" + std::to_string(expected) + " bytes)");
  if (offset + static_cast<int64_t>(want) > file_size)
    return InvalidModel("tensor '" + tp.name() + "': external data file '" + location + "' holds " + std::to_string(file_size) + " bytes, shorter than declared offset " + std::to_string(offset) + " + length " + std::to_string(want));
  std::string buf(want, '\0');
  in.seekg(offset);
  in.read(buf.data(), static_cast<std::streamsize>(want));
  if (!in) return IoError("tensor '" + tp.name() + "': failed reading external data '" + location + "'");
  return buf;
}

template <typename T, typename Field>
Status CopyTyped(const Field& field, Tensor& t, const std::string& name, const char* field_name) {
  if (static_cast<int64_t>(field.size()) != t.numel())
    return InvalidModel("tensor '" + name + "': " + field_name + " has " + std::to_string(field.size()) + " values, shape " + ShapeToString(t.shape()) + " needs " + std::to_string(t.numel()));
  T* out = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) out[i] = T::FromBits(static_cast<uint16_t>(field[static_cast<int>(i)]));
    else out[i] = static_cast<T>(field[static_cast<int>(i)]);
  }
  return Status::Ok();
}

// Raw bool bytes other than 0/1 are not valid bool storage (reading them is
// undefined behaviour): any nonzero byte is true, as in npy.cc.
void NormalizeBools(Tensor& t) {
  if (t.dtype() != DType::kBool) return;
  auto* b = static_cast<unsigned char*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) b[i] = b[i] != 0;
}

// How many values the typed field a non-raw tensor of `dt` keeps them in has.
uint64_t TypedFieldSize(const onnx::TensorProto& tp, DType dt) {
  switch (dt) {
    case DType::kFloat32: return static_cast<uint64_t>(tp.float_data_size());
    case DType::kFloat64: return static_cast<uint64_t>(tp.double_data_size());
    case DType::kInt64: return static_cast<uint64_t>(tp.int64_data_size());
    case DType::kUint64: case DType::kUint32: return static_cast<uint64_t>(tp.uint64_data_size());
    default: return static_cast<uint64_t>(tp.int32_data_size());
  }
}

}  // namespace

Result<Tensor> TensorFromProto(const onnx::TensorProto& tp, const std::string& model_dir) {
  if (!DTypeIsKnown(tp.data_type()))
    return Unimplemented("tensor '" + tp.name() + "' has unsupported data type " + std::to_string(tp.data_type()));
  DType dt = static_cast<DType>(tp.data_type());
  Shape shape(tp.dims().begin(), tp.dims().end());
  // The data present must hold the shape before anything is allocated: a
  // few bytes declaring a huge shape are an error, not a huge allocation.
  // External data is read first (ReadExternal checks the file holds it).
  const bool external = dt != DType::kString && tp.data_location() == onnx::TensorProto::EXTERNAL;
  std::string external_data;
  if (auto count = CheckedElementCount(shape); count.ok()) {
    const auto n = static_cast<uint64_t>(*count);
    if (external) {
      if (n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / DTypeSize(dt))
        return InvalidModel("tensor '" + tp.name() + "': shape " + ShapeToString(shape) + " is too large");
      KILN_ASSIGN_OR_RETURN(external_data, ReadExternal(tp, model_dir, n * DTypeSize(dt)));
    } else {
      const uint64_t have = dt == DType::kString ? static_cast<uint64_t>(tp.string_data_size())
                            : tp.has_raw_data()  ? tp.raw_data().size() / DTypeSize(dt)
                                                 : TypedFieldSize(tp, dt);
      if (n != 0 && have < n)
        return InvalidModel("tensor '" + tp.name() + "': shape " + ShapeToString(shape) + " needs " + std::to_string(n) +
                            " values, its data has " + std::to_string(have));
    }
  }
  // Every path below writes all elements or fails: no need to zero first
  // (weights are most of a model's load time).
  auto alloc = Tensor::AllocateForOverwrite(dt, shape);
  if (!alloc.ok()) return alloc.status().WithContext("tensor '" + tp.name() + "'");
  Tensor t = std::move(alloc).value();
  const int64_t n = t.numel();
  if (dt == DType::kString) {
    if (tp.string_data_size() != n)
      return InvalidModel("tensor '" + tp.name() + "': string_data has " + std::to_string(tp.string_data_size()) + " values, shape needs " + std::to_string(n));
    for (int64_t i = 0; i < n; ++i) t.data<std::string>()[i] = tp.string_data(static_cast<int>(i));
    return t;
  }
  const size_t bytes = t.nbytes();
  if (external) {
    if (bytes) std::memcpy(t.raw(), external_data.data(), bytes);
    NormalizeBools(t);
    return t;
  }
  if (tp.has_raw_data()) {
    if (tp.raw_data().size() != bytes)
      return InvalidModel("tensor '" + tp.name() + "': raw_data has " + std::to_string(tp.raw_data().size()) + " bytes, shape " + ShapeToString(shape) + " of " + DTypeName(dt) + " needs " + std::to_string(bytes));
    if (bytes) std::memcpy(t.raw(), tp.raw_data().data(), bytes);
    NormalizeBools(t);
    return t;
  }
  Status s;
  switch (dt) {
    case DType::kFloat32: s = CopyTyped<float>(tp.float_data(), t, tp.name(), "float_data"); break;
    case DType::kFloat64: s = CopyTyped<double>(tp.double_data(), t, tp.name(), "double_data"); break;
    case DType::kInt64: s = CopyTyped<int64_t>(tp.int64_data(), t, tp.name(), "int64_data"); break;
    case DType::kUint64: s = CopyTyped<uint64_t>(tp.uint64_data(), t, tp.name(), "uint64_data"); break;
    case DType::kUint32: s = CopyTyped<uint32_t>(tp.uint64_data(), t, tp.name(), "uint64_data"); break;
    case DType::kInt32: s = CopyTyped<int32_t>(tp.int32_data(), t, tp.name(), "int32_data"); break;
    case DType::kInt16: s = CopyTyped<int16_t>(tp.int32_data(), t, tp.name(), "int32_data"); break;
    case DType::kInt8: s = CopyTyped<int8_t>(tp.int32_data(), t, tp.name(), "int32_data"); break;
    case DType::kUint16: s = CopyTyped<uint16_t>(tp.int32_data(), t, tp.name(), "int32_data"); break;
    case DType::kUint8: s = CopyTyped<uint8_t>(tp.int32_data(), t, tp.name(), "int32_data"); break;
    case DType::kBool: s = CopyTyped<bool>(tp.int32_data(), t, tp.name(), "int32_data"); break;
    case DType::kFloat16: s = CopyTyped<Float16>(tp.int32_data(), t, tp.name(), "int32_data"); break;
    case DType::kBFloat16: s = CopyTyped<BFloat16>(tp.int32_data(), t, tp.name(), "int32_data"); break;
    default: s = Unimplemented("tensor '" + tp.name() + "': dtype " + DTypeName(dt));
  }
  // An empty tensor may legitimately carry no data field at all.
  if (!s.ok() && n != 0) return s;
  return t;
}

Result<Tensor> SparseTensorFromProto(const onnx::SparseTensorProto& sp, const std::string& model_dir) {
  KILN_ASSIGN_OR_RETURN(Tensor values, TensorFromProto(sp.values(), model_dir));
  KILN_ASSIGN_OR_RETURN(Tensor indices, TensorFromProto(sp.indices(), model_dir));
  Shape dense(sp.dims().begin(), sp.dims().end());
  auto alloc = Tensor::Allocate(values.dtype(), dense);
  if (!alloc.ok()) return alloc.status();
  Tensor out = std::move(alloc).value();
  const int64_t nnz = values.numel();
  const int64_t total = out.numel();
  if (indices.dtype() != DType::kInt64) return InvalidModel("sparse tensor indices must be int64");
  const int64_t* idx = indices.data<int64_t>();
  const size_t es = DTypeSize(values.dtype());
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t linear = 0;
    if (indices.rank() == 1) {
      linear = idx[k];
    } else {  // [nnz, rank] coordinates
      for (size_t d = 0; d < dense.size(); ++d) linear = linear * dense[d] + idx[k * static_cast<int64_t>(dense.size()) + static_cast<int64_t>(d)];
    }
    if (linear < 0 || linear >= total) return InvalidModel("sparse tensor index out of range");
    std::memcpy(static_cast<char*>(out.raw()) + linear * static_cast<int64_t>(es), static_cast<const char*>(values.raw()) + k * static_cast<int64_t>(es), es);
  }
  return out;
}

void TensorToProto(const Tensor& src, const std::string& name, onnx::TensorProto* tp) {
  Tensor t = src.Contiguous();
  tp->set_name(name);
  tp->set_data_type(static_cast<int>(t.dtype()));
  for (int64_t d : t.shape()) tp->add_dims(d);
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) tp->add_string_data(t.data<std::string>()[i]);
    return;
  }
  tp->set_raw_data(std::string(static_cast<const char*>(t.raw()), t.nbytes()));
}

}  // namespace kiln::onnx_io
