// Exact integer split search over bin boundaries (no floating point: ties are decided by index).
#include "tree/split.hpp"


namespace rebelboost::tree {

SplitInfo best_split(const std::int64_t* hist, int n_value_bins, int missing_bin, std::int32_t feature) {
  std::int64_t values_total = 0;
  for (int b = 0; b < n_value_bins; ++b) values_total += hist[b];
  const std::int64_t missing = hist[missing_bin];
  const std::int64_t node_total = values_total + missing;

  SplitInfo best;
  best.score = abs64(node_total);  // a split must beat the unsplit node strictly
  std::int64_t left = 0;
  // bin == n_value_bins - 1 sends every value left: a split on missingness, NaN right.
  for (int bin = 0; bin < n_value_bins; ++bin) {
    left += hist[bin];
    const std::int64_t right = values_total - left;
    const std::int64_t nan_right_score = abs64(left) + abs64(right + missing);
    if (nan_right_score > best.score) {
      best.score = nan_right_score;
      best.bin = bin;
      best.nan_left = false;
      best.left_sum = left;
      best.right_sum = right + missing;
    }
    if (missing != 0 && bin < n_value_bins - 1) {
      const std::int64_t nan_left_score = abs64(left + missing) + abs64(right);
      if (nan_left_score > best.score) {
        best.score = nan_left_score;
        best.bin = bin;
        best.nan_left = true;
        best.left_sum = left + missing;
        best.right_sum = right;
      }
    }
  }
  if (best.bin >= 0) best.feature = feature;
  return best;
}

namespace {

// The best split whose side scores `side(S, T)` (larger is purer) sum highest, by `scale` x (left + right -
// unsplit) > 0 strictly; every candidate of best_split (NaN right, and NaN left when there are NaN) whose
// sides both hold at least min_t.
template <typename Side>
SplitInfo best_split_impurity(const std::int64_t* signed_hist, const std::int64_t* abs_hist, int n_value_bins,
                              int missing_bin, std::int32_t feature, double scale, Side side, std::int64_t min_t = 0) {
  std::int64_t vs = 0, vt = 0;
  for (int b = 0; b < n_value_bins; ++b) {
    vs += signed_hist[b];
    vt += abs_hist[b];
  }
  const std::int64_t ms = signed_hist[missing_bin], mt = abs_hist[missing_bin];
  const double unsplit = side(vs + ms, vt + mt);
  SplitInfo best;
  best.score = 0;
  double best_gain = 0.0;  // must be strictly positive
  std::int64_t ls = 0, lt = 0;
  for (int bin = 0; bin < n_value_bins; ++bin) {
    ls += signed_hist[bin];
    lt += abs_hist[bin];
    const std::int64_t rs = vs - ls, rt = vt - lt;
    const double right_gain = scale * (side(ls, lt) + side(rs + ms, rt + mt) - unsplit);
    if (right_gain > best_gain && lt >= min_t && rt + mt >= min_t) {
      best_gain = right_gain;
      best.bin = bin;
      best.nan_left = false;
      best.left_sum = ls;
      best.right_sum = rs + ms;
    }
    if (mt != 0 && bin < n_value_bins - 1) {
      const double left_gain = scale * (side(ls + ms, lt + mt) + side(rs, rt) - unsplit);
      if (left_gain > best_gain && lt + mt >= min_t && rt >= min_t) {
        best_gain = left_gain;
        best.bin = bin;
        best.nan_left = true;
        best.left_sum = ls + ms;
        best.right_sum = rs;
      }
    }
  }
  if (best.bin >= 0) {
    best.feature = feature;
    best.gini_gain = best_gain;
  }
  return best;
}

}  // namespace

SplitInfo best_split_gini(const std::int64_t* signed_hist, const std::int64_t* abs_hist, int n_value_bins,
                          int missing_bin, std::int32_t feature) {
  return best_split_impurity(signed_hist, abs_hist, n_value_bins, missing_bin, feature, 0.5, purity);
}

SplitInfo best_split_entropy(const std::int64_t* signed_hist, const std::int64_t* abs_hist, int n_value_bins,
                             int missing_bin, std::int32_t feature) {
  return best_split_impurity(signed_hist, abs_hist, n_value_bins, missing_bin, feature, 1.0, negentropy);
}

SplitInfo best_split_variance(const std::int64_t* sum_hist, const std::int64_t* weight_hist, int n_value_bins,
                              int missing_bin, std::int32_t feature, std::int64_t min_side_weight) {
  return best_split_impurity(sum_hist, weight_hist, n_value_bins, missing_bin, feature, 0.5, purity, min_side_weight);
}

}  // namespace rebelboost::tree
