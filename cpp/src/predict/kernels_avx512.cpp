// The kernels with AVX-512 compares into mask registers (16 floats or 8 doubles per instruction).
#include <immintrin.h>

#include "predict/lane_kernel.hpp"

namespace rebelboost::predict {

namespace {

struct Avx512Ops {
  static constexpr bool kMasks = true;
  static std::uint32_t greater(const float* x, float thr) {
    return _mm512_cmp_ps_mask(_mm512_loadu_ps(x), _mm512_set1_ps(thr), _CMP_GT_OQ);
  }
  static std::uint32_t not_le(const float* x, float thr) {
    return _mm512_cmp_ps_mask(_mm512_loadu_ps(x), _mm512_set1_ps(thr), _CMP_NLE_UQ);
  }
  template <int kPredicate>
  static std::uint32_t compare(const double* x, double thr) {
    const __m512d t = _mm512_set1_pd(thr);
    const std::uint32_t lo = _mm512_cmp_pd_mask(_mm512_loadu_pd(x), t, kPredicate);
    const std::uint32_t hi = _mm512_cmp_pd_mask(_mm512_loadu_pd(x + 8), t, kPredicate);
    return lo | (hi << 8);
  }
  static std::uint32_t greater(const double* x, double thr) { return compare<_CMP_GT_OQ>(x, thr); }
  static std::uint32_t not_le(const double* x, double thr) { return compare<_CMP_NLE_UQ>(x, thr); }
  static void add(double* acc, double a, std::uint32_t neg) {
    const __m512d av = _mm512_set1_pd(a);
    const __m512d nav = _mm512_xor_pd(av, _mm512_set1_pd(-0.0));  // exact -a, also for a = 0
    const __m512d lo = _mm512_mask_blend_pd(static_cast<__mmask8>(neg), av, nav);
    const __m512d hi = _mm512_mask_blend_pd(static_cast<__mmask8>(neg >> 8), av, nav);
    _mm512_storeu_pd(acc, _mm512_add_pd(_mm512_loadu_pd(acc), lo));
    _mm512_storeu_pd(acc + 8, _mm512_add_pd(_mm512_loadu_pd(acc + 8), hi));
  }
};

}  // namespace

const Kernels* avx512_kernels() {
  static const Kernels kernels = make_kernels<Avx512Ops>("avx512");
  const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return ok ? &kernels : nullptr;
}

}  // namespace rebelboost::predict
