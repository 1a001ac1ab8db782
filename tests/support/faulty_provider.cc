#include "support/faulty_provider.h"

#include "ir/builder.h"
#include "providers/cpu/register.h"
#include "providers/reference/register.h"
#include "runtime/provider.h"
#include "support/layout.h"

namespace kiln::testing {
namespace {

// A KernelContext that forwards to the executor's, changing what the faulty
// kernel sees of input 0 or where its output 0 lands.
class FaultyContext final : public runtime::KernelContext {
 public:
  FaultyContext(runtime::KernelContext& inner, bool bad_read, bool bad_write)
      : inner_(inner), bad_read_(bad_read), bad_write_(bad_write) {
    const Tensor& x = inner_.input(0);
    channels_last_ = x.defined() && x.rank() == 4 && IsDenseInOrder(x, kChannelsLast) && !IsDenseInOrder(x, kRowMajor);
    // Channels-last data read with channels-first (row-major) strides.
    if (bad_read_ && channels_last_) misread_ = x.View(x.shape(), StridesInOrder(x.shape(), kRowMajor), x.offset());
  }
  const ir::Node& node() const override { return inner_.node(); }
  int64_t opset() const override { return inner_.opset(); }
  const Datum& input_datum(size_t i) const override { return inner_.input_datum(i); }
  const Tensor& input(size_t i) const override { return i == 0 && misread_.defined() ? misread_ : inner_.input(i); }
  const ir::TypeInfo& inferred_output(size_t i) const override { return inner_.inferred_output(i); }
  Result<Tensor> AllocOutput(size_t i) override { return inner_.AllocOutput(i); }
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape) override { return inner_.AllocOutput(i, dtype, shape); }
  Result<Tensor> AllocOutput(size_t i, DType dtype, const Shape& shape, const DimOrder& order) override {
    if (!(bad_write_ && channels_last_ && i == 0)) return inner_.AllocOutput(i, dtype, shape, order);
    // The value the graph sees is row-major; the kernel writes it channels-last.
    KILN_ASSIGN_OR_RETURN(Tensor y, inner_.AllocOutput(i, dtype, shape, kRowMajor));
    return y.View(shape, StridesInOrder(shape, order), y.offset());
  }
  Status SetOutput(size_t i, Datum value) override { return inner_.SetOutput(i, std::move(value)); }
  Result<Tensor> AllocScratch(DType dtype, const Shape& shape, const DimOrder& order, bool zero) const override {
    return inner_.AllocScratch(dtype, shape, order, zero);
  }
  Result<std::vector<Datum>> RunSubgraph(const ir::Graph& g, const std::vector<Datum>& inputs) override {
    return inner_.RunSubgraph(g, inputs);
  }

 private:
  runtime::KernelContext& inner_;
  bool bad_read_, bad_write_;
  bool channels_last_ = false;
  Tensor misread_;
};

const runtime::KernelRegistry& FaultyKernels(bool bad_read) {
  static runtime::KernelRegistry* regs[2] = {nullptr, nullptr};
  runtime::KernelRegistry*& r = regs[bad_read ? 1 : 0];
  if (!r) {
    r = new runtime::KernelRegistry(cpu::Kernels());
    r->RegisterFactory("", "Resize", [bad_read](const runtime::KernelInit& init) -> Result<runtime::Kernel> {
      // The cpu Resize writes a graph output row-major from any layout; the
      // faulty ones model the kernel that keeps its input's layout (the
      // motivating bug's), so they are built as if the output were not one.
      runtime::KernelInit inner = init;
      inner.graph_outputs.clear();
      KILN_ASSIGN_OR_RETURN(runtime::Kernel k, cpu::Kernels().Instantiate(inner));
      if (!k) return k;
      runtime::KernelFn good = k.fn;
      k.fn = [good, bad_read](runtime::KernelContext& ctx) {
        FaultyContext f(ctx, bad_read, !bad_read);
        return good(f);
      };
      return k;
    });
  }
  return *r;
}

}  // namespace

void RegisterFaultyProviders() {
  static bool done = [] {
    for (bool bad_read : {false, true}) {
      runtime::Provider p;
      p.kernels = &FaultyKernels(bad_read);
      p.fallback_name = "reference";
      p.fallback_kernels = &reference::Kernels();
      p.optimizes = true;
      runtime::RegisterTestProvider(bad_read ? "faulty_resize_read" : "faulty_resize_write", p);
    }
    return true;
  }();
  (void)done;
}

}  // namespace kiln::testing
