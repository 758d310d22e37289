// The exact step of a real-valued weak learner: per class, the minimiser of a sum of exponentials
// (1-D convex) by safeguarded Newton.
//
//   phi_k(a) = sum_n c_nk exp(g_nk a) + eps (e^a + e^-a),   c_nk >= 0, |g_nk| <= 1, eps >= 0
//
// The eps terms are the closed form's smoothing (two phantom samples with g = +-1), so for g in {+-1} the
// minimiser is the closed form 1/2 ln((s- + eps) / (s+ + eps)). The caller evaluates the unsmoothed sums
// of every class in one pass over its samples; each pass advances every unconverged class by one
// Newton step, bisecting inside the bracket [lo, hi] that the signs of phi' keep whenever Newton would
// leave it. The search stays in [-bound, bound]: a minimiser beyond it is replaced by the bound, which
// still lowers phi_k (phi_k is convex and falls from 0 toward it).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "loss/newton_step.hpp"

namespace rebelboost::loss {

// Unsmoothed sums of one pass, per class: sum c e^{g a}, sum c g e^{g a}, sum c g^2 e^{g a}.
struct ExpSums {
  std::vector<double> value, slope, curvature;
  explicit ExpSums(std::size_t K) : value(K, 0.0), slope(K, 0.0), curvature(K, 0.0) {}
};

// evaluate(a, active) -> ExpSums at the K-vector a, for the classes with active[k] != 0 (others may be
// left 0). start: the first guess (e.g. the closed form of the convexity bound). Deterministic: the
// iterates depend only on the sums. The solve is newton_step.hpp's, with plain Newton steps.
template <typename Evaluate>
std::vector<double> minimise_exp_sums(std::vector<double> a, double eps, double bound, Evaluate&& evaluate) {
  constexpr NewtonRule kExpRule{200, 1e-13, false, true};
  const std::size_t K = a.size();
  for (std::size_t k = 0; k < K; ++k) a[k] = std::fmin(std::fmax(a[k], -bound), bound);
  return newton_minimise(
      std::move(a), bound,
      [&](const std::vector<double>& at, const std::vector<std::uint8_t>& active) {
        const ExpSums sums = evaluate(at, active);
        SlopeCurvature d(K);
        for (std::size_t k = 0; k < K; ++k) {
          if (!active[k]) continue;
          const double up = std::exp(at[k]), down = std::exp(-at[k]);
          d.slope[k] = sums.slope[k] + eps * (up - down);
          d.curvature[k] = sums.curvature[k] + eps * (up + down);
        }
        return d;
      },
      kExpRule);
}

}  // namespace rebelboost::loss
