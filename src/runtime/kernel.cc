#include "runtime/kernel.h"

namespace kiln::runtime {
namespace {
std::pair<std::string, std::string> Key(const std::string& domain, const std::string& op_type) {
  return {domain == "ai.onnx" ? "" : domain, op_type};
}
}  // namespace

void KernelRegistry::Register(const std::string& domain, const std::string& op_type, KernelFn fn) {
  RegisterFactory(domain, op_type, [fn = std::move(fn)](const KernelInit&) -> Result<Kernel> { return Kernel(fn); });
}

void KernelRegistry::RegisterFactory(const std::string& domain, const std::string& op_type, KernelFactory factory) {
  factories_[Key(domain, op_type)] = std::move(factory);
}

bool KernelRegistry::Has(const std::string& domain, const std::string& op_type) const {
  return factories_.count(Key(domain, op_type)) != 0;
}

Result<Kernel> KernelRegistry::Instantiate(const KernelInit& init) const {
  auto it = factories_.find(Key(init.node.domain, init.node.op_type));
  if (it == factories_.end()) return Kernel();
  return it->second(init);
}

}  // namespace kiln::runtime
