// TensorProto <-> Tensor, used by the importer, the exporter and tensor files.
// Internal to src/onnx: includes protobuf-generated headers.
#pragma once

#include <string>

#include "kiln/tensor.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_io {

// `model_dir` resolves external data; "" forbids external data.
Result<Tensor> TensorFromProto(const onnx::TensorProto& tp, const std::string& model_dir);
Result<Tensor> SparseTensorFromProto(const onnx::SparseTensorProto& sp, const std::string& model_dir);
void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* tp);

}  // namespace kiln::onnx_io
