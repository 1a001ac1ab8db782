#include "providers/reference/register.h"

#include "providers/reference/families.h"

namespace kiln::reference {

const runtime::KernelRegistry& Kernels() {
  static const runtime::KernelRegistry* registry = [] {
    auto* r = new runtime::KernelRegistry();
    RegisterConvKernels(*r);
    RegisterPoolKernels(*r);
    RegisterNormalizationKernels(*r);
    RegisterResizeKernels(*r);
    RegisterMatMulKernels(*r);
    RegisterElementwiseKernels(*r);
    RegisterShapeKernels(*r);
    RegisterDataMovementKernels(*r);
    RegisterGeneratorKernels(*r);
    RegisterReductionKernels(*r);
    RegisterSamplingKernels(*r);
    RegisterQuantizationKernels(*r);
    RegisterIndexingKernels(*r);
    RegisterControlFlowKernels(*r);
    RegisterSequenceKernels(*r);
    RegisterRnnKernels(*r);
    RegisterSignalKernels(*r);
    RegisterStringKernels(*r);
    RegisterLossKernels(*r);
    RegisterTrainingKernels(*r);
    RegisterRandomKernels(*r);
    RegisterDetectionKernels(*r);
    RegisterFusedKernels(*r);
    return r;
  }();
  return *registry;
}

}  // namespace kiln::reference
