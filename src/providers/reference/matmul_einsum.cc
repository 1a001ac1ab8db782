// Reference kernel of Einsum (opset 12): for every output index, the sum over
// every value of the summed labels of the product of the operands' elements.
// A label repeated within one operand adds up its strides (the diagonal);
// size-1 ellipsis dims broadcast with stride 0.
#include "ops/matmul.h"
#include "providers/reference/matmul_einsum.h"
#include "providers/reference/reduction_util.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

Status Einsum(runtime::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(std::string eq, node.GetString("equation", ""));
  std::vector<Shape> shapes;
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    shapes.push_back(ctx.input(i).shape());
    ranks.push_back(ctx.input(i).rank());
  }
  KILN_ASSIGN_OR_RETURN(ops::EinsumSpec spec, ops::ParseEinsum(node, eq, ranks));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ops::EinsumLabelSizes(node, spec, shapes));
  std::vector<bool> in_output(static_cast<size_t>(spec.num_labels), false);
  for (int l : spec.output) in_output[static_cast<size_t>(l)] = true;
  std::vector<int> summed;
  for (int l = 0; l < spec.num_labels; ++l)
    if (sizes[static_cast<size_t>(l)] >= 0 && !in_output[static_cast<size_t>(l)]) summed.push_back(l);
  Shape out_shape, sum_shape;
  for (int l : spec.output) out_shape.push_back(sizes[static_cast<size_t>(l)]);
  for (int l : summed) sum_shape.push_back(sizes[static_cast<size_t>(l)]);
  // Per operand: stride of each label (summed over repeated axes).
  std::vector<std::vector<int64_t>> out_strides, sum_strides;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<int64_t> per_label(static_cast<size_t>(spec.num_labels), 0);
    const std::vector<int64_t> cs = ContiguousStrides(shapes[i]);
    for (size_t k = 0; k < shapes[i].size(); ++k) {
      const int l = spec.inputs[i][k];
      if (shapes[i][k] == 1 && sizes[static_cast<size_t>(l)] != 1) continue;  // broadcast
      per_label[static_cast<size_t>(l)] += cs[k];
    }
    std::vector<int64_t> os, ss;
    for (int l : spec.output) os.push_back(per_label[static_cast<size_t>(l)]);
    for (int l : summed) ss.push_back(per_label[static_cast<size_t>(l)]);
    out_strides.push_back(std::move(os));
    sum_strides.push_back(std::move(ss));
  }
  KILN_ASSIGN_OR_RETURN(Tensor Y, ctx.AllocOutput(0));
  Status st = Status::Ok();
  KILN_RETURN_IF_ERROR(VisitNumeric(Y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Acc = AccOf<T>;
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.Error("bool is not supported");
    } else {
      std::vector<const T*> xs;
      for (size_t i = 0; i < shapes.size(); ++i) xs.push_back(ctx.input(i).data<T>());
      T* yd = Y.data<T>();
      std::vector<int64_t> base(xs.size());
      ForEachIndex(out_shape, [&](int64_t o, const std::vector<int64_t>& oi) {
        for (size_t i = 0; i < xs.size(); ++i) base[i] = OffsetOf(oi, out_strides[i]);
        Acc acc = 0;
        ForEachIndex(sum_shape, [&](int64_t, const std::vector<int64_t>& si) {
          Acc prod = 1;
          for (size_t i = 0; i < xs.size(); ++i) prod *= ToAcc(xs[i][base[i] + OffsetOf(si, sum_strides[i])]);
          acc += prod;
        });
        yd[o] = FromAcc<T>(acc);
      });
    }
  }));
  return st;
}

}  // namespace

void RegisterEinsumKernel(runtime::KernelRegistry& r) { r.Register("", "Einsum", Einsum); }

}  // namespace kiln::reference
