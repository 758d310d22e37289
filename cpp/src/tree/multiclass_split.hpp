// The joint root split of a multi-class (REBEL) tree: K-vector histograms, loss 2 sum_k sqrt(s+_k s-_k).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"

namespace rebelboost::tree {

struct RootSplit {
  bool found = false;
  std::int32_t feature = -1;
  std::int32_t bin = -1;
  bool nan_left = false;
  double loss = 0.0;           // sum_k sqrt(s+_k s-_k) of the split (fixed-point units squared, rooted)
  double loss_unsplit = 0.0;   // the same for the homogeneous learner
  std::int64_t bin_accumulations = 0;
};

// Best root split for the labelling left = -1, right = +1 (its mirror image has the same loss).
// v: n x K fixed-point vectors (w+_nk for k != y_n, w-_n in slot y_n) for rows sorted by class, with
// class c in rows [class_begin[c], class_begin[c+1]). Per bin and class the histograms give
// W-_k(b) (the class-k block's slot k) and W+_k(b) (every other row's slot k); then
//   s+_k = R+_k + L-_k,  s-_k = R-_k + L+_k   (thesis Eq. 4.8 with f = -1 left, +1 right).
// A split must be strictly better than the unsplit node; ties go to (feature, bin, NaN right first).
// OpenMP over groups of features; the result does not depend on n_threads.
RootSplit best_multiclass_root(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* v,
                               std::size_t K, const std::vector<std::size_t>& class_begin, int n_threads,
                               const std::uint8_t* active_features = nullptr);

// The split loss for one feature from its bin sums (wplus/wminus: kHistBins x K each), exposed for tests.
void evaluate_multiclass_feature(const std::int64_t* wplus, const std::int64_t* wminus, std::size_t K,
                                 int n_value_bins, int missing_bin, std::int32_t feature, RootSplit& best);

}  // namespace rebelboost::tree
