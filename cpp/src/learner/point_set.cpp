// Squared distances between standardised training points: Eigen products in fixed row blocks.
#include "learner/point_set.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "model/similarity_function.hpp"
#include "util/parallel.hpp"

namespace rebelboost::learner {

namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

PointSet::PointSet(std::vector<double> points, std::size_t n, std::size_t d, int n_threads)
    : points_(std::move(points)), n_(n), d_(d), n_threads_(n_threads),
      block_rows_(std::clamp<std::size_t>((std::size_t{1} << 15) / std::max<std::size_t>(d, 1), 64, 2048)),
      norms_(n), group_(n) {
  const std::vector<double> origin(d_, 0.0);
  for (std::size_t m = 0; m < n_; ++m) norms_[m] = similarity::squared_distance(point(m), origin.data(), d_);
  // Coincident points: sort indices by their coordinates (lexicographic, index on ties), then equal runs
  // form a group named after its smallest index.
  std::vector<std::uint32_t> order(n_);
  std::iota(order.begin(), order.end(), 0u);
  auto less = [&](std::uint32_t a, std::uint32_t b) {
    const double* xa = point(a);
    const double* xb = point(b);
    for (std::size_t k = 0; k < d_; ++k)
      if (xa[k] != xb[k]) return xa[k] < xb[k];
    return a < b;
  };
  std::sort(order.begin(), order.end(), less);
  for (std::size_t r = 0; r < n_;) {
    std::size_t end = r + 1;
    while (end < n_ && std::equal(point(order[r]), point(order[r]) + d_, point(order[end]))) ++end;
    for (std::size_t s = r; s < end; ++s) group_[order[s]] = order[r];  // order[r]: smallest index of the run
    ++n_groups_;
    r = end;
  }
}

PointSet::Probes PointSet::probes(const std::uint32_t* index, std::size_t count) const {
  Probes p;
  p.index.assign(index, index + count);
  p.coordinates.resize(count * d_);
  for (std::size_t b = 0; b < count; ++b) std::copy(point(index[b]), point(index[b]) + d_, &p.coordinates[b * d_]);
  return p;
}

void PointSet::squared_distances(const Probes& probes, std::size_t begin, std::size_t end,
                                 double* const* columns) const {
  const auto d = static_cast<Eigen::Index>(d_);
  const auto rows = static_cast<Eigen::Index>(end - begin);
  const Eigen::Map<const RowMatrix> X(point(begin), rows, d);
  const Eigen::Map<const RowMatrix> P(probes.coordinates.data(), static_cast<Eigen::Index>(probes.index.size()), d);
  for (std::size_t b = 0; b < probes.index.size(); ++b) {
    Eigen::Map<Eigen::VectorXd> o(columns[b] + begin, rows);
    o.noalias() = X * P.row(static_cast<Eigen::Index>(b)).transpose();  // <x_m, probe_b>
    const std::uint32_t j = probes.index[b];
    for (Eigen::Index r = 0; r < rows; ++r) {
      const std::size_t m = begin + static_cast<std::size_t>(r);
      const double v = norms_[m] + norms_[j] - 2.0 * o[r];
      o[r] = group_[m] == group_[j] ? 0.0 : std::max(0.0, v);
    }
  }
}

void PointSet::squared_distances(const Probes& probes, double* const* columns) const {
  // Multiply-adds counted 4 to a threads_for step (they run in SIMD lanes).
  const std::size_t work = n_ * d_ * probes.index.size() / 4;
  util::parallel_for(n_blocks(), util::threads_for(work, n_threads_), [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * block_rows_;
    squared_distances(probes, begin, std::min(n_, begin + block_rows_), columns);
  });
}

void PointSet::squared_distances(std::size_t j, double* out) const {
  const std::uint32_t index = static_cast<std::uint32_t>(j);
  squared_distances(probes(&index, 1), &out);
}

double PointSet::exact_squared_distance(std::size_t a, std::size_t b) const {
  return similarity::squared_distance(point(a), point(b), d_);
}

double PointSet::rounding_bound(std::size_t a, std::size_t b) const {
  return 4.0 * static_cast<double>(d_ + 2) * std::numeric_limits<double>::epsilon() * (norms_[a] + norms_[b]);
}

double PointSet::nearest_distinct(std::size_t i, const double* column) const {
  // Exact distances e and expanded ones c satisfy |c - e| <= bound, so every point nearer than the
  // expanded minimum's exact distance has c <= min_c + 2 bound: recompute exactly those only.
  std::size_t nearest = n_;
  for (std::size_t m = 0; m < n_; ++m)
    if (group_[m] != group_[i] && (nearest == n_ || column[m] < column[nearest])) nearest = m;
  double best = std::numeric_limits<double>::infinity();
  if (nearest == n_) return best;
  // e_m < e_nearest implies c_m <= e_m + b_m < e_nearest + b_m <= c_nearest + b_nearest + b_m.
  const double reach = column[nearest] + rounding_bound(i, nearest);
  for (std::size_t m = 0; m < n_; ++m)
    if (group_[m] != group_[i] && column[m] <= reach + rounding_bound(i, m))
      best = std::min(best, exact_squared_distance(i, m));
  return best;
}

}  // namespace rebelboost::learner
