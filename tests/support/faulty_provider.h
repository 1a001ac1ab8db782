// Test-only faulty providers (never in the library): the cpu provider with
// one wrong Resize kernel, the motivating bug of DESIGN.md, registered with
// runtime::RegisterTestProvider.
//  - "faulty_resize_write": on channels-last input the cpu Resize writes its
//    channels-last result into a buffer labelled channels-first, so every
//    reader reads channels-last data with channels-first strides;
//  - "faulty_resize_read": on channels-last input it reads the input with
//    channels-first strides (the gather of the motivating bug).
// Both are right on row-major input and wrong on channels-last input (behind
// the NHWC Transpose, and behind any cpu Conv, which writes channels-last).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "examples/seed.h"
#include "ir/graph.h"
#include "kiln/datum.h"

namespace kiln::testing {

// Registers both providers (once; safe to call from every test).
void RegisterFaultyProviders();

// The seed model in `layout`.
ir::Model SeedModel(examples::SeedLayout layout);

// Uniform [-1, 1) feeds for every input a user must feed (static shapes).
std::map<std::string, Datum> RandomFeeds(const ir::Model& m, uint64_t seed = 3);

}  // namespace kiln::testing
