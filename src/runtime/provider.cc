#include "runtime/provider.h"

#include "providers/cpu/register.h"
#include "providers/reference/register.h"

namespace kiln::runtime {

Result<Provider> FindProvider(const std::string& name) {
  if (name == "reference") return Provider{name, &reference::Kernels(), "", nullptr, false};
  if (name == "cpu") return Provider{name, &cpu::Kernels(), "reference", &reference::Kernels(), true};
  std::string known;
  for (const auto& n : ProviderNames()) known += (known.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown provider '" + name + "' (available: " + known + ")");
}

std::vector<std::string> ProviderNames() { return {"reference", "cpu"}; }

}  // namespace kiln::runtime
