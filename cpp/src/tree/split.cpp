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

}  // namespace rebelboost::tree
