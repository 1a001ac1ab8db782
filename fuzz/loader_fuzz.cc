// libFuzzer target: bytes as a serialized ONNX ModelProto, loaded on the
// reference and the cpu provider and, when it loads, run once on small
// generated inputs (fuzz_entry.h). Build: cmake -DKILN_FUZZ=ON with clang;
// run: `make fuzz`, or build-fuzz/loader_fuzz CORPUS_DIR.
#include <cstdlib>

#include "fuzz_entry.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("OMP_NUM_THREADS", "1", 0);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return kiln::fuzz::LoadAndRun(data, size);
}
