// Deterministic random problems and small helpers shared by the stage tests.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "rebelboost/matrix_view.hpp"

namespace rebelboost::testing {

// A dense matrix stored row-major (C order) with helpers to produce the other layouts.
template <typename T>
struct Dense {
  std::size_t n_rows = 0;
  std::size_t n_cols = 0;
  std::vector<T> c_order;  // element (r, c) at r * n_cols + c

  T& at(std::size_t r, std::size_t c) { return c_order[r * n_cols + c]; }
  T at(std::size_t r, std::size_t c) const { return c_order[r * n_cols + c]; }

  MatrixView<T> c_view() const { return MatrixView<T>::row_major(c_order.data(), n_rows, n_cols); }

  // Fortran-order copy; the returned buffer must outlive views made from it.
  std::vector<T> f_order() const {
    std::vector<T> out(c_order.size());
    for (std::size_t r = 0; r < n_rows; ++r)
      for (std::size_t c = 0; c < n_cols; ++c) out[c * n_rows + r] = at(r, c);
    return out;
  }

  template <typename U>
  Dense<U> cast() const {
    Dense<U> out{n_rows, n_cols, std::vector<U>(c_order.size())};
    for (std::size_t i = 0; i < c_order.size(); ++i) out.c_order[i] = static_cast<U>(c_order[i]);
    return out;
  }
};

// Gaussian features with a fraction of NaN entries.
inline Dense<double> random_matrix(std::size_t n_rows, std::size_t n_cols, std::uint64_t seed,
                                   double nan_fraction = 0.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Dense<double> X{n_rows, n_cols, std::vector<double>(n_rows * n_cols)};
  for (double& v : X.c_order) v = unit(rng) < nan_fraction ? std::nan("") : normal(rng);
  return X;
}

// Labels in {0, 1} from a noisy linear rule on the first two features (NaN counts as 0).
inline std::vector<std::int32_t> noisy_labels(const Dense<double>& X, std::uint64_t seed, double flip = 0.1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::int32_t> y(X.n_rows);
  for (std::size_t r = 0; r < X.n_rows; ++r) {
    double s = 0.0;
    for (std::size_t c = 0; c < X.n_cols && c < 2; ++c)
      if (!std::isnan(X.at(r, c))) s += (c == 0 ? 1.0 : 0.7) * X.at(r, c);
    y[r] = (s > 0.1) != (unit(rng) < flip) ? 1 : 0;
  }
  return y;
}

// n points of d standard normal coordinates (row-major), for the similarity family's tests.
inline std::vector<double> random_points(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(n * d);
  for (double& v : x) v = normal(rng);
  return x;
}

// REBEL-style signed weights s_nk = y_nk w_nk (n x K row-major) for random labels in [0, K): w_nk > 0
// log-uniform over `spread` decades, negative in the slot of the label (y_nk = 1 - 2 delta_{y_n}).
inline std::vector<double> random_signed_weights(std::size_t n, std::size_t K, std::uint64_t seed,
                                                 double spread = 2.0, std::vector<std::int32_t>* labels = nullptr) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> s(n * K);
  for (std::size_t r = 0; r < n; ++r) {
    const auto y = static_cast<std::size_t>(rng() % K);
    if (labels) labels->push_back(static_cast<std::int32_t>(y));
    for (std::size_t k = 0; k < K; ++k) s[r * K + k] = (k == y ? -1.0 : 1.0) * std::pow(10.0, -spread * unit(rng));
  }
  return s;
}

}  // namespace rebelboost::testing
