// The cpu provider's kernel families, registered explicitly in register.cc.
#pragma once

#include "runtime/kernel.h"

namespace kiln::cpu {

void RegisterConvKernels(runtime::KernelRegistry& r);  // conv.cc
void RegisterPoolKernels(runtime::KernelRegistry& r);  // pool.cc
void RegisterConvTransposeKernels(runtime::KernelRegistry& r);  // conv_transpose.cc
void RegisterMatMulKernels(runtime::KernelRegistry& r);  // matmul.cc
void RegisterElementwiseKernels(runtime::KernelRegistry& r);  // elementwise.cc
void RegisterDataMovementKernels(runtime::KernelRegistry& r);  // data_movement.cc
void RegisterSliceKernels(runtime::KernelRegistry& r);  // slice.cc
void RegisterResizeKernels(runtime::KernelRegistry& r);  // resize.cc
void RegisterSoftmaxKernels(runtime::KernelRegistry& r);  // softmax.cc
void RegisterReduceKernels(runtime::KernelRegistry& r);  // reduce.cc
void RegisterSeparableKernels(runtime::KernelRegistry& r);  // separable.cc
void RegisterFusedElementwiseKernels(runtime::KernelRegistry& r);  // fused_elementwise.cc
void RegisterShapeKernels(runtime::KernelRegistry& r);  // shape_ops.cc

}  // namespace kiln::cpu
