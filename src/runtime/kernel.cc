#include "runtime/kernel.h"

namespace kiln::runtime {
namespace {
std::pair<std::string, std::string> Key(const std::string& domain, const std::string& op_type) {
  return {domain == "ai.onnx" ? "" : domain, op_type};
}
}  // namespace

Result<Tensor> KernelContext::AllocOutput(size_t i) {
  const ir::TypeInfo& t = inferred_output(i);
  if (t.kind != ir::TypeInfo::Kind::kTensor || t.dtype == DType::kUndefined || !t.shape)
    return node().Error(StatusCode::kInternal, "output " + std::to_string(i) + " has no inferred type to allocate from");
  Shape s;
  for (const ir::Dim& d : *t.shape) {
    if (!d.known())
      return node().Error(StatusCode::kInternal, "output " + std::to_string(i) + " shape " + ir::DimsToString(*t.shape) + " is not fully inferred");
    s.push_back(d.value);
  }
  return AllocOutput(i, t.dtype, s);
}

Result<Tensor> KernelContext::AllocScratch(DType dtype, const Shape& shape, const DimOrder& order, bool) const {
  return AllocateInOrder(dtype, shape, order);
}

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
