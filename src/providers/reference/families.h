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

}  // namespace kiln::reference
