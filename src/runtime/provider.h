// Execution providers by name. A provider is, for now, a kernel registry;
// the compiled providers (cpu, cuda) add planning on top.
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"
#include "runtime/kernel.h"

namespace kiln::runtime {

struct Provider {
  std::string name;
  const KernelRegistry* kernels = nullptr;
};

Result<Provider> FindProvider(const std::string& name);
std::vector<std::string> ProviderNames();

}  // namespace kiln::runtime
