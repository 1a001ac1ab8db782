// FusedElementwise (ops/fused.h) as the ai.onnx kernels of its steps, taken
// from a provider's own registry: the reference provider's kernel for the
// op (literally the composition it stands for), and the fallback of any
// provider whose fast kernel declines a case.
#pragma once

#include "runtime/kernel.h"

namespace kiln::runtime {

// The composed kernel of a FusedElementwise node. Each step's kernel is
// instantiated once with its load-time input types (an earlier step's as
// inferred) and constant inputs. Declared layouts: each input as the first
// step that reads it declares it (a later step reading it gets it converted
// if it wants another); the output in the last step's order. Empty
// (declined) when any step's kernel declines.
Result<Kernel> ComposeElementwise(const KernelRegistry& registry, const KernelInit& init);

}  // namespace kiln::runtime
