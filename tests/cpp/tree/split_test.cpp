// Tests that best_split equals a brute-force enumeration of every (bin, NaN side) split of a histogram.
#include "tree/split.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tree/histogram.hpp"

namespace rebelboost::tree {
namespace {

// Every candidate in the documented tie-break order (lowest bin first, NaN right before NaN left);
// a candidate wins only if it beats the best so far strictly, starting from the unsplit node |sum|.
SplitInfo brute_force(const std::vector<std::int64_t>& hist, int n_value_bins, int missing_bin,
                      std::int32_t feature) {
  std::int64_t total = hist[missing_bin];
  for (int b = 0; b < n_value_bins; ++b) total += hist[b];
  SplitInfo best;
  std::int64_t best_score = abs64(total);
  for (int bin = 0; bin < n_value_bins; ++bin) {
    for (bool nan_left : {false, true}) {
      std::int64_t left = nan_left ? hist[missing_bin] : 0;
      for (int b = 0; b <= bin; ++b) left += hist[b];
      const std::int64_t right = total - left;
      const std::int64_t score = abs64(left) + abs64(right);
      if (score > best_score) {
        best_score = score;
        best.score = score;
        best.feature = feature;
        best.bin = bin;
        best.nan_left = nan_left;
        best.left_sum = left;
        best.right_sum = right;
      }
    }
  }
  return best;
}

void expect_same(const SplitInfo& got, const SplitInfo& want, const std::string& where) {
  ASSERT_EQ(got.found(), want.found()) << where;
  if (!want.found()) return;
  EXPECT_EQ(got.feature, want.feature) << where;
  EXPECT_EQ(got.bin, want.bin) << where;
  EXPECT_EQ(got.nan_left, want.nan_left) << where;
  EXPECT_EQ(got.score, want.score) << where;
  EXPECT_EQ(got.left_sum, want.left_sum) << where;
  EXPECT_EQ(got.right_sum, want.right_sum) << where;
}

// A histogram with the given value range; slots that are neither value bins nor the missing bin get
// garbage, which best_split must ignore.
std::vector<std::int64_t> random_hist(std::mt19937_64& rng, int n_value_bins, int missing_bin,
                                      std::int64_t range, int zero_percent, bool missing_zero) {
  std::uniform_int_distribution<std::int64_t> value(-range, range);
  std::vector<std::int64_t> h(kHistBins, 0);
  for (int b = 0; b < kHistBins; ++b) h[b] = 1000003 * (b + 1);  // garbage
  for (int b = 0; b < n_value_bins; ++b) h[b] = static_cast<int>(rng() % 100) < zero_percent ? 0 : value(rng);
  h[missing_bin] = missing_zero ? 0 : value(rng);
  return h;
}

TEST(BestSplit, EqualsBruteForceOnRandomHistograms) {
  std::mt19937_64 rng(7);
  int n_found = 0, n_nan_left = 0, n_cases = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int n_bins = 3 + static_cast<int>(rng() % 254);  // 3..256, missing bin = n_bins - 1
    const int missing_bin = n_bins - 1;
    const int n_value_bins = 1 + static_cast<int>(rng() % static_cast<unsigned>(n_bins - 1));
    // Small ranges make ties frequent, so the tie-break is exercised; large ones test the arithmetic.
    const std::int64_t range = (trial % 3 == 0) ? 2 : (trial % 3 == 1) ? 50 : (std::int64_t{1} << 52);
    const int zero_percent = static_cast<int>(rng() % 90);  // drawn in this order for every compiler
    const bool missing_zero = rng() % 4 == 0;
    const auto h = random_hist(rng, n_value_bins, missing_bin, range, zero_percent, missing_zero);
    const std::int32_t feature = static_cast<std::int32_t>(rng() % 1000);
    const SplitInfo want = brute_force(h, n_value_bins, missing_bin, feature);
    const SplitInfo got = best_split(h.data(), n_value_bins, missing_bin, feature);
    expect_same(got, want, "trial " + std::to_string(trial));
    if (::testing::Test::HasFailure()) return;
    ++n_cases;
    n_found += want.found();
    n_nan_left += want.found() && want.nan_left;
  }
  // The random cases must cover both outcomes and both NaN directions.
  EXPECT_GT(n_found, n_cases / 10);
  EXPECT_LT(n_found, n_cases);
  EXPECT_GT(n_nan_left, 100);
}

TEST(BestSplit, NoSplitUnlessStrictlyBetterThanTheNode) {
  std::vector<std::int64_t> h(kHistBins, 0);
  // All zero: nothing to gain.
  EXPECT_FALSE(best_split(h.data(), 10, 255, 0).found());
  // Same sign everywhere: every split has |L| + |R| == |sum|, not a strict improvement.
  for (int b = 0; b < 10; ++b) h[b] = 5 + b;
  h[255] = 3;
  EXPECT_FALSE(best_split(h.data(), 10, 255, 0).found());
  for (int b = 0; b < 10; ++b) h[b] = -h[b];
  h[255] = -3;
  EXPECT_FALSE(best_split(h.data(), 10, 255, 0).found());
  // One value bin and no missing mass: nothing can be split at all.
  std::vector<std::int64_t> one(kHistBins, 0);
  one[0] = -9;
  EXPECT_FALSE(best_split(one.data(), 1, 255, 0).found());
}

TEST(BestSplit, SplitOnMissingnessAlone) {
  // One value bin plus NaN of the opposite sign: the only split is "values left, NaN right".
  std::vector<std::int64_t> h(kHistBins, 0);
  h[0] = 4;
  h[2] = -6;  // missing bin of n_bins = 3
  const SplitInfo s = best_split(h.data(), 1, 2, 3);
  ASSERT_TRUE(s.found());
  EXPECT_EQ(s.feature, 3);
  EXPECT_EQ(s.bin, 0);
  EXPECT_FALSE(s.nan_left);
  EXPECT_EQ(s.left_sum, 4);
  EXPECT_EQ(s.right_sum, -6);
  EXPECT_EQ(s.score, 10);
}

TEST(BestSplit, TieBreakPrefersLowestBinThenNaNRight) {
  // Bins: +1, -1, +1, -1 and no NaN mass: bins 0, 1 and 2 all give |L| + |R| = 2 (node sum 0);
  // with zero missing mass NaN left scores the same as NaN right, so the winner is bin 0, NaN right.
  std::vector<std::int64_t> h(kHistBins, 0);
  h[0] = 1;
  h[1] = -1;
  h[2] = 1;
  h[3] = -1;
  SplitInfo s = best_split(h.data(), 4, 255, 0);
  ASSERT_TRUE(s.found());
  EXPECT_EQ(s.bin, 0);
  EXPECT_FALSE(s.nan_left);
  EXPECT_EQ(s.score, 2);

  // Bin 0 NaN-left is strictly best: +3 | -3 with NaN mass +2 (left: 5, right: -3 -> 8 vs right: 3, -1 -> 4).
  std::fill(h.begin(), h.end(), 0);
  h[0] = 3;
  h[1] = -3;
  h[255] = 2;
  s = best_split(h.data(), 2, 255, 0);
  ASSERT_TRUE(s.found());
  EXPECT_EQ(s.bin, 0);
  EXPECT_TRUE(s.nan_left);
  EXPECT_EQ(s.score, 8);
}

TEST(BetterOrder, IsAStrictOrderWithTheDocumentedPriorities) {
  SplitInfo a, b;
  a.score = b.score = 10;
  a.feature = 1;
  b.feature = 2;
  a.bin = 9;
  b.bin = 0;
  EXPECT_TRUE(better(a, b));   // same score: lower feature wins even with a higher bin
  EXPECT_FALSE(better(b, a));
  b.feature = 1;
  EXPECT_TRUE(better(b, a));   // same feature: lower bin
  b.bin = 9;
  a.nan_left = true;
  EXPECT_TRUE(better(b, a));   // NaN right first
  EXPECT_FALSE(better(a, b));
  EXPECT_FALSE(better(a, a));  // irreflexive
  b.score = 11;
  b.feature = 7;
  EXPECT_TRUE(better(b, a));   // score dominates
}

}  // namespace
}  // namespace rebelboost::tree
