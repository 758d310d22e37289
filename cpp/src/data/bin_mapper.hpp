// Quantized-feature binning: per feature up to n_bins - 1 value bins of about equal count (quantiles that
// give heavily repeated values a bin of their own), plus a missing bin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/binned_matrix.hpp"
#include "rebelboost/matrix_view.hpp"

namespace rebelboost::data {

// Bin b of feature f holds the values x with edges[b-1] < x <= edges[b] (edges[-1] = -inf, the last
// value bin is unbounded above). Edges are midpoints between consecutive distinct training values, so
// a column with at most n_bins - 1 distinct values is binned exactly (one bin per value), and a tree
// threshold "x <= edges[b]" on raw values reproduces "code <= b" on the training data bit for bit.
class BinMapper {
 public:
  // n_bins in [3, 256] counts the missing bin; subsample = rows used to find edges when there are more
  // (evenly spaced if seed < 0, else a uniformly random subset drawn with the seed).
  BinMapper(int n_bins, std::size_t subsample, std::int64_t seed = -1);

  // Learns edges per feature from the rows with positive sample weight (all rows if sample_weight is
  // null), so a zero-weight row changes nothing. Throws InvalidArgument on +-inf (NaN is the missing bin).
  template <typename T>
  void fit(MatrixView<T> X, int n_threads, const double* sample_weight = nullptr);

  // Takes edges found elsewhere (a distributed fit's, from its global sample) for n_features features:
  // per feature at most n_bins - 2 finite, strictly increasing values. Throws InvalidArgument otherwise.
  void set_edges(const std::vector<std::vector<double>>& edges, std::size_t n_features);

  // Bins X with the learned edges; output row r is X's row rows[r] (rows == null: row r). Throws
  // InvalidArgument on +-inf or a column-count mismatch.
  template <typename T>
  BinnedMatrix transform(MatrixView<T> X, int n_threads, const std::size_t* rows = nullptr) const;

  int n_bins() const { return n_bins_; }
  std::uint8_t missing_bin() const { return static_cast<std::uint8_t>(n_bins_ - 1); }
  std::size_t n_features() const { return edges_.size(); }
  int n_value_bins(std::size_t feature) const { return static_cast<int>(edges_[feature].size()) + 1; }
  const std::vector<double>& edges(std::size_t feature) const { return edges_[feature]; }

  // Raw threshold of the split "codes <= bin go left": edges[bin], or +inf for the last value bin.
  double threshold(std::size_t feature, int bin) const;

 private:
  int n_bins_;
  std::size_t subsample_;
  std::int64_t seed_;
  std::vector<std::vector<double>> edges_;
};

// Sorted rows in [0, n_rows) used to find edges: all rows if n_rows <= subsample, else `subsample` rows,
// evenly spaced (seed < 0) or drawn uniformly without replacement (Knuth's selection sampling, splitmix64).
std::vector<std::size_t> subsample_rows(std::size_t n_rows, std::size_t subsample, std::int64_t seed);

// Edges for one column of (finite) values, sorted in place: exposed for tests.
std::vector<double> find_bin_edges(std::vector<double>& values, int max_value_bins);

}  // namespace rebelboost::data
