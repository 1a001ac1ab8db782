// One Register function per kernel family (one file each in this folder).
#pragma once

#include "runtime/kernel.h"

namespace kiln::reference {

void RegisterConvKernels(runtime::KernelRegistry& r);          // conv.cc
void RegisterPoolKernels(runtime::KernelRegistry& r);          // pool.cc
void RegisterNormalizationKernels(runtime::KernelRegistry& r); // normalization.cc
void RegisterResizeKernels(runtime::KernelRegistry& r);        // resize.cc
void RegisterMatMulKernels(runtime::KernelRegistry& r);        // matmul.cc
void RegisterElementwiseKernels(runtime::KernelRegistry& r);   // elementwise.cc
void RegisterShapeKernels(runtime::KernelRegistry& r);         // shape_ops.cc
void RegisterDataMovementKernels(runtime::KernelRegistry& r);  // data_movement.cc
void RegisterGeneratorKernels(runtime::KernelRegistry& r);     // generator.cc
void RegisterReductionKernels(runtime::KernelRegistry& r);     // reduction.cc
void RegisterSamplingKernels(runtime::KernelRegistry& r);         // sampling.cc
void RegisterQuantizationKernels(runtime::KernelRegistry& r);     // quantization.cc
void RegisterIndexingKernels(runtime::KernelRegistry& r);         // indexing.cc
void RegisterControlFlowKernels(runtime::KernelRegistry& r);      // control_flow.cc
void RegisterSequenceKernels(runtime::KernelRegistry& r);         // sequence.cc
void RegisterRnnKernels(runtime::KernelRegistry& r);              // rnn.cc
void RegisterSignalKernels(runtime::KernelRegistry& r);           // signal.cc
void RegisterStringKernels(runtime::KernelRegistry& r);           // string_ops.cc
void RegisterLossKernels(runtime::KernelRegistry& r);             // loss.cc
void RegisterTrainingKernels(runtime::KernelRegistry& r);         // training.cc
void RegisterRandomKernels(runtime::KernelRegistry& r);           // random.cc
void RegisterDetectionKernels(runtime::KernelRegistry& r);        // detection.cc
void RegisterFusedKernels(runtime::KernelRegistry& r);            // fused.cc (com.kiln, made by the passes)

}  // namespace kiln::reference
