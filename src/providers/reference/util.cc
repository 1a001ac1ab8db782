#include "providers/reference/util.h"

namespace kiln::reference {

std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> s(out.size(), 0);
  std::vector<int64_t> cs = ContiguousStrides(in);
  const size_t off = out.size() - in.size();
  for (size_t k = 0; k < in.size(); ++k) s[k + off] = in[k] == 1 ? 0 : cs[k];
  return s;
}

int64_t DimProduct(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t k = begin; k < end && k < s.size(); ++k) p *= s[k];
  return p;
}

}  // namespace kiln::reference
