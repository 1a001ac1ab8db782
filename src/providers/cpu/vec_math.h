// Float math the compiler can vectorize (no libm calls in the loop), for the
// cpu provider's elementwise kernels. Accuracy: ExpF within 2 ulp of expf
// over its range (degree-6 polynomial after reduction by ln 2), which keeps
// Sigmoid/Tanh/SiLU far inside the cpu-vs-reference tolerance (1e-5 abs).
#pragma once

#include <cstdint>
#include <cstring>

// Loops compiled for AVX-512, AVX2 and baseline, one chosen at load time
// (target_clones: an ifunc resolver per function). Not under TSan: the
// resolvers run during relocation, before TSan's runtime is initialized,
// and the instrumented ones crash the program at startup.
#if defined(__SANITIZE_THREAD__)
#define KILN_CPU_CLONES
#else
#define KILN_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

// The same for function templates. clang (14, the fuzz build's compiler)
// rejects target_clones on templates, so there they compile for the
// baseline only: correct, just not vectorized wider than SSE2.
#if defined(__clang__)
#define KILN_CPU_CLONES_TEMPLATE
#else
#define KILN_CPU_CLONES_TEMPLATE KILN_CPU_CLONES
#endif

namespace kiln::cpu {

inline float ExpF(float x) {
  // Clamp to the float range: exp(88.7) is near FLT_MAX, exp(-87.3) the
  // smallest normal; beyond, results saturate to inf / 0 as expf's do.
  const float kHi = 88.7f, kLo = -87.3f;
  // A NaN is reduced as 0 (so no NaN reaches the int conversion below, which
  // would be undefined) and returned as itself at the end.
  const float in = x;
  const bool over = x > kHi, under = x < kLo, nan = x != x;
  x = x > kHi ? kHi : (x < kLo ? kLo : x);
  x = nan ? 0.f : x;
  // x = n ln2 + r, |r| <= ln2/2; the split of ln2 keeps r exact. rintf
  // rounds in the current mode, nearest-even (kiln never changes it), and
  // vectorizes (vroundps / vrndscaleps); GCC 12 has no vector form of
  // roundevenf, which left every loop calling ExpF scalar (4 ns per element).
  const float n = __builtin_rintf(x * 1.44269504089f);
  float r = x - n * 0.693145751953125f;
  r = r - n * 1.428606765330187e-06f;
  // exp(r) by Taylor to r^6 (error < 2e-8 on the interval).
  float p = 1.f / 720.f;
  p = p * r + 1.f / 120.f;
  p = p * r + 1.f / 24.f;
  p = p * r + 1.f / 6.f;
  p = p * r + 0.5f;
  p = p * r + 1.f;
  p = p * r + 1.f;
  // 2^n through the exponent bits.
  const int32_t e = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &e, 4);
  float y = p * scale;
  y = over ? __builtin_inff() : y;
  y = under ? 0.f : y;
  y = nan ? in : y;
  return y;
}

// max(0, min(1, h)) written as the reference's std::max / std::min are (a
// NaN h gives 1), as compares the compiler vectorizes: std::fmin/fmax
// became libm calls per value (15% of PP-OCR cls's time in HardSwish).
inline float Clamp01(float h) {
  const float m = h < 1.f ? h : 1.f;
  return 0.f < m ? m : 0.f;
}

// Whether this CPU has AVX-512F, for the kernels written in its intrinsics
// (checked once; the target_clones loops dispatch by themselves).
inline bool HasAvx512F() {
  static const bool ok = __builtin_cpu_supports("avx512f");
  return ok;
}

inline float SigmoidF(float x) { return 1.f / (1.f + ExpF(-x)); }

// tanh(x) = 1 - 2 / (exp(2x) + 1); exact enough away from 0, and near 0 the
// cancellation costs only absolute error ~1e-7.
inline float TanhF(float x) { return 1.f - 2.f / (ExpF(2.f * x) + 1.f); }

}  // namespace kiln::cpu
