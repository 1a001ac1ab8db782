#include "runtime/provider.h"

#include <map>

#include "providers/cpu/register.h"
#include "providers/reference/register.h"

namespace kiln::runtime {
namespace {

// RegisterTestProvider's providers (empty outside tests).
std::map<std::string, Provider>& TestProviders() {
  static auto* providers = new std::map<std::string, Provider>();
  return *providers;
}

}  // namespace

void RegisterTestProvider(const std::string& name, Provider provider) {
  if (name == "reference" || name == "cpu") return;
  provider.name = name;
  TestProviders()[name] = std::move(provider);
}

Result<Provider> FindProvider(const std::string& name) {
  if (name == "reference") return Provider{name, &reference::Kernels(), "", nullptr, false};
  if (name == "cpu") return Provider{name, &cpu::Kernels(), "reference", &reference::Kernels(), true};
  auto it = TestProviders().find(name);
  if (it != TestProviders().end()) return it->second;
  std::string known;
  for (const auto& n : ProviderNames()) known += (known.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown provider '" + name + "' (available: " + known + ")");
}

// Test providers stay unlisted: users never see them.
std::vector<std::string> ProviderNames() { return {"reference", "cpu"}; }

}  // namespace kiln::runtime
