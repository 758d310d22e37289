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

  // Points to measure distances to, gathered once (row-major count x d).
  struct Probes {
    std::vector<std::uint32_t> index;
    std::vector<double> coordinates;
  };
  Probes probes(const std::uint32_t* index, std::size_t count) const;

  // columns[b][m] = ||x_m - probe_b||^2 for the rows m in [begin, end), as ||x_m||^2 + ||probe_b||^2 -
  // 2 <x_m, probe_b> (an Eigen matrix-vector product per probe, so a value does not depend on the other
  // probes), clamped at 0, and exactly 0 for the points coincident with the probe. One thread. Callers
  // split rows into the fixed blocks of block_rows(), so a value never depends on the thread count
  // either. O((end - begin) d count).
  void squared_distances(const Probes& probes, std::size_t begin, std::size_t end, double* const* columns) const;

  // columns[b][m] = ||x_m - probe_b||^2 for every point m: the above over the blocks, in parallel.
  void squared_distances(const Probes& probes, double* const* columns) const;

  // out[m] = ||x_j - x_m||^2 for every point m (the same bits as j's column among any probes).
  void squared_distances(std::size_t j, double* out) const;

  // Rows per block: about 256 KiB of coordinates (64 to 2048 rows), so a block stays in cache while
  // several probes read it.
  std::size_t block_rows() const { return block_rows_; }
  std::ptrdiff_t n_blocks() const { return static_cast<std::ptrdiff_t>((n_ + block_rows_ - 1) / block_rows_); }

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

 private:
  // Bound on |expanded - exact| for the pair (a, b): 4 (d + 2) u (||x_a||^2 + ||x_b||^2).
  double rounding_bound(std::size_t a, std::size_t b) const;

  std::vector<double> points_;
  std::size_t n_;
  std::size_t d_;
  int n_threads_;
  std::size_t block_rows_;
  std::vector<double> norms_;          // ||x_m||^2
  std::vector<std::uint32_t> group_;   // coincident points share the smallest index among them
  std::size_t n_groups_ = 0;
};

}  // namespace rebelboost::learner
