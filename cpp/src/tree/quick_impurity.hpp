// QuickBoost for the impurity criteria (thesis App. 7.2; docs/quickboost.md): Gini impurity, entropy and
// variance, through the one schedule of quick_driver.hpp.
//
// Every row n carries s_n and t_n >= 0 (Gini and entropy: s = q, t = |q|; variance: s = w r, t = w) and a
// mass m_n >= s_n^2 / t_n. A split's error on a set of rows is, per side with sums S and T,
//   purity kind (Gini, variance):  E = sum_n m_n - sum_sides S^2 / T
//   entropy:                       E = sum_sides (T ln T - Z1 ln Z1 - Z0 ln Z0),  Z1,0 = (T +- S) / 2
// and never decreases when a row joins (S^2 / T is subadditive: (a + b)^2 / (x + y) <= a^2 / x + b^2 / y;
// likewise for the entropy), so a feature's lowest error on the heaviest rows (by m) bounds all its splits.
// The errors are doubles of exact int64 sums: a feature is pruned only when its bound exceeds the best
// error by a margin far above their rounding, so it cannot win nor tie, and the winner is the full scan's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "tree/mass_segments.hpp"
#include "tree/quick_prune.hpp"
#include "tree/split.hpp"

namespace rebelboost::tree {

// The impurity criteria a pruned pass searches with; each names its full search (split.hpp).
enum class ImpurityCriterion { kGini, kEntropy, kVariance };

// Best split of `feature` from its histograms of s (`sums`) and t (`weights`): the full scan's search.
// min_side_weight: the variance's least weight of a side (best_split_variance; ignored by Gini and entropy).
SplitInfo impurity_split(ImpurityCriterion criterion, const std::int64_t* sums, const std::int64_t* weights,
                         int n_value_bins, int missing_bin, std::int32_t feature, std::int64_t min_side_weight = 0);

// The variance criterion's extras: masses in units of 2^mass_shift (mass_n 2^mass_shift >= s_n^2 / t_n; the
// shift may be negative), so that the masses of large values still sum below 2^62 and those of small values
// keep their precision when rounded up to integers; and the
// least weight a side may hold (best_split_variance's min_side_weight). The bound scans every candidate
// whatever its sides' weights: extra candidates only lower a bound.
// packed_t > 0 says every row of the node has t = 0 or t = packed_t, fewer than 2^23 rows and sum |s| < 2^39:
// each bin then holds count 2^40 + S in one int64 (one add per row, as VarianceGrower's full scan; no cache).
struct VarianceOptions {
  int mass_shift = 0;
  std::int64_t min_side_weight = 0;
  std::int64_t packed_t = 0;
};

// Heavy rows cached for subset 0 (quick_prune.hpp) and the node's s, t and mass on them, by position in
// rows->rows (0 for cached rows outside the node).
struct ImpurityCache {
  const HeavyRows* rows = nullptr;
  const std::int64_t* s = nullptr;
  const std::int64_t* t = nullptr;
  const std::int64_t* mass = nullptr;
};

// The pruned pass's working memory, kept across nodes by its owner (a node then allocates nothing).
struct ImpurityScratch {
  std::vector<std::int64_t> histograms;  // n_features x 2 x kHistBins, any content between nodes
  MassSegments segments;
};

// Without a cache, subset 0 holds at least this share of the node's mass for every impurity criterion (more
// than the weighted error's 0.9: their gains are a smaller share of a node's error, so a feature is pruned
// on subset 0 only when little mass is left out). Measured by a throw-away interleaved script on
// bench/quick_criteria.py's easy tasks (the value was chosen on them), 200 stumps, 2 threads, against 0.9:
// Gini and entropy (earlier sessions) and the variance (integer spikes fit
// 1.43x -> 1.59x the full scan's speed, sparse spikes 0.85x -> 0.93x; 0.98 fell to 1.28x on integer
// spikes, whose 97-98 % point is where the light rows begin).
inline constexpr double kImpurityEta = 0.95;

// The best split over features of the node whose rows are listed (any order; s, t, mass are indexed by
// row): identical to the best over features of impurity_split() on full histograms (found() false when
// no split strictly improves the node). With `cache`, its rows in the node are subset 0 and the other rows
// form the chunks; without, subset 0 holds max(params.eta, kImpurityEta) of the mass. `scratch` (optional):
// working memory kept across calls. OpenMP inside; the result does not depend on n_threads.
SplitInfo quick_impurity_split(const data::BinnedMatrix& X, const data::BinMapper& bins, ImpurityCriterion criterion,
                               const std::uint32_t* rows, std::size_t n, const std::int64_t* s, const std::int64_t* t,
                               const std::int64_t* mass, int n_threads, const QuickParams& params, QuickWork& work,
                               const std::uint8_t* active_features = nullptr, const ImpurityCache* cache = nullptr,
                               ImpurityScratch* scratch = nullptr, VarianceOptions variance = {});

// A mass for the variance criterion: the least integer >= s^2 / t (0 when t = 0). Callers scale s and t so
// that the masses of a node sum below 2^62; std::overflow_error beyond.
std::int64_t variance_mass(std::int64_t s, std::int64_t t);

}  // namespace rebelboost::tree
