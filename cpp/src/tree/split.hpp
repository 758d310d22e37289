// Split search on one node histogram: the best "codes <= bin go left" threshold and NaN direction.
//
// Every loss hands the grower one signed fixed-point value per sample, g_n = l_n(-1) - l_n(+1): the
// loss decrease bought by predicting +1 instead of -1 (docs/design/contracts.md "Loss"; for AdaBoost g_n = y_n w_n).
// With leaf values chosen freely, a node with value sum D costs const - |D| / 2, so a split into sums
// L and R is worth |L| + |R| and is taken only if |L| + |R| > |D| (a strict improvement).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace rebelboost::tree {

struct SplitInfo {
  std::int64_t score = std::numeric_limits<std::int64_t>::min();  // |L| + |R|
  double gini_gain = 0.0;     // Gini criterion only: decrease of the weighted impurity (fixed-point units)
  std::int32_t feature = -1;
  std::int32_t bin = -1;      // value bins 0..bin go left
  bool nan_left = false;
  std::int64_t left_sum = 0;
  std::int64_t right_sum = 0;

  bool found() const { return feature >= 0; }
};

// The one tie rule of every split search (full or pruned, scalar or multi-class): among splits of equal
// loss, the lower feature, then the lower bin, then NaN right first.
inline bool earlier_position(std::int32_t feature_a, std::int32_t bin_a, bool nan_left_a, std::int32_t feature_b,
                             std::int32_t bin_b, bool nan_left_b) {
  if (feature_a != feature_b) return feature_a < feature_b;
  if (bin_a != bin_b) return bin_a < bin_b;
  return !nan_left_a && nan_left_b;
}

// Strict order used to pick the winner: higher score (Gini: higher gain), then the tie rule.
inline bool better(const SplitInfo& a, const SplitInfo& b) {
  if (a.score != b.score) return a.score > b.score;
  if (a.gini_gain != b.gini_gain) return a.gini_gain > b.gini_gain;
  return earlier_position(a.feature, a.bin, a.nan_left, b.feature, b.bin, b.nan_left);
}

// The winner of candidates (per feature, say) by better(): found() == false when none is found.
template <typename Range>
SplitInfo best_of(const Range& candidates) {
  SplitInfo w;
  for (const SplitInfo& c : candidates)
    if (c.found() && (!w.found() || better(c, w))) w = c;
  return w;
}

// Best split of `feature` from its node histogram (value bins 0..n_value_bins-1, NaN in missing_bin).
// Returns a SplitInfo with found() == false unless some split has score > |node sum| (strictly).
SplitInfo best_split(const std::int64_t* hist, int n_value_bins, int missing_bin, std::int32_t feature);

inline std::int64_t abs64(std::int64_t v) { return v < 0 ? -v : v; }

// The same search under the weighted Gini impurity (as scikit-learn's trees): `signed_hist` holds the
// split values q (sign = class, |q| = weight) per bin, `abs_hist` their absolute values. A side with
// signed sum S and weight T has impurity (T^2 - S^2) / (2T); the split with the largest decrease of the
// summed impurity wins, if the decrease is positive. score is 0 for every impurity split, so better()
// compares gini_gain (which holds the decrease for every impurity criterion).
SplitInfo best_split_gini(const std::int64_t* signed_hist, const std::int64_t* abs_hist, int n_value_bins,
                          int missing_bin, std::int32_t feature);

// The same with the weighted entropy (information gain; docs/quickboost.md): a side with class weights
// Z1 = (T + S) / 2 and Z0 = (T - S) / 2 has entropy T ln T - Z1 ln Z1 - Z0 ln Z0 (unnormalised).
SplitInfo best_split_entropy(const std::int64_t* signed_hist, const std::int64_t* abs_hist, int n_value_bins,
                             int missing_bin, std::int32_t feature);

// The variance criterion (regression trees): per bin S = sum w r and W = sum w of the rows' targets r and
// weights w. A side's weighted squared error is sum w r^2 - S^2 / W; gini_gain holds half the decrease,
// (S_L^2 / W_L + S_R^2 / W_R - S^2 / W) / 2, which is the same formula as Gini's on (S, W). Splits that
// leave either side less weight than min_side_weight are not candidates (0: every split is).
SplitInfo best_split_variance(const std::int64_t* sum_hist, const std::int64_t* weight_hist, int n_value_bins,
                              int missing_bin, std::int32_t feature, std::int64_t min_side_weight = 0);

// The side scores those searches maximise (larger is purer): S^2 / T (Gini, variance) and the negated
// unnormalised entropy Z1 ln Z1 + Z0 ln Z0 - T ln T (entropy). 0 for an empty side.
enum class ImpurityKind { kPurity, kEntropy };

// S^2 / T (0 for an empty side): the Gini impurity is (T - S^2 / T) / 2, so larger is purer; S^2 / W is
// the variance criterion's side score (S = sum w r, W = sum w).
inline double purity(std::int64_t S, std::int64_t T) {
  if (T <= 0) return 0.0;
  const double s = static_cast<double>(S);
  return s * s / static_cast<double>(T);
}

inline double x_ln_x(std::int64_t z) { return z > 0 ? static_cast<double>(z) * std::log(static_cast<double>(z)) : 0.0; }

// Z1 ln Z1 + Z0 ln Z0 - T ln T with the classes' weights Z1 = (T + S) / 2 (positive values) and
// Z0 = (T - S) / 2 (both sums are even).
inline double negentropy(std::int64_t S, std::int64_t T) { return x_ln_x((T + S) / 2) + x_ln_x((T - S) / 2) - x_ln_x(T); }

inline double side_score(ImpurityKind kind, std::int64_t S, std::int64_t T) {
  return kind == ImpurityKind::kEntropy ? negentropy(S, T) : purity(S, T);
}

}  // namespace rebelboost::tree
