// Subcosts for any surrogate g: per class, theta by bisection, then c+_k = theta r(c_k / theta).
#include "loss/subcosts.hpp"

#include <algorithm>
#include <cmath>

namespace rebelboost::loss {

namespace {

// mean_{k != y, c_k > 0 counted as all k != y} r(c_k / theta) - 1: decreasing in theta.
double excess(const double* row, std::size_t K, std::size_t y, double theta, PairMinInverse r_of) {
  double sum = 0.0;
  for (std::size_t k = 0; k < K; ++k)
    if (k != y && row[k] > 0.0) sum += r_of(row[k] / theta);
  return sum / static_cast<double>(K - 1) - 1.0;
}

// The theta with excess(theta) = 0, for a row with some positive cost.
double solve_theta(const double* row, std::size_t K, std::size_t y, PairMinInverse r_of) {
  double lo = 0.0;
  for (std::size_t k = 0; k < K; ++k) lo = std::max(lo, row[k]);
  lo *= 0.5;  // the answer for equal costs
  double hi = lo;
  for (int i = 0; i < 2100 && excess(row, K, y, hi, r_of) > 0.0; ++i) hi *= 2.0;
  for (int i = 0; i < 2100 && !(excess(row, K, y, lo, r_of) > 0.0); ++i) lo *= 0.5;
  for (int i = 0; i < 200 && hi - lo > 1e-16 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (excess(row, K, y, mid, r_of) > 0.0 ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

Subcosts coupled_subcosts(const std::vector<double>& cost, std::size_t K, PairMinInverse r_of) {
  Subcosts s{std::vector<double>(K * K, 0.0), std::vector<double>(K, 0.0)};
  for (std::size_t y = 0; y < K; ++y) {
    const double* row = &cost[y * K];
    double first = -1.0;
    bool equal = true;  // every off-diagonal cost the same: theta = c / 2 and c+ = theta (pair_min(1) = 2)
    for (std::size_t k = 0; k < K; ++k) {
      if (k == y) continue;
      if (first < 0.0) first = row[k];
      equal = equal && row[k] == first;
    }
    const double theta = equal ? 0.5 * first : solve_theta(row, K, y, r_of);
    s.minus[y] = theta;
    for (std::size_t k = 0; k < K; ++k)
      if (k != y && row[k] > 0.0) s.plus[y * K + k] = equal ? theta : theta * r_of(row[k] / theta);
  }
  return s;
}

}  // namespace rebelboost::loss
