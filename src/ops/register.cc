#include "ops/families.h"

namespace kiln::ops {

void RegisterAllOps(OpRegistry& r) {
  RegisterConvOps(r);
  RegisterPoolOps(r);
  RegisterNormalizationOps(r);
  RegisterResizeOps(r);
  RegisterMatMulOps(r);
  RegisterElementwiseOps(r);
  RegisterShapeOps(r);
  RegisterDataMovementOps(r);
  RegisterGeneratorOps(r);
  RegisterReductionOps(r);
  RegisterSamplingOps(r);
  RegisterQuantizationOps(r);
  RegisterIndexingOps(r);
  RegisterControlFlowOps(r);
  RegisterSequenceOps(r);
  RegisterRnnOps(r);
  RegisterSignalOps(r);
  RegisterStringOps(r);
  RegisterLossOps(r);
  RegisterTrainingOps(r);
  RegisterRandomOps(r);
  RegisterDetectionOps(r);
  RegisterFusedOps(r);  // last: copies the inference of Conv, Gemm and MatMul
  RegisterFusedSeparableConv(r);  // runs FusedConv's inference
  RegisterFusedElementwise(r);  // runs the inference of its step ops
}

}  // namespace kiln::ops
