// NumPy .npy files <-> kiln Tensors, for `kiln run` inputs/outputs and the
// ONNX Runtime comparison fixtures.
//
// Supported: format versions 1.0, 2.0 and 3.0 headers; little-endian (or
// byte-order-free) descr for every kiln dtype: '<f2' float16, '<f4', '<f8',
// '|i1' '<i2' '<i4' '<i8', '|u1' '<u2' '<u4' '<u8', '|b1' bool and '<U<n>'
// strings (UTF-32, written from/to UTF-8). fortran_order must be False (data
// in C order). bfloat16 has no NumPy dtype: writing one is an error (callers
// convert to float32 first). Anything else is a clear error, never a crash.
#pragma once

#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::npy {

// Parses the bytes of a .npy file. `what` names the source in messages.
Result<Tensor> Parse(const std::string& bytes, const std::string& what = "npy data");
Result<Tensor> ReadFile(const std::string& path);

// Serializes a tensor (any strides; written in C order). Uses a version 1.0
// header when it fits, else 2.0.
Result<std::string> Serialize(const Tensor& t);
Status WriteFile(const std::string& path, const Tensor& t);

// The descr string kiln writes for a dtype ("<f4"), or an error.
Result<std::string> DescrFor(DType dtype);

}  // namespace kiln::npy
