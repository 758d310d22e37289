// Weighted per-feature mean and standard deviation, overflow-free; standardised copies of X.
#include "learner/standardize.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "rebelboost/error.hpp"

namespace rebelboost::learner {

template <typename T>
Standardization fit_standardization(MatrixView<T> X, const double* sample_weight, bool global) {
  const std::size_t n = X.n_rows, d = X.n_cols;
  Standardization s{std::vector<double>(d), std::vector<double>(d, 0.0)};  // scale: the spread for now
  double weight_total = 0.0;
  for (std::size_t r = 0; r < n; ++r) weight_total += sample_weight ? sample_weight[r] : 1.0;
  for (std::size_t c = 0; c < d; ++c) {
    double largest = 0.0, low = HUGE_VAL, high = -HUGE_VAL;
    for (std::size_t r = 0; r < n; ++r) {
      const double v = static_cast<double>(X(r, c));
      largest = std::max(largest, std::fabs(v));
      low = std::min(low, v);
      high = std::max(high, v);
    }
    if (low == high) {  // constant (or a single row): no spread
      s.mean[c] = low;
      continue;
    }
    double mean = 0.0, var = 0.0;  // of x / largest, in [-1, 1]
    for (std::size_t r = 0; r < n; ++r) mean += (sample_weight ? sample_weight[r] : 1.0) * (static_cast<double>(X(r, c)) / largest);
    mean /= weight_total;
    for (std::size_t r = 0; r < n; ++r) {
      const double t = static_cast<double>(X(r, c)) / largest - mean;
      var += (sample_weight ? sample_weight[r] : 1.0) * t * t;
    }
    s.mean[c] = mean * largest;
    s.scale[c] = std::sqrt(var / weight_total) * largest;  // 0 if the spread sits on zero-weight rows only
  }
  if (global) {  // the root mean square of the spreads, each divided by the largest first (no overflow)
    const double top = *std::max_element(s.scale.begin(), s.scale.end());
    double sum = 0.0;
    for (const double v : s.scale) sum += top > 0.0 ? (v / top) * (v / top) : 0.0;
    const double common = top * std::sqrt(sum / static_cast<double>(d));
    std::fill(s.scale.begin(), s.scale.end(), common);
  }
  for (double& v : s.scale)
    if (!(v > 0.0)) v = 1.0;  // no spread at all: any positive scale leaves the feature constant
  return s;
}

template <typename T>
std::vector<double> standardize(MatrixView<T> X, const Standardization& s, const std::vector<std::size_t>& rows) {
  const std::size_t n = X.n_rows, d = X.n_cols;
  std::vector<double> z(n * d);
  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t src = rows.empty() ? r : rows[r];
    for (std::size_t c = 0; c < d; ++c) {
      const double v = standardized(static_cast<double>(X(src, c)), s.mean[c], s.scale[c]);
      if (!std::isfinite(v))
        throw InvalidArgument("feature " + std::to_string(c) + " spans more than the range of a double; rescale it");
      z[r * d + c] = v;
    }
  }
  return z;
}

template Standardization fit_standardization<float>(MatrixView<float>, const double*, bool);
template Standardization fit_standardization<double>(MatrixView<double>, const double*, bool);
template std::vector<double> standardize<float>(MatrixView<float>, const Standardization&, const std::vector<std::size_t>&);
template std::vector<double> standardize<double>(MatrixView<double>, const Standardization&, const std::vector<std::size_t>&);

}  // namespace rebelboost::learner
