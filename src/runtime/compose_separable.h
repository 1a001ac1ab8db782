// FusedSeparableConv (ops/fused.h) as the three FusedConv kernels it stands
// for, taken from a provider's own registry: the reference provider's kernel
// for the op, and the fallback of any provider whose fast kernel declines a
// case. Each step's kernel is instantiated once, with the step's load-time
// input type (the shape the previous step infers) and its constant weights,
// so a provider that builds its primitive at init still does.
#pragma once

#include "runtime/kernel.h"

namespace kiln::runtime {

// The composed kernel of a FusedSeparableConv node. Declared layouts: X as
// the first step's kernel takes it (the expansion's, or the depthwise one's
// without We), Z as the projection's kernel does, weights and biases as
// their step's kernel does; the output in the projection's order. Inputs
// are converted between steps to what each step declared. Empty (declined)
// when any step's kernel declines, so the executor falls back to the next
// provider. Fails naming the node when Wd's shape is unknown at init (the
// depthwise group is its first dim) or the steps' inference fails.
Result<Kernel> ComposeSeparable(const KernelRegistry& registry, const KernelInit& init);

}  // namespace kiln::runtime
