// Backend-test tensor files: TensorProto, SequenceProto and OptionalProto.
#include <fstream>
#include <sstream>

#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_io.h"
#include "onnx/proto_convert.h"

namespace kiln::onnx_io {
namespace {

Result<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open tensor file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<Datum> SequenceFromProto(const onnx::SequenceProto& sp) {
  std::vector<Tensor> items;
  for (const auto& t : sp.tensor_values()) {
    KILN_ASSIGN_OR_RETURN(Tensor x, TensorFromProto(t, ""));
    items.push_back(std::move(x));
  }
  if (sp.sequence_values_size() || sp.map_values_size() || sp.optional_values_size())
    return Unimplemented("sequence '" + sp.name() + "' of non-tensor elements");
  return Datum::Sequence(std::move(items));
}

}  // namespace

Result<Tensor> ParseTensorProto(const std::string& bytes, std::string* name) {
  onnx::TensorProto tp;
  if (!tp.ParseFromString(bytes)) return InvalidArgument("not a valid TensorProto (protobuf parsing failed)");
  if (name) *name = tp.name();
  return TensorFromProto(tp, "");
}

Result<std::string> SerializeTensorProto(const Tensor& t, const std::string& name) {
  onnx::TensorProto tp;
  TensorToProto(t, name, &tp);
  std::string out;
  if (!tp.SerializeToString(&out)) return Internal("failed to serialize tensor '" + name + "'");
  return out;
}

Result<Datum> ReadDatumFile(const std::string& path, ir::TypeInfo::Kind kind) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadAll(path));
  if (kind == ir::TypeInfo::Kind::kSequence) {
    onnx::SequenceProto sp;
    if (!sp.ParseFromString(bytes)) return InvalidArgument("'" + path + "' is not a valid SequenceProto");
    return SequenceFromProto(sp);
  }
  if (kind == ir::TypeInfo::Kind::kOptional) {
    onnx::OptionalProto op;
    if (!op.ParseFromString(bytes)) return InvalidArgument("'" + path + "' is not a valid OptionalProto");
    if (op.has_tensor_value()) {
      KILN_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(op.tensor_value(), ""));
      return Datum(std::move(t));
    }
    if (op.has_sequence_value()) return SequenceFromProto(op.sequence_value());
    return Datum::None();
  }
  auto t = ParseTensorProto(bytes);
  if (!t.ok()) return t.status().WithContext("'" + path + "'");
  return Datum(std::move(t).value());
}

Status WriteDatumFile(const std::string& path, const Datum& d, const std::string& name) {
  std::string bytes;
  if (d.is_tensor()) {
    KILN_ASSIGN_OR_RETURN(bytes, SerializeTensorProto(d.tensor(), name));
  } else if (d.is_sequence()) {
    onnx::SequenceProto sp;
    sp.set_name(name);
    sp.set_elem_type(onnx::SequenceProto::TENSOR);
    for (const Tensor& t : d.sequence()) TensorToProto(t, "", sp.add_tensor_values());
    sp.SerializeToString(&bytes);
  } else {
    onnx::OptionalProto op;
    op.set_name(name);
    op.SerializeToString(&bytes);
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) return IoError("cannot write '" + path + "'");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return out ? Status::Ok() : IoError("failed writing '" + path + "'");
}

}  // namespace kiln::onnx_io
