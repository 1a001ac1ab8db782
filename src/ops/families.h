// One Register function per op family (one file each in src/ops).
// ops/register.cc calls them all; nothing registers itself.
#pragma once

#include "ops/op_registry.h"

namespace kiln::ops {

void RegisterConvOps(OpRegistry& r);          // conv.cc
void RegisterPoolOps(OpRegistry& r);          // pool.cc
void RegisterNormalizationOps(OpRegistry& r); // normalization.cc
void RegisterResizeOps(OpRegistry& r);        // resize.cc
void RegisterMatMulOps(OpRegistry& r);        // matmul.cc
void RegisterElementwiseOps(OpRegistry& r);   // elementwise.cc
void RegisterShapeOps(OpRegistry& r);         // shape_ops.cc
void RegisterDataMovementOps(OpRegistry& r);  // data_movement.cc
void RegisterGeneratorOps(OpRegistry& r);     // generator.cc
void RegisterReductionOps(OpRegistry& r);     // reduction.cc
void RegisterSamplingOps(OpRegistry& r);             // sampling.cc
void RegisterQuantizationOps(OpRegistry& r);         // quantization.cc
void RegisterIndexingOps(OpRegistry& r);             // indexing.cc
void RegisterControlFlowOps(OpRegistry& r);          // control_flow.cc
void RegisterSequenceOps(OpRegistry& r);             // sequence.cc
void RegisterRnnOps(OpRegistry& r);                  // rnn.cc
void RegisterSignalOps(OpRegistry& r);               // signal.cc
void RegisterStringOps(OpRegistry& r);               // string_ops.cc
void RegisterLossOps(OpRegistry& r);                 // loss.cc
void RegisterTrainingOps(OpRegistry& r);             // training.cc
void RegisterRandomOps(OpRegistry& r);               // random.cc
void RegisterDetectionOps(OpRegistry& r);            // detection.cc
// After Conv and MatMul: the fused ops reuse their inference.
void RegisterFusedOps(OpRegistry& r);                // fused.cc (domain com.kiln)
void RegisterFusedSeparableConv(OpRegistry& r);      // fused_separable.cc (after RegisterFusedOps: runs FusedConv's inference)
void RegisterFusedElementwise(OpRegistry& r);        // fused_elementwise.cc (runs the step ops' inference)

}  // namespace kiln::ops
