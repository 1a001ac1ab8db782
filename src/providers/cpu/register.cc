#include "providers/cpu/register.h"

#include "providers/cpu/families.h"

namespace kiln::cpu {

const runtime::KernelRegistry& Kernels() {
  static const runtime::KernelRegistry* registry = [] {
    auto* r = new runtime::KernelRegistry();
    RegisterConvKernels(*r);
    RegisterPoolKernels(*r);
    RegisterConvTransposeKernels(*r);
    RegisterMatMulKernels(*r);
    RegisterElementwiseKernels(*r);
    RegisterDataMovementKernels(*r);
    RegisterSliceKernels(*r);
    RegisterResizeKernels(*r);
    RegisterSoftmaxKernels(*r);
    RegisterReduceKernels(*r);
    RegisterSeparableKernels(*r);
    RegisterFusedElementwiseKernels(*r);
    RegisterShapeKernels(*r);
    return r;
  }();
  return *registry;
}

}  // namespace kiln::cpu
