// QuickBoost for the regressor's layers (see variance_quick.hpp).
#include "tree/variance_quick.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tree/quick_impurity.hpp"
#include "tree/variance_grower.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

namespace {

// Auto does not probe the pruned pass while 90 % of the mass sum s^2 / t takes more than this share of the
// leaf's rows: subset 0 would then be most rows, gathered, and the variance bound (the prefix's own error,
// docs/quickboost.md) prunes a feature only when the winner lowers the error by more than the mass left out.
constexpr double kMostSpread = 0.25;
constexpr std::size_t kSampleRows = 2048;  // rows choose() reads to estimate the mass concentration

// s^2 / t in double (t > 0): the conversions of s and t, the square and the quotient each round by at
// most 2^-53 relatively, and the quotient stays far above the subnormals (s^2 / t >= 2^-63).
double square_over(std::int64_t s, std::int64_t t) {
  const double a = static_cast<double>(s);
  return a * a / static_cast<double>(t);
}

// An integer at least s^2 / (t 2^shift) from q = square_over(s, t) (0 for t = 0) and `unit_inverse` =
// 2^-shift (exact; shift < 100, so q 2^-shift is no subnormal either): raising q by 2^-50 covers the four
// roundings above and the two products' (6 x 2^-53 in all), and the ceiling keeps it an upper bound. (Long
// double with ldexp per row cost about a fifth of a pruned tree's time on 100 000 rows.)
std::int64_t mass_above(double q, double unit_inverse) {
  return static_cast<std::int64_t>(std::ceil(q * unit_inverse * (1.0 + 0x1p-50)));
}

// The rows of a leaf are summed in blocks of this many (VarianceQuick::search).
constexpr std::size_t kMassBlock = std::size_t{1} << 14;
constexpr std::int64_t kAbsCap = std::int64_t{1} << 39;  // sum |s| at or above it rules the packing out
struct BlockSums {
  double total = 0.0;
  std::int64_t t0 = 0, abs_s = 0;
  bool same_t = true;
};

}  // namespace

VarianceQuick::VarianceQuick(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads, QuickMode mode,
                             QuickParams params)
    : X_(X), bins_(bins), n_threads_(n_threads), mode_(mode), params_(params) {}

bool VarianceQuick::worth_pruning(std::size_t n_rows, const std::uint8_t* active_features) const {
  if (mode_ == QuickMode::kOn) return true;  // quick=True prunes every leaf of a pruned layer
  // As PrunedSearch: below about a million histogram adds the full scan takes well under a millisecond.
  std::size_t n_active = X_.n_features;
  if (active_features) n_active = static_cast<std::size_t>(std::count(active_features, active_features + X_.n_features, 1));
  return n_rows * n_active >= (std::size_t{1} << 20);
}

bool VarianceQuick::choose(int layer, const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* s,
                           const std::int64_t* t, const std::uint8_t* active_features) {
  if (mode_ != QuickMode::kAuto) return mode_ == QuickMode::kOn;
  if (layer > 0 || !worth_pruning(n_rows, active_features)) return false;
  // The masses of a strided sample, scaled to integers for estimate_mass90_fraction.
  const std::size_t stride = std::max<std::size_t>(1, n_rows / kSampleRows);
  std::vector<double> masses;
  double largest = 0.0;
  for (std::size_t i = 0; i < n_rows; i += stride) {
    const std::uint32_t r = rows ? rows[i] : static_cast<std::uint32_t>(i);
    const double m = t[r] > 0 ? static_cast<double>(s[r]) * static_cast<double>(s[r]) / static_cast<double>(t[r]) : 0.0;
    masses.push_back(m);
    largest = std::max(largest, m);
  }
  if (largest <= 0.0) return false;
  int e = 0;
  std::frexp(largest, &e);
  sample_.resize(masses.size());
  for (std::size_t i = 0; i < masses.size(); ++i) sample_[i] = std::llround(std::ldexp(masses[i], 40 - e));
  sample_rows_.resize(masses.size());
  std::iota(sample_rows_.begin(), sample_rows_.end(), 0u);
  const double mass90 = estimate_mass90_fraction(sample_rows_.data(), sample_rows_.size(), sample_.data());
  return chooser_.use_quick(mass90, kMostSpread);
}

void VarianceQuick::record(bool quick_root, double seconds) {
  if (mode_ == QuickMode::kAuto) chooser_.record(quick_root, seconds, 1);  // cost per tree
}

