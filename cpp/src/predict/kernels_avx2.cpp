// The kernels with AVX2 compares (8 floats or 4 doubles per instruction); compiled with -mavx2.
#include <immintrin.h>

#include "predict/lane_kernel.hpp"

namespace rebelboost::predict {

namespace {

// kSign[n * 4 + q]: the sign bit where bit q of the nibble n is set (XOR flips a to -a there).
struct SignTable {
  alignas(32) std::uint64_t bits[64];
  constexpr SignTable() : bits() {
    for (int n = 0; n < 16; ++n)
      for (int q = 0; q < 4; ++q) bits[n * 4 + q] = ((n >> q) & 1) ? 0x8000000000000000ull : 0ull;
  }
};
constexpr SignTable kSign;

struct Avx2Ops {
  static constexpr bool kMasks = true;
  static std::uint32_t greater(const float* x, float thr) {
    const __m256 t = _mm256_set1_ps(thr);
    const int lo = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x), t, _CMP_GT_OQ));
    const int hi = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + 8), t, _CMP_GT_OQ));
    return static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 8);
  }
  static std::uint32_t not_le(const float* x, float thr) {
    const __m256 t = _mm256_set1_ps(thr);
    const int lo = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x), t, _CMP_NLE_UQ));
    const int hi = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + 8), t, _CMP_NLE_UQ));
    return static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 8);
  }
  template <int kPredicate>
  static std::uint32_t compare(const double* x, double thr) {
    const __m256d t = _mm256_set1_pd(thr);
    std::uint32_t m = 0;
    for (int q = 0; q < 4; ++q)
      m |= static_cast<std::uint32_t>(_mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(x + 4 * q), t, kPredicate))) << (4 * q);
    return m;
  }
  static std::uint32_t greater(const double* x, double thr) { return compare<_CMP_GT_OQ>(x, thr); }
  static std::uint32_t not_le(const double* x, double thr) { return compare<_CMP_NLE_UQ>(x, thr); }
  static void add(double* acc, double a, std::uint32_t neg) {
    const __m256d av = _mm256_set1_pd(a);
    for (int q = 0; q < 4; ++q) {
      const __m256d sign = _mm256_load_pd(reinterpret_cast<const double*>(kSign.bits + 4 * ((neg >> (4 * q)) & 15u)));
      _mm256_storeu_pd(acc + 4 * q, _mm256_add_pd(_mm256_loadu_pd(acc + 4 * q), _mm256_xor_pd(av, sign)));
    }
  }
};

}  // namespace

const Kernels* avx2_kernels() {
  static const Kernels kernels = make_kernels<Avx2Ops>("avx2");
  return __builtin_cpu_supports("avx2") ? &kernels : nullptr;
}

}  // namespace rebelboost::predict
