// Localized Similarities as functions of squared distances (thesis §5.4), shared by training and prediction.
//
// Every learner output needs only the squared distances D_i = ||z - a_i||^2 (and D_j) from the query to
// its anchors, so training (distances by columns, Eigen) and prediction (distances per row) evaluate the
// same formulas. For the two-point learner, with q = ||d||^2 = ||a_i - a_j||^2 / 4:
//   <d, z - m>   = (D_j - D_i) / 4                 (difference of the two squared distances)
//   ||z - m||^2  = (D_i + D_j) / 2 - q              (parallelogram law)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace rebelboost::similarity {

// c of f_ij = c q <d, z - m> / (4 q^2 + ||z - m||^4): along d the raw ratio peaks at ||z - m|| =
// (4/3)^(1/4) ||d|| with value 3 (4/3)^(1/4) / (16 q), so c = 16 / (3 (4/3)^(1/4)) makes max |f| = 1.
inline const double kTwoPointScale = 16.0 / (3.0 * std::pow(4.0 / 3.0, 0.25));

// One-point learner: (tau - D_i) / (tau + D_i), tau > 0, D_i >= 0; -1 in the limit D_i = inf.
inline double one_point(double tau, double d_i) {
  if (!(d_i < HUGE_VAL)) return -1.0;
  return (tau - d_i) / (tau + d_i);
}

// Two-point learner from q = ||a_i - a_j||^2 / 4 > 0 and the query's squared distances to a_i and a_j.
// Clamped to [-1, 1] (rounding); 0 in the limit of a query infinitely far away, and 0 where the
// denominator underflows to 0 (anchors closer than ~1e-154 and the query at their midpoint, where f is 0;
// a hostile file made this 0 / 0 = NaN).
inline double two_point(double q, double d_i, double d_j) {
  if (!(d_i < HUGE_VAL) || !(d_j < HUGE_VAL)) return 0.0;
  const double along = 0.25 * (d_j - d_i);
  const double m2 = std::max(0.0, 0.5 * (d_i + d_j) - q);
  const double denominator = 4.0 * q * q + m2 * m2;
  if (!(denominator < HUGE_VAL) || !(denominator > 0.0)) return 0.0;
  return std::clamp(kTwoPointScale * q * (along / denominator), -1.0, 1.0);
}

// sum_k (a_k - b_k)^2 over d coordinates in a fixed order (four interleaved partial sums): no cancellation
// and the same bits wherever a and b sit in memory.
inline double squared_distance(const double* a, const double* b, std::size_t d) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  std::size_t k = 0;
  for (; k + 4 <= d; k += 4)
    for (std::size_t l = 0; l < 4; ++l) {
      const double t = a[k + l] - b[k + l];
      s[l] += t * t;
    }
  for (; k < d; ++k) {
    const double t = a[k] - b[k];
    s[0] += t * t;
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

}  // namespace rebelboost::similarity
