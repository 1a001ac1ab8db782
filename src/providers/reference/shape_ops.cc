// Reference kernels of shape-only ops.
#include "providers/reference/families.h"

namespace kiln::reference {
namespace {

// Identity: the output is the input (sequences and optionals too). Values
// are immutable once produced, so sharing storage is safe.
Status Identity(runtime::KernelContext& ctx) { return ctx.SetOutput(0, ctx.input_datum(0)); }

}  // namespace

void RegisterShapeKernels(runtime::KernelRegistry& r) {
  r.Register("", "Identity", Identity);
}

}  // namespace kiln::reference
