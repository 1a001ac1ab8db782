#include "plan/layout.h"

#include <set>

namespace kiln::plan {
namespace {

const std::vector<DimOrder>& AcceptedOrders(const runtime::InputLayouts& a) {
  static const std::vector<DimOrder> kRowMajorOnly = {kRowMajor};
  return a.orders.empty() ? kRowMajorOnly : a.orders;
}

const ir::Dims* DimsOf(const std::unordered_map<std::string, ir::TypeInfo>& types, const std::string& v) {
  auto it = types.find(v);
  if (it == types.end() || it->second.kind != ir::TypeInfo::Kind::kTensor || !it->second.shape) return nullptr;
  return &*it->second.shape;
}

// The order with the dims known to be 1 left out: two orders that agree on
// the rest lay the value out identically (a [N,C,1,1] tensor is NCHW and
// NHWC at once), as IsDenseInOrder sees it at run time.
DimOrder Significant(const DimOrder& o, const ir::Dims& dims) {
  DimOrder out;
  for (int d : ResolveOrder(o, static_cast<int>(dims.size())))
    if (!(dims[static_cast<size_t>(d)].known() && dims[static_cast<size_t>(d)].value == 1)) out.push_back(d);
  return out;
}

}  // namespace

bool Accepts(const runtime::InputLayouts& accepts, const DimOrder& have, int rank, DimOrder* target) {
  if (accepts.any_strided || accepts.any_dense) return true;
  for (const DimOrder& o : AcceptedOrders(accepts)) {
    const size_t r = o.empty() ? static_cast<size_t>(rank) : o.size();
    if (rank >= 0 && r == static_cast<size_t>(rank) && SameOrder(o, have, rank)) return true;
    if (rank < 0 && o.empty() && have.empty()) return true;
  }
  // The first accepted order that fits the rank (row-major always does).
  *target = kRowMajor;
  for (const DimOrder& o : AcceptedOrders(accepts))
    if (o.empty() || static_cast<int>(o.size()) == rank) {
      *target = o;
      break;
    }
  return false;
}

bool AcceptsTensor(const runtime::InputLayouts& accepts, const Tensor& t, DimOrder* target) {
  if (accepts.any_strided) return true;
  DimOrder have;
  if (accepts.any_dense && FindOrder(t, &have)) return true;
  for (const DimOrder& o : AcceptedOrders(accepts))
    if ((o.empty() || static_cast<int>(o.size()) == t.rank()) && IsDenseInOrder(t, o)) return true;
  *target = kRowMajor;
  for (const DimOrder& o : AcceptedOrders(accepts))
    if (o.empty() || static_cast<int>(o.size()) == t.rank()) {
      *target = o;
      break;
    }
  return false;
}

LayoutPlan PlanLayouts(const ir::Graph& g, const std::vector<size_t>& order,
                       const std::vector<const runtime::KernelLayouts*>& layouts,
                       const std::unordered_map<std::string, ir::TypeInfo>& types) {
  LayoutPlan plan;
  std::set<std::pair<std::string, std::string>> converted;  // (value, target): converted once, reused
  auto stored = [&](const std::string& v) -> DimOrder {
    auto it = plan.orders.find(v);
    return it == plan.orders.end() ? kRowMajor : it->second;  // inputs, initializers, outer values
  };
  for (size_t idx : order) {
    const ir::Node& n = g.nodes[idx];
    const runtime::KernelLayouts* kl = layouts[idx];
    std::vector<DimOrder> arrived(n.inputs.size(), kRowMajor);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i].empty()) continue;
      const ir::Dims* dims = DimsOf(types, n.inputs[i]);
      const int rank = dims ? static_cast<int>(dims->size()) : -1;
      const DimOrder have = stored(n.inputs[i]);
      DimOrder target;
      static const runtime::KernelLayouts kDefault;
      if (Accepts((kl ? *kl : kDefault).input(i), have, rank, &target)) {
        arrived[i] = have;
      } else if (dims && Significant(have, *dims) == Significant(target, *dims)) {
        arrived[i] = target;  // the same memory either way: no conversion
      } else {
        if (converted.insert({n.inputs[i], OrderName(target, rank)}).second)
          plan.conversions.push_back({idx, i, n.inputs[i], have, target, rank});
        arrived[i] = target;
      }
    }
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      if (n.outputs[o].empty()) continue;
      DimOrder out = kRowMajor;
      if (kl && kl->output_order) out = kl->output_order(arrived);
      plan.orders[n.outputs[o]] = out;
    }
  }
  return plan;
}

}  // namespace kiln::plan
