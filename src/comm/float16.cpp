#include "comm/float16.hpp"

#include <cstring>

// GCC only: clang 14 (clang-tidy's) rejects "f16c" in __builtin_cpu_supports; there the portable path runs.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define FEDAVG_F16C 1
#endif

namespace fedavg::comm {
namespace {

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float value(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

#ifdef FEDAVG_F16C
__attribute__((target("avx,f16c"))) void to_float16_f16c(const float* in, std::uint16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  for (; i < n; ++i) out[i] = to_float16(in[i]);
}

__attribute__((target("avx,f16c"))) void from_float16_f16c(const std::uint16_t* in, float* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  for (; i < n; ++i) out[i] = from_float16(in[i]);
}

__attribute__((target("avx,f16c"))) void round_f16c(float* v, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(
        v + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(v + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
  for (; i < n; ++i) v[i] = from_float16(to_float16(v[i]));
}

bool has_f16c() {
  static const bool yes = __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  return yes;
}
#endif

}  // namespace

void to_float16(const float* in, std::uint16_t* out, std::size_t n) {
#ifdef FEDAVG_F16C
  if (has_f16c()) return to_float16_f16c(in, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = to_float16(in[i]);
}

void from_float16(const std::uint16_t* in, float* out, std::size_t n) {
#ifdef FEDAVG_F16C
  if (has_f16c()) return from_float16_f16c(in, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = from_float16(in[i]);
}

void round_to_float16(float* v, std::size_t n) {
#ifdef FEDAVG_F16C
  if (has_f16c()) return round_f16c(v, n);
#endif
  for (std::size_t i = 0; i < n; ++i) v[i] = from_float16(to_float16(v[i]));
}

std::uint16_t to_float16(float f) {
  const std::uint32_t u = bits(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const std::uint32_t exp = (u >> 23) & 0xffu;
  std::uint32_t mant = u & 0x7fffffu;
  if (exp == 0xffu) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf, nan
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);  // too large: infinity
  if (e <= 0) {                                                    // subnormal or zero
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    const std::uint32_t rest = mant & ((1u << shift) - 1);
    const std::uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: still right
  return static_cast<std::uint16_t>(sign | half);
}

float from_float16(std::uint16_t h) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) return value(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return value(sign);
    int e = -1;
    do {  // normalise the subnormal
      mant <<= 1;
      ++e;
    } while (!(mant & 0x400u));
    return value(sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13));
  }
  return value(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

std::uint16_t to_bfloat16(float f) {
  const std::uint32_t u = bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // nan
  const std::uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

float from_bfloat16(std::uint16_t b) { return value(static_cast<std::uint32_t>(b) << 16); }

}  // namespace fedavg::comm
