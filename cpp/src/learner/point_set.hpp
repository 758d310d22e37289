// The training points of the similarity family (standardised, row-major) and the squared distances its
// selection needs: one column D(x_j, .) per visited anchor, nearest distinct neighbours, coincident points.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rebelboost::learner {

class PointSet {
 public:
  // points: n x d row-major. Computes the squared norms and the groups of coincident points
  // (O(n log n d)). n_threads bounds the threads of squared_distances(); results never depend on it.
  PointSet(std::vector<double> points, std::size_t n, std::size_t d, int n_threads);

  std::size_t size() const { return n_; }
  std::size_t dim() const { return d_; }
  const double* point(std::size_t i) const { return points_.data() + i * d_; }

  // out[m] = ||x_j - x_m||^2 for every point m, as ||x_j||^2 + ||x_m||^2 - 2 <x_j, x_m> (Eigen, fixed
  // blocks of kBlock rows over OpenMP threads, so the bits never depend on the thread count), clamped
  // at 0, and exactly 0 for the points coincident with x_j. O(n d).
  void squared_distances(std::size_t j, double* out) const;

  // ||x_a - x_b||^2 summed over coordinates directly (no cancellation).
  double exact_squared_distance(std::size_t a, std::size_t b) const;

  // Smallest index of the points whose coordinates equal x_i's (a group of coincident points).
  std::uint32_t group(std::size_t i) const { return group_[i]; }
  // Number of distinct points (groups).
  std::size_t n_groups() const { return n_groups_; }

  // Exact squared distance from x_i to its nearest point not coincident with it, given
  // column = squared_distances(i); +inf when every point coincides with x_i. Recomputes exactly every
  // point whose expanded distance lies within the rounding bound of the smallest, so the result is the
  // exact minimum whatever the cancellation in the expanded form.
  double nearest_distinct(std::size_t i, const double* column) const;

  static constexpr std::size_t kBlock = 1024;

 private:
  // Bound on |expanded - exact| for the pair (a, b): 4 (d + 2) u (||x_a||^2 + ||x_b||^2).
  double rounding_bound(std::size_t a, std::size_t b) const;

  std::vector<double> points_;
  std::size_t n_;
  std::size_t d_;
  int n_threads_;
  std::vector<double> norms_;          // ||x_m||^2
  std::vector<std::uint32_t> group_;   // coincident points share the smallest index among them
  std::size_t n_groups_ = 0;
};

}  // namespace rebelboost::learner
