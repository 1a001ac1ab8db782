// libFuzzer target: bytes as a .npy file, a TensorProto, a SequenceProto and
// an OptionalProto (the readers of `kiln run --input` and of backend-test
// data; fuzz_entry.h). Build: cmake -DKILN_FUZZ=ON with clang; run:
// `make fuzz`, or build-fuzz/tensor_file_fuzz CORPUS_DIR.
#include "fuzz_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kiln::fuzz::ParseTensorFiles(data, size);
}
