// Execution providers by name. A provider is a kernel registry, optionally
// backed by a fallback provider for the nodes it does not claim (the cpu
// provider falls back to the reference provider, node by node).
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"
#include "runtime/kernel.h"

namespace kiln::runtime {

struct Provider {
  std::string name;
  const KernelRegistry* kernels = nullptr;
  std::string fallback_name;                     // "" = none
  const KernelRegistry* fallback_kernels = nullptr;
  // Whether sessions on this provider run the optimization pipeline. The
  // reference provider is the oracle: it runs the model exactly as loaded.
  bool optimizes = false;
};

Result<Provider> FindProvider(const std::string& name);
std::vector<std::string> ProviderNames();

// Test-only: makes FindProvider (and so sessions) know `provider` under
// `name`, replacing an earlier registration of that name; the built-in names
// cannot be replaced. Tests use it for deliberately faulty providers that
// prove `kiln verify` finds real bugs; the library and the CLI never call it.
// `provider.kernels` (and its fallback) must outlive every session made on it.
// Not synchronized: register before any session is created.
void RegisterTestProvider(const std::string& name, Provider provider);

}  // namespace kiln::runtime
