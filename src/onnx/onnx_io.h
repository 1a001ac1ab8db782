// ONNX protobuf <-> kiln IR. The only header of kiln whose implementation
// touches protobuf; nothing here exposes a protobuf type.
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"
#include "kiln/datum.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::onnx_io {

// Loads a model file. External data is resolved relative to the file's
// folder; a location that escapes that folder, or data shorter than
// declared, is an error.
Result<ir::Model> LoadModelFile(const std::string& path);
// The two steps of LoadModelFile: the file's bytes (one buffer), and the
// folder its external data is relative to.
Result<std::shared_ptr<Storage>> ReadModelFile(const std::string& path);
std::string ModelDir(const std::string& path);
// Loads a model from bytes; `model_dir` resolves external data ("" = none allowed).
Result<ir::Model> LoadModelBytes(const void* data, size_t size, const std::string& model_dir);

// Serializes a model (all tensors inline as raw_data).
Result<std::string> SerializeModel(const ir::Model& model);
Status SaveModelFile(const ir::Model& model, const std::string& path);

// TensorProto files (the ONNX backend-test format, input_0.pb ...).
Result<Tensor> ParseTensorProto(const std::string& bytes, std::string* name = nullptr);
Result<std::string> SerializeTensorProto(const Tensor& t, const std::string& name);
// A .pb file holding a TensorProto, SequenceProto or OptionalProto; `kind`
// picks the message type (backend tests store each by the input's type).
Result<Datum> ReadDatumFile(const std::string& path, ir::TypeInfo::Kind kind);
Status WriteDatumFile(const std::string& path, const Datum& d, const std::string& name);

}  // namespace kiln::onnx_io
