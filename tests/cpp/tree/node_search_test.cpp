// Tests of one node's search: the pruned pass (with and without the heavy-row cache) finds the split and
// the sum that the full scan of the node's histograms finds, on every loss's split values; and auto's
// chooser between the two passes.
#include "tree/node_search.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "boosted_problem.hpp"
#include "tree/histogram.hpp"

namespace rebelboost::tree {
namespace {

// The full scan: histograms of the rows, the best feature_split over features (tie rule: better()).
SplitInfo full_scan(const testing::BoostedProblem& p, const std::vector<std::uint32_t>& rows, const std::int64_t* q,
                    std::int64_t& total) {
  SplitInfo winner;
  total = 0;
  for (std::size_t f = 0; f < p.binned.n_features; ++f) {
    std::vector<std::int64_t> hist(kHistBins, 0);
    for (const std::uint32_t r : rows) hist[p.binned.column(f)[r]] += q[r];
    if (f == 0) total = histogram_total(hist.data(), Criterion::kLoss);
    const SplitInfo s = feature_split(hist.data(), Criterion::kLoss, p.bins.n_value_bins(f), p.bins.missing_bin(),
                                      static_cast<std::int32_t>(f));
    if (s.found() && (!winner.found() || better(s, winner))) winner = s;
  }
  return winner;
}

TEST(NodeSearch, PrunedPassEqualsFullScan) {
  for (const std::string kind : {"adaboost", "veb", "rebel"}) {
    // Many trees: the weight concentrates, so the heavy-row cache is built and pruning bites.
    testing::BoostedProblem p = testing::boosted_problem(kind, 2500, 8, 41, 25);
    std::vector<std::int8_t> f(p.X.n_rows, 1);
    const std::int64_t* q = p.loss->split_values(1, f.data());
    std::mt19937_64 rng(9);
    for (const int threads : {1, 2, 4}) {
      for (const bool cache : {false, true}) {
        SCOPED_TRACE(::testing::Message() << kind << " threads " << threads << " cache " << cache);
        PrunedSearch search(p.binned, p.bins, threads, QuickMode::kOn, {});
        // Leaves: rows with a random code range on a random feature, and their complement.
        const std::size_t feature = rng() % p.binned.n_features;
        const auto cut = static_cast<std::uint8_t>(rng() % 200);
        std::vector<std::uint32_t> leaf_of_row(p.X.n_rows);
        std::vector<std::vector<std::uint32_t>> leaves(2);
        for (std::uint32_t r = 0; r < p.X.n_rows; ++r) {
          leaf_of_row[r] = p.binned.column(feature)[r] <= cut ? 0 : 1;
          leaves[leaf_of_row[r]].push_back(r);
        }
        std::int32_t rebuilds = 0;
        if (cache) search.prepare_layer(q, -1.0, leaf_of_row.data(), rebuilds);
        for (std::uint32_t leaf = 0; leaf < 2; ++leaf) {
          if (leaves[leaf].size() < 2) continue;
          std::int64_t want_total = 0, got_total = 0;
          const SplitInfo want = full_scan(p, leaves[leaf], q, want_total);
          QuickWork work;
          const SplitInfo got = search.search(leaf, leaves[leaf].data(), leaves[leaf].size(), q, nullptr, work, got_total);
          EXPECT_EQ(got_total, want_total);
          ASSERT_EQ(got.found(), want.found());
          if (!want.found()) continue;
          EXPECT_EQ(got.feature, want.feature);
          EXPECT_EQ(got.bin, want.bin);
          EXPECT_EQ(got.nan_left, want.nan_left);
          EXPECT_EQ(got.score, want.score);
          EXPECT_EQ(got.left_sum, want.left_sum);
          EXPECT_LE(work.bin_accumulations, static_cast<std::int64_t>(leaves[leaf].size() * p.binned.n_features));
        }
      }
    }
  }
}

TEST(NodeSearch, GiniFeatureSplitUsesBothClassParts) {
  // Class 0 (negative values) in bins 0-1, class 1 (positive) in bins 2-3: a pure split after bin 1.
  std::vector<std::int64_t> parts(2 * kHistBins, 0);
  parts[0] = -5;
  parts[1] = -3;
  parts[kHistBins + 2] = 4;
  parts[kHistBins + 3] = 6;
  const SplitInfo s = feature_split(parts.data(), Criterion::kGini, 4, 255, 7);
  ASSERT_TRUE(s.found());
  EXPECT_EQ(s.feature, 7);
  EXPECT_EQ(s.bin, 1);
  EXPECT_EQ(s.left_sum, -8);
  EXPECT_EQ(s.right_sum, 10);
  EXPECT_EQ(histogram_total(parts.data(), Criterion::kGini), 2);
  EXPECT_EQ(histogram_total(parts.data(), Criterion::kLoss), -8);
}


// Auto measures the full scan, probes the pruned pass once, and keeps it while it costs under 0.9 of the
// full scan per row.
TEST(QuickChooser, KeepsAWinningPrunedPass) {
  QuickChooser chooser;
  EXPECT_FALSE(chooser.use_quick(0.1));  // the full scan is measured first
  chooser.record(false, 1.0, 1000);
  EXPECT_TRUE(chooser.use_quick(0.1));  // then the pruned pass once
  chooser.record(true, 0.5, 1000);
  EXPECT_TRUE(chooser.use_quick(0.1));
  EXPECT_FALSE(chooser.use_quick(0.6));  // too spread to prune at all
}

// One slow layer (10x) moves the estimate to at most 1.5x itself: 0.75 of the full scan, still winning. A
// plain running mean would give 2.75x the full scan and turn the pass off.
TEST(QuickChooser, OneSlowLayerDoesNotTurnAWinningPassOff) {
  QuickChooser chooser;
  chooser.use_quick(0.1);
  chooser.record(false, 1.0, 1000);
  chooser.use_quick(0.1);
  chooser.record(true, 0.5, 1000);
  chooser.use_quick(0.1);
  chooser.record(true, 5.0, 1000);
  EXPECT_TRUE(chooser.use_quick(0.1));
  // A lasting change shows within a few layers.
  for (int layer = 0; layer < 6; ++layer) {
    chooser.use_quick(0.1);
    chooser.record(true, 5.0, 1000);
  }
  EXPECT_FALSE(chooser.use_quick(0.1));
}

// Time invested in state that later layers reuse (a cache rebuild) is not the pass's cost: a probe of 3 s of
// which 2.5 s built the cache costs 0.5 s, under the full scan's 1 s.
TEST(QuickChooser, InvestedTimeIsNotThePassCost) {
  QuickChooser invested, charged;
  for (QuickChooser* chooser : {&invested, &charged}) {
    chooser->use_quick(0.1);
    chooser->record(false, 1.0, 1000);
    EXPECT_TRUE(chooser->use_quick(0.1));
  }
  invested.record(true, 3.0, 1000, 2.5);
  charged.record(true, 3.0, 1000);
  EXPECT_TRUE(invested.use_quick(0.1));
  EXPECT_FALSE(charged.use_quick(0.1));
}

// A pruned pass that lost is probed again after the interval, or at once when the mass got much more
// concentrated than at the last probe, the first one included: at the same concentration it waits.
TEST(QuickChooser, ReprobesALosingPassOnlyWhenDueOrMoreConcentrated) {
  QuickChooser chooser;
  chooser.use_quick(0.3);
  chooser.record(false, 1.0, 1000);
  EXPECT_TRUE(chooser.use_quick(0.3));
  chooser.record(true, 0.95, 1000);  // above 0.9 of the full scan: losing, at no excess over it
  chooser.record(false, 1.0, 1000);
  EXPECT_FALSE(chooser.use_quick(0.3));  // the same concentration, before the interval
  EXPECT_TRUE(chooser.use_quick(0.15));  // under 0.67 of the first probe's
}

}  // namespace
}  // namespace rebelboost::tree
