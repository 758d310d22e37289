// The baseline kernels (SSE2 on x86-64, plain C++ elsewhere) and the run-time choice of the fastest set.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "predict/lane_kernel.hpp"

namespace rebelboost::predict {

namespace {

#if defined(__SSE2__)
// x86-64 always has SSE2: compares of 4 floats or 2 doubles at a time, masks by movemask.
struct GenericOps {
  static constexpr bool kMasks = true;
  static std::uint32_t greater(const float* x, float thr) {
    const __m128 t = _mm_set1_ps(thr);
    std::uint32_t m = 0;
    for (int q = 0; q < 4; ++q)
      m |= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmpgt_ps(_mm_loadu_ps(x + 4 * q), t))) << (4 * q);
    return m;
  }
  static std::uint32_t not_le(const float* x, float thr) {
    const __m128 t = _mm_set1_ps(thr);
    std::uint32_t m = 0;
    for (int q = 0; q < 4; ++q)
      m |= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmpnle_ps(_mm_loadu_ps(x + 4 * q), t))) << (4 * q);
    return m;
  }
  static std::uint32_t greater(const double* x, double thr) {
    const __m128d t = _mm_set1_pd(thr);
    std::uint32_t m = 0;
    for (int q = 0; q < 8; ++q)
      m |= static_cast<std::uint32_t>(_mm_movemask_pd(_mm_cmpgt_pd(_mm_loadu_pd(x + 2 * q), t))) << (2 * q);
    return m;
  }
  static std::uint32_t not_le(const double* x, double thr) {
    const __m128d t = _mm_set1_pd(thr);
    std::uint32_t m = 0;
    for (int q = 0; q < 8; ++q)
      m |= static_cast<std::uint32_t>(_mm_movemask_pd(_mm_cmpnle_pd(_mm_loadu_pd(x + 2 * q), t))) << (2 * q);
    return m;
  }
  static void add(double* acc, double a, std::uint32_t neg) {
    // kSign[n]: the sign bits of the lane pair whose negation bits are n (XOR flips a to -a there).
    static const __m128d kSign[4] = {_mm_castsi128_pd(_mm_set_epi64x(0, 0)),
                                     _mm_castsi128_pd(_mm_set_epi64x(0, INT64_MIN)),
                                     _mm_castsi128_pd(_mm_set_epi64x(INT64_MIN, 0)),
                                     _mm_castsi128_pd(_mm_set_epi64x(INT64_MIN, INT64_MIN))};
    const __m128d av = _mm_set1_pd(a);
    for (int q = 0; q < 8; ++q)
      _mm_storeu_pd(acc + 2 * q, _mm_add_pd(_mm_loadu_pd(acc + 2 * q), _mm_xor_pd(av, kSign[(neg >> (2 * q)) & 3u])));
  }
};
#else
// Elsewhere plain C++: every tree is walked per lane (16 scalar compares per split would cost more).
struct GenericOps {
  static constexpr bool kMasks = false;
  template <typename T>
  static std::uint32_t greater(const T* x, T thr) {
    std::uint32_t m = 0;
    for (std::uint32_t j = 0; j < kLanes; ++j) m |= static_cast<std::uint32_t>(x[j] > thr) << j;
    return m;
  }
  template <typename T>
  static std::uint32_t not_le(const T* x, T thr) {
    std::uint32_t m = 0;
    for (std::uint32_t j = 0; j < kLanes; ++j) m |= static_cast<std::uint32_t>(!(x[j] <= thr)) << j;
    return m;
  }
  static void add(double* acc, double a, std::uint32_t neg) {
    for (std::uint32_t j = 0; j < kLanes; ++j) acc[j] += ((neg >> j) & 1u) ? -a : a;
  }
};
#endif

}  // namespace

const Kernels& generic_kernels() {
  static const Kernels kernels = make_kernels<GenericOps>("generic");
  return kernels;
}

#ifndef REBELBOOST_X86_KERNELS
const Kernels* avx2_kernels() { return nullptr; }
const Kernels* avx512_kernels() { return nullptr; }
#endif

const Kernels& best_kernels() {
  static const Kernels* chosen = [] {
    const char* want = std::getenv("REBELBOOST_KERNELS");
    const Kernels* avx512 = avx512_kernels();
    const Kernels* avx2 = avx2_kernels();
    if (want && std::strcmp(want, "generic") == 0) return &generic_kernels();
    if (want && std::strcmp(want, "avx2") == 0 && avx2) return avx2;
    if (avx512) return avx512;
    if (avx2) return avx2;
    return &generic_kernels();
  }();
  return *chosen;
}

}  // namespace rebelboost::predict
