// KILN_CHECK: programmer invariants only. Anything that can come from a model,
// a file or a user must be a Status instead (DESIGN.md, "Errors").
#pragma once

#include <cstdio>
#include <cstdlib>

#define KILN_CHECK(cond)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "kiln internal check failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)
