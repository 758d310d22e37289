// One node's best split: the full scan of its histograms, the pruned pass, and the choice between them.
#include "tree/node_search.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

#include "tree/histogram.hpp"
#include "tree/quick_impurity.hpp"

namespace rebelboost::tree {

namespace {
// The heavy-row cache (the first subset) per criterion: it is built from the heaviest rows up to `target` of
// the mass, and rebuilt when it holds less than `keep` or has grown `oversize` times the rows that now hold
// `target` (as the mass concentrates). Gini and entropy need a larger share than the weighted error: their
// bound counts the unread mass at a fraction of its weight (docs/quickboost.md, "Completing the prefix").
// Measured on bench/quick_criteria.py's easy task: 97 % with a rebuild at 95 % or at 2x ran fastest of
// 93-98 % and 1.5-2x.
struct CachePolicy {
  double target, keep, oversize;
};
constexpr CachePolicy kLossCache{0.95, 0.85, 3.0};   // oversize against the rows holding 90 %
constexpr CachePolicy kImpurityCache{0.97, 0.95, 2.0};
// The cache serves a node only when it holds at least kImpurityCacheShare of the node's mass (without it,
// subset 0 holds kImpurityEta of the mass: quick_impurity.hpp).
constexpr double kImpurityCacheShare = 0.9;
// Auto does not even probe the pruned pass of Gini and entropy while 90 % of the mass takes more than a
// quarter of the rows: subset 0 (95 % of the mass) would then be most rows, gathered, and no cache serves.
// On bench/quick_criteria.py's hard task (mass90 stays above 0.4) each probe cost about 4 full layers.
constexpr double kImpurityMostSpread = 0.25;

// Sum of |q| over a node's rows.
std::int64_t total_mass(const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* q) {
  std::int64_t mass = 0;
  for (std::size_t i = 0; i < n_rows; ++i) mass += abs64(q[rows[i]]);
  return mass;
}

}  // namespace

SplitInfo feature_split(const std::int64_t* parts, Criterion criterion, int n_value_bins, int missing_bin,
                        std::int32_t feature) {
  if (criterion == Criterion::kLoss) return best_split(parts, n_value_bins, missing_bin, feature);
  // Impurities: S (signed sum) and T (weight) per bin from the two classes' values, which have one sign each.
  alignas(64) std::int64_t signed_hist[kHistBins];
  alignas(64) std::int64_t abs_hist[kHistBins];
  const std::int64_t* class0 = parts;
  const std::int64_t* class1 = parts + kHistBins;
  for (int b = 0; b < kHistBins; ++b) {
    signed_hist[b] = class0[b] + class1[b];
    abs_hist[b] = abs64(class0[b]) + abs64(class1[b]);
  }
  if (criterion == Criterion::kEntropy) return best_split_entropy(signed_hist, abs_hist, n_value_bins, missing_bin, feature);
  return best_split_gini(signed_hist, abs_hist, n_value_bins, missing_bin, feature);
}

std::int64_t histogram_total(const std::int64_t* parts, Criterion criterion) {
  std::int64_t total = 0;
  const int n = histogram_parts(criterion) * kHistBins;
  for (int b = 0; b < n; ++b) total += parts[b];
  return total;
}

bool QuickChooser::use_quick(double mass90_fraction, double most_spread) {
  if (mass90_fraction > most_spread) return false;  // pruning cannot start before most rows are in
  if (full_cost_ < 0) return false;         // measure the full scan first
  if (quick_cost_ < 0) {                    // then the pruned pass once, at this concentration
    mass_at_quick_probe_ = mass90_fraction;
    return true;
  }
  if (quick_cost_ < 0.9 * full_cost_) {
    // Clearly winning with pruning (a 10 % margin keeps timer noise on small nodes from flipping the
    // choice): re-measure the full scan now and then (its cost per row is stable).
    if (++since_full_probe_ >= 64) {
      since_full_probe_ = 0;
      return false;
    }
    return true;
  }
  // Losing with pruning: probe again after a doubling interval (at most 256 layers: a losing probe then
  // costs a few percent even where pruning is 3x slower), or at once if the mass got much more
  // concentrated since the last probe (the thing that makes pruning pay). Either way, only while losing
  // probes have cost under 1 % of the time spent in these layers.
  const bool due = ++since_quick_probe_ >= quick_probe_interval_ || mass90_fraction < 0.67 * mass_at_quick_probe_;
  if (due && probe_excess_ <= 0.01 * total_seconds_) {
    since_quick_probe_ = 0;
    quick_probe_interval_ = std::min(quick_probe_interval_ * 2, 256);
    mass_at_quick_probe_ = mass90_fraction;
    return true;
  }
  return false;
}

void QuickChooser::record(bool quick, double seconds, std::size_t node_rows, double invested) {
  if (node_rows == 0) return;
  total_seconds_ += seconds;
  seconds = std::max(0.0, seconds - invested);
  if (quick && full_cost_ > 0) probe_excess_ += std::max(0.0, seconds - full_cost_ * static_cast<double>(node_rows));
  double& estimate = quick ? quick_cost_ : full_cost_;
  // One layer moves the estimate at most to 1.5 times itself: a rare slow layer (the pruned pass's cache
  // rebuilt, a preemption) would otherwise turn a winning pass into a losing one, and the losing probes'
  // budget below would then keep it off for the rest of the fit. A lasting change still shows within a few
  // layers.
  const double most = estimate < 0 ? std::numeric_limits<double>::infinity() : 2.0 * estimate;
  const double cost = std::min(seconds / static_cast<double>(node_rows), most);
  estimate = estimate < 0 ? cost : 0.5 * (estimate + cost);
}

PrunedSearch::PrunedSearch(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads, QuickMode mode,
                           QuickParams params, Criterion criterion)
    : X_(X), bins_(bins), n_threads_(n_threads), mode_(mode), params_(params), criterion_(criterion) {
  if (mode_ != QuickMode::kOff) {
    identity_rows_.resize(X.n_samples);
    std::iota(identity_rows_.begin(), identity_rows_.end(), 0u);
  }
}

bool PrunedSearch::worth_pruning(std::size_t node_rows, const std::uint8_t* active_features) const {
  // Below about a million histogram adds the full scan takes well under a millisecond: pruning could save
  // little, and timing such small passes to choose between them is mostly noise.
  std::size_t n_active = X_.n_features;
  if (active_features) n_active = static_cast<std::size_t>(std::count(active_features, active_features + X_.n_features, 1));
  return node_rows * n_active >= (std::size_t{1} << 20);
}

bool PrunedSearch::choose(int layer, const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* q,
                          const std::uint8_t* active_features, double& mass90_fraction) {
  mass90_fraction = -1.0;
  if (mode_ == QuickMode::kOff) return false;
  mass90_fraction = estimate_mass90_fraction(rows ? rows : identity_rows_.data(), n_rows, q);
  if (mode_ == QuickMode::kOn) return true;
  return worth_pruning(n_rows, active_features) &&
         chooser_[layer > 0].use_quick(mass90_fraction, is_impurity(criterion_) ? kImpurityMostSpread : 0.5);
}

void PrunedSearch::record(int layer, bool quick, double seconds, std::size_t node_rows) {
  if (mode_ == QuickMode::kAuto) chooser_[layer > 0].record(quick, seconds, node_rows, build_seconds_);
  build_seconds_ = 0.0;
}

void PrunedSearch::prepare_layer(const std::int64_t* q, double mass90_fraction, const std::uint32_t* leaf_of_row,
                                 std::int32_t& heavy_rebuilds) {
  leaf_of_row_ = leaf_of_row;
  // Keeps heavy_ holding most of the |q| mass of the layer (CachePolicy).
  const CachePolicy policy = is_impurity(criterion_) ? kImpurityCache : kLossCache;
  const std::size_t n = X_.n_samples;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) total += abs64(q[i]);
  if (total == 0) return;
  if (!heavy_.empty()) {
    std::int64_t cached = 0;
    for (const std::uint32_t r : heavy_.rows) cached += abs64(q[r]);
    const bool holds_enough = static_cast<double>(cached) >= policy.keep * static_cast<double>(total);
    const double needed = is_impurity(criterion_) ? estimate_mass_fraction(identity_rows_.data(), n, q, policy.target)
                                                  : mass90_fraction;
    const bool oversized =
        needed >= 0.0 && static_cast<double>(heavy_.rows.size()) > policy.oversize * needed * static_cast<double>(n) + 64.0;
    if (holds_enough && !oversized) return;
  }
  // The heaviest rows up to the target share, if they are at most a quarter of the rows: else pruning
  // rarely pays, and building the cache (a gather of every feature) would cost more than it saves.
  const auto start = std::chrono::steady_clock::now();
  order_by_weight(identity_rows_.data(), n, q, heavy_rows_, heavy_values_);
  const auto target = static_cast<std::int64_t>(policy.target * static_cast<double>(total));
  std::int64_t mass = 0;
  std::size_t m = 0;
  while (m < heavy_rows_.size() && mass < target) mass += abs64(heavy_values_[m++]);
  if (4 * m > n || m > HeavyRows::kMaxRows) {
    heavy_.clear();
    return;
  }
  ++heavy_rebuilds;
  heavy_.build(X_, std::vector<std::uint32_t>(heavy_rows_.begin(), heavy_rows_.begin() + static_cast<std::ptrdiff_t>(m)),
               n_threads_);
  build_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

SplitInfo PrunedSearch::search(std::uint32_t leaf, const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* q,
                               const std::uint8_t* active_features, QuickWork& work, std::int64_t& total) {
  // The cached heavy rows serve as the first subset when enough of them (and of the mass) are in the leaf.
  bool cached = false;
  if (!heavy_.empty()) {
    const std::size_t m = heavy_.rows.size();
    heavy_q_.resize(m);
    std::size_t inside = 0;
    std::int64_t cached_mass = 0;
    for (std::size_t i = 0; i < m; ++i) {
      const std::uint32_t r = heavy_.rows[i];
      const bool in = !leaf_of_row_ || leaf_of_row_[r] == leaf;
      heavy_q_[i] = in ? q[r] : 0;
      inside += in;
      cached_mass += abs64(heavy_q_[i]);
    }
    const std::int64_t leaf_mass = total_mass(rows, n_rows, q);
    cached = 4 * inside >= m && 2 * cached_mass >= leaf_mass && cached_mass > 0;
  }
  if (is_impurity(criterion_)) return search_impurity(rows, n_rows, q, active_features, work, total, cached);
  order_by_weight(rows, n_rows, q, heavy_rows_, heavy_values_, cached ? heavy_.member.data() : nullptr);
  const SplitInfo winner =
      quick_best_split(X_, bins_, heavy_rows_.data(), heavy_values_.data(), heavy_rows_.size(), n_threads_, params_, work,
                       scratch_, active_features, cached ? &heavy_ : nullptr, cached ? heavy_q_.data() : nullptr);
  total = 0;
  for (const std::int64_t v : heavy_values_) total += v;
  if (cached)
    for (const std::int64_t v : heavy_q_) total += v;
  return winner;
}

SplitInfo PrunedSearch::search_impurity(const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* q,
                                        const std::uint8_t* active_features, QuickWork& work, std::int64_t& total,
                                        bool cached) {
  // s = q, and t = mass = |q| (one sign per class).
  abs_q_.resize(X_.n_samples);
  total = 0;
  for (std::size_t i = 0; i < n_rows; ++i) {
    abs_q_[rows[i]] = abs64(q[rows[i]]);
    total += q[rows[i]];
  }
  // Subset 0 is the cache when it holds kImpurityCacheShare of the leaf's mass.
  if (cached) {
    const std::int64_t leaf_mass = total_mass(rows, n_rows, q);
    std::int64_t cached_mass = 0;
    for (const std::int64_t v : heavy_q_) cached_mass += abs64(v);
    cached = static_cast<double>(cached_mass) >= kImpurityCacheShare * static_cast<double>(leaf_mass);
  }
  ImpurityCache cache;
  if (cached) {
    heavy_abs_.resize(heavy_q_.size());
    for (std::size_t i = 0; i < heavy_q_.size(); ++i) heavy_abs_[i] = abs64(heavy_q_[i]);
    cache = {&heavy_, heavy_q_.data(), heavy_abs_.data(), heavy_abs_.data()};
  }
  const ImpurityCriterion c = criterion_ == Criterion::kGini ? ImpurityCriterion::kGini : ImpurityCriterion::kEntropy;
  return quick_impurity_split(X_, bins_, c, rows, n_rows, q, abs_q_.data(), abs_q_.data(), n_threads_, params_, work,
                              active_features, cached ? &cache : nullptr, &impurity_scratch_);
}

RootSplit PrunedSearch::root(const std::int64_t* v, std::size_t K, const std::vector<std::size_t>& class_begin,
                             const std::uint8_t* active_features, QuickWork& work, bool& quick, double& mass90_fraction) {
  const std::size_t n = X_.n_samples;
  quick = false;
  mass90_fraction = -1.0;
  if (mode_ != QuickMode::kOff) {  // mass concentration: the work record, and auto's choice
    root_mass_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::int64_t total = 0;
      for (std::size_t k = 0; k < K; ++k) total += v[i * K + k];
      root_mass_[i] = total;
    }
    mass90_fraction = estimate_mass90_fraction(identity_rows_.data(), n, root_mass_.data());
    quick = mode_ == QuickMode::kOn || (worth_pruning(n, active_features) && chooser_[0].use_quick(mass90_fraction));
  }
  const auto start = std::chrono::steady_clock::now();
  RootSplit r = quick ? quick_multiclass_root(X_, bins_, v, K, class_begin, n_threads_, params_, work, active_features)
                      : best_multiclass_root(X_, bins_, v, K, class_begin, n_threads_, active_features);
  record(0, quick, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), n);
  return r;
}

}  // namespace rebelboost::tree
