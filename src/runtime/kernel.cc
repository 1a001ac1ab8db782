#include "runtime/kernel.h"

namespace kiln::runtime {

void KernelRegistry::Register(const std::string& domain, const std::string& op_type, KernelFn fn) {
  kernels_[{domain == "ai.onnx" ? "" : domain, op_type}] = std::move(fn);
}

const KernelFn* KernelRegistry::Find(const std::string& domain, const std::string& op_type) const {
  auto it = kernels_.find({domain == "ai.onnx" ? "" : domain, op_type});
  return it == kernels_.end() ? nullptr : &it->second;
}

}  // namespace kiln::runtime