SplitInfo VarianceQuick::search(const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* s,
                                const std::int64_t* t, std::int64_t min_side_weight, const std::uint8_t* active_features,
                                QuickWork& work) {
  // Masses in units of 2^shift, the shift such that they sum to about 2^59 and below 2^61 (sum s^2 / t < 2^e):
  // raising each by 2^-50 relatively and rounding it up to an integer (mass_above) adds at most about
  // 2^-50 of the leaf's mass plus one unit per row to the bound's slack.
  // And the packing of VarianceOptions::packed_t when it is exact.
  // In fixed blocks of rows (parallel; the sums in block order, so the shift is the same for every thread
  // count): each block's sum of s^2 / t, its first t > 0, whether all its t > 0 equal that one, sum |s|.
  const std::size_t n_blocks = (n_rows + kMassBlock - 1) / kMassBlock;
  std::vector<BlockSums> blocks(n_blocks);
  quotients_.resize(n_rows);
  const auto block_threads = [&](std::size_t work_per_row) { return util::threads_for(work_per_row * n_rows, n_threads_); };
  util::parallel_for(static_cast<std::ptrdiff_t>(n_blocks), block_threads(4), [&](std::ptrdiff_t b) {
    BlockSums& sums = blocks[static_cast<std::size_t>(b)];
    const auto begin = static_cast<std::size_t>(b) * kMassBlock;
    for (std::size_t i = begin; i < std::min(n_rows, begin + kMassBlock); ++i) {
      const std::uint32_t r = rows[i];
      quotients_[i] = t[r] > 0 ? square_over(s[r], t[r]) : 0.0;
      sums.total += quotients_[i];
      if (t[r] == 0) continue;
      sums.t0 = sums.t0 == 0 ? t[r] : sums.t0;
      sums.same_t = sums.same_t && t[r] == sums.t0;
      sums.abs_s = std::min(sums.abs_s + (s[r] < 0 ? -s[r] : s[r]), kAbsCap);  // |s| < 2^62: no overflow
    }
  });
  double total = 0.0;
  std::int64_t t0 = 0, abs_s = 0;
  bool uniform = n_rows < (std::size_t{1} << 23);
  for (const BlockSums& sums : blocks) {
    total += sums.total;
    t0 = t0 == 0 ? sums.t0 : t0;
    uniform = uniform && sums.same_t && (sums.t0 == 0 || sums.t0 == t0) && (abs_s += sums.abs_s) < kAbsCap;
  }
  int e = 0;
  std::frexp(total, &e);
  const int shift = e - 59;
  mass_.resize(X_.n_samples);
  const double unit_inverse = std::ldexp(1.0, -shift);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_blocks), block_threads(2), [&](std::ptrdiff_t b) {
    const auto begin = static_cast<std::size_t>(b) * kMassBlock;
    for (std::size_t i = begin; i < std::min(n_rows, begin + kMassBlock); ++i)
      mass_[rows[i]] = mass_above(quotients_[i], unit_inverse);
  });
  return quick_impurity_split(X_, bins_, ImpurityCriterion::kVariance, rows, n_rows, s, t, mass_.data(), n_threads_,
                              params_, work, active_features, nullptr, &scratch_,
                              {shift, min_side_weight, uniform ? t0 : 0});
}


// VarianceGrower's pruned layers: its two hooks into QuickBoost, kept here beside the policy they follow.

std::vector<SplitInfo> VarianceGrower::search_pruned(const std::vector<std::size_t>& open, std::int64_t min_leaf_weight,
                                                     const std::uint8_t* active_features) {
  std::vector<SplitInfo> splits(open.size());
  std::vector<std::size_t> scanned, at;  // leaves too small to prune, and their positions in `open`
  for (std::size_t i = 0; i < open.size(); ++i) {
    const Leaf& leaf = leaves_[open[i]];
    const std::size_t n = leaf.end - leaf.begin;
    if (!quick_.worth_pruning(n, active_features)) {
      scanned.push_back(open[i]);
      at.push_back(i);
      continue;
    }
    splits[i] = quick_.search(partition_.rows(leaf.begin), n, search_s_, search_t_, min_leaf_weight, active_features, work_);
    ++quick_nodes_;
  }
  full_nodes_ += static_cast<std::int32_t>(scanned.size());
  const std::vector<SplitInfo> small = search(scanned, min_leaf_weight, active_features);
  for (std::size_t k = 0; k < at.size(); ++k) splits[at[k]] = small[k];
  return splits;
}

bool VarianceGrower::choose_next(const std::vector<std::size_t>& leaves, const std::vector<SplitInfo>& splits,
                                 const std::vector<Leaf>& lefts, const std::uint8_t* active_features) {
  if (quick_.mode() == QuickMode::kOff) return false;
  std::size_t begin = 0, largest = 0;  // the largest child's rows (partitioned already)
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (!splits[i].found()) continue;
    const std::size_t n_left = lefts[i].end - lefts[i].begin, n_right = leaves_[leaves[i]].end - lefts[i].end;
    if (n_left > largest) begin = lefts[i].begin, largest = n_left;
    if (n_right > largest) begin = lefts[i].end, largest = n_right;
  }
  return largest >= 2 && quick_.choose(layer_ + 1, partition_.rows(begin), largest, search_s_, search_t_, active_features);
}

}  // namespace rebelboost::tree
