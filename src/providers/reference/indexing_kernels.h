// Registration of the indexing kernels that live in their own files;
// RegisterIndexingKernels (indexing.cc) calls these.
#pragma once

#include "runtime/kernel.h"

namespace kiln::reference {

void RegisterScatterKernels(runtime::KernelRegistry& r);  // indexing_scatter.cc
void RegisterUniqueKernels(runtime::KernelRegistry& r);   // indexing_unique.cc

}  // namespace kiln::reference
