// Force-included into the kiln library by CMakeLists.txt's KILN_FUZZ block
// when the compiler is clang < 15 (Debian 12's clang 14), for the two GCC
// builtins src/ uses that clang 14 lacks. Nothing else includes it; drop it
// once src/ no longer needs it.
//   __builtin_roundevenf (src/providers/cpu/vec_math.h): rintf is the same
//     under the default round-to-nearest-even mode, which kiln never changes.
//   __builtin_cpu_supports("f16c") (src/runtime/plan_cache.cc): not a feature
//     name clang 14 knows; answered from CPUID, the other names by the builtin.
#pragma once

#if defined(__clang__) && __clang_major__ < 15 && defined(__x86_64__)
#include <cpuid.h>
#include <cstring>

inline bool KilnFuzzCpuSupports(const char* f) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!std::strcmp(f, "f16c")) return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
#define KILN_FUZZ_CPU(name) \
  if (!std::strcmp(f, name)) return __builtin_cpu_supports(name);
  KILN_FUZZ_CPU("sse4.2") KILN_FUZZ_CPU("avx") KILN_FUZZ_CPU("avx2") KILN_FUZZ_CPU("fma")
  KILN_FUZZ_CPU("avx512f") KILN_FUZZ_CPU("avx512bw") KILN_FUZZ_CPU("avx512vl") KILN_FUZZ_CPU("avx512dq")
  KILN_FUZZ_CPU("avx512vnni") KILN_FUZZ_CPU("avx512bf16")
#undef KILN_FUZZ_CPU
  return false;
}

#define __builtin_cpu_supports(name) KilnFuzzCpuSupports(name)
#define __builtin_roundevenf __builtin_rintf
#endif
