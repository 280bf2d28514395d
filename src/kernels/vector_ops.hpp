// What the kernels' hot loops share: the build of each loop for two CPU levels, how far ahead rows are fetched,
// the two vector operations on rows, and a score's negative-sampling loss with its derivative.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

// The hot loops are built twice, for x86-64-v3 (AVX2, FMA) and for the baseline, and the loader picks the one the
// CPU runs: one binary serves every x86-64 CPU.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FEDAVG_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define FEDAVG_CLONES
#endif

namespace fedavg::kernels {

constexpr std::int64_t kAhead = 2;  // windows between a prefetch and the rows' use

inline float dot(const float* a, const float* b, std::int64_t d) {
  float s = 0.0f;
#pragma omp simd reduction(+ : s)
  for (std::int64_t i = 0; i < d; ++i) s += a[i] * b[i];
  return s;
}

inline void axpy(float a, const float* x, float* y, std::int64_t d) {
#pragma omp simd
  for (std::int64_t i = 0; i < d; ++i) y[i] += a * x[i];
}

// softplus(z), the loss of a word whose signed score is z, and sigmoid(z), its derivative; stable for any z.
struct Softplus {
  float loss;
  float sigmoid;
};
inline Softplus softplus(float z) {
  const float e = std::exp(-std::fabs(z));
  return {std::max(z, 0.0f) + std::log1p(e), z >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e)};
}

}  // namespace fedavg::kernels
