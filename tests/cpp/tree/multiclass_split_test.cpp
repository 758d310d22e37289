// Tests that REBEL's joint K-vector root split equals a brute-force search over naive class histograms.
#include "tree/multiclass_split.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tree/histogram.hpp"
#include "test_util.hpp"

namespace rebelboost::tree {
namespace {

struct Case {
  testing::Dense<double> X;
  data::BinMapper bins{256, 1000000};
  data::BinnedMatrix binned;
  std::size_t K = 0;
  std::vector<std::size_t> class_begin;  // rows sorted by class: class c in [class_begin[c], class_begin[c+1])
  std::vector<std::int64_t> v;           // n x K fixed-point vectors
};

Case make_case(std::size_t n, std::size_t n_features, std::size_t K, std::uint64_t seed, int n_bins,
               const std::vector<double>& class_share) {
  Case c;
  c.K = K;
  c.X = testing::random_matrix(n, n_features, seed, 0.1);
  // A few columns with few distinct values, so bins hold many rows.
  for (std::size_t r = 0; r < n; ++r)
    if (n_features > 2 && !std::isnan(c.X.at(r, 2))) c.X.at(r, 2) = std::round(c.X.at(r, 2));
  c.bins = data::BinMapper(n_bins, 1000000);
  c.bins.fit(c.X.c_view(), 1);
  c.binned = c.bins.transform(c.X.c_view(), 1);
  c.class_begin.assign(K + 1, 0);
  for (std::size_t k = 0; k < K; ++k)
    c.class_begin[k + 1] = c.class_begin[k] + static_cast<std::size_t>(std::floor(class_share[k] * static_cast<double>(n)));
  c.class_begin[K] = n;
  std::mt19937_64 rng(seed + 1);
  std::uniform_int_distribution<std::int64_t> mag(0, std::int64_t{1} << 40);
  c.v.resize(n * K);
  for (auto& x : c.v) x = (rng() % 5 == 0) ? 0 : mag(rng);
  return c;
}

std::size_t class_of(const Case& c, std::size_t row) {
  std::size_t k = 0;
  while (row >= c.class_begin[k + 1]) ++k;
  return k;
}

// Losses (long double) within a few rounding units are ties (multiclass_split.cpp), decided by the lower
// feature, then the lower bin, then NaN right first.
bool clearly_less(long double a, long double b, std::size_t K) {
  return a < b - 8.0L * static_cast<long double>(K + 1) * std::numeric_limits<long double>::epsilon() * std::fabs(b);
}

// Naive W+/W- per bin, then every (bin, NaN side) clearly below the unsplit loss; the winner is the
// first in tie-break order among those within the tolerance of the lowest loss.
RootSplit brute_force(const Case& c) {
  const std::size_t K = c.K, n = c.X.n_rows;
  RootSplit best;
  std::vector<RootSplit> candidates;
  for (std::size_t f = 0; f < c.X.n_cols; ++f) {
    std::vector<std::vector<std::int64_t>> wp(kHistBins, std::vector<std::int64_t>(K, 0)), wm = wp;
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t y = class_of(c, r);
      const int b = c.binned.column(f)[r];
      for (std::size_t k = 0; k < K; ++k) (k == y ? wm : wp)[b][k] += c.v[r * K + k];
    }
    std::vector<std::int64_t> all_p(K, 0), all_m(K, 0);
    for (int b = 0; b < kHistBins; ++b)
      for (std::size_t k = 0; k < K; ++k) {
        all_p[k] += wp[b][k];
        all_m[k] += wm[b][k];
      }
    auto loss_of = [&](const std::vector<std::int64_t>& sp, const std::vector<std::int64_t>& sm) {
      double s = 0.0;
      for (std::size_t k = 0; k < K; ++k) s += std::sqrt(static_cast<double>(sp[k]) * static_cast<double>(sm[k]));
      return s;
    };
    auto precise_of = [&](const std::vector<std::int64_t>& sp, const std::vector<std::int64_t>& sm) {
      long double s = 0.0L;
      for (std::size_t k = 0; k < K; ++k) s += std::sqrt(static_cast<long double>(sp[k]) * static_cast<long double>(sm[k]));
      return s;
    };
    const long double unsplit = precise_of(all_p, all_m);
    const int n_value = c.bins.n_value_bins(f), missing = c.bins.missing_bin();
    for (int bin = 0; bin < n_value; ++bin) {
      for (const bool nan_left : {false, true}) {
        // f = -1 on the left, +1 on the right: s+_k = R+_k + L-_k, s-_k = R-_k + L+_k (thesis Eq. 4.8).
        std::vector<std::int64_t> lp(K, 0), lm(K, 0), sp(K), sm(K);
        for (int b = 0; b <= bin; ++b)
          for (std::size_t k = 0; k < K; ++k) {
            lp[k] += wp[b][k];
            lm[k] += wm[b][k];
          }
        if (nan_left)
          for (std::size_t k = 0; k < K; ++k) {
            lp[k] += wp[missing][k];
            lm[k] += wm[missing][k];
          }
        for (std::size_t k = 0; k < K; ++k) {
          sp[k] = (all_p[k] - lp[k]) + lm[k];
          sm[k] = (all_m[k] - lm[k]) + lp[k];
        }
        const long double precise = precise_of(sp, sm);
        if (!clearly_less(precise, unsplit, K)) continue;
        RootSplit cand;
        cand.found = true;
        cand.feature = static_cast<std::int32_t>(f);
        cand.bin = bin;
        cand.nan_left = nan_left;
        cand.loss = loss_of(sp, sm);
        cand.precise_loss = precise;
        cand.loss_unsplit = static_cast<double>(unsplit);
        candidates.push_back(cand);  // visited in (feature, bin, NaN right first) order
      }
    }
  }
  // The lowest loss, then the first candidate in tie-break order within the tolerance of it.
  long double lowest = 1e300L;
  for (const RootSplit& cand : candidates) lowest = std::min(lowest, cand.precise_loss);
  for (const RootSplit& cand : candidates)
    if (!clearly_less(lowest, cand.precise_loss, K)) return cand;
  return best;
}

void expect_same_split(const RootSplit& got, const RootSplit& want) {
  EXPECT_EQ(got.feature, want.feature);
  EXPECT_EQ(got.bin, want.bin);
  EXPECT_EQ(got.nan_left, want.nan_left);
  EXPECT_EQ(got.loss, want.loss);
  EXPECT_EQ(got.loss_unsplit, want.loss_unsplit);
}

TEST(MulticlassRoot, EqualsBruteForce) {
  struct Shape {
    std::size_t n, n_features, K;
    int n_bins;
    std::vector<double> share;
  };
  const std::vector<Shape> shapes = {
      {300, 3, 2, 256, {0.5, 0.5}},
      {1501, 19, 3, 32, {0.2, 0.3, 0.5}},            // > 2 feature groups, > 2 row chunks, odd blocks
      {777, 9, 5, 7, {0.1, 0.0, 0.4, 0.25, 0.25}},   // an empty class block, few bins
      {64, 4, 4, 256, {0.25, 0.25, 0.25, 0.25}},
  };
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const Shape& sh = shapes[s];
      const Case c = make_case(sh.n, sh.n_features, sh.K, 10 * s + seed, sh.n_bins, sh.share);
      const RootSplit want = brute_force(c);
      for (int threads : {1, 3}) {
        const RootSplit got = best_multiclass_root(c.binned, c.bins, c.v.data(), c.K, c.class_begin, threads);
        SCOPED_TRACE(::testing::Message() << "shape " << s << " seed " << seed << " threads " << threads);
        ASSERT_EQ(got.found, want.found);
        EXPECT_EQ(got.bin_accumulations, static_cast<std::int64_t>(sh.n * sh.n_features));
        if (want.found) expect_same_split(got, want);
      }
    }
  }
}

TEST(MulticlassRoot, NearTiesGoToTheLowerFeature) {
  // Histograms with a clear split: w+ mass in low bins, w- mass in high bins, some NaN mass.
  const std::size_t K = 3;
  const int n_value = 200, missing = 255;
  std::mt19937_64 rng(12);
  std::uniform_int_distribution<std::int64_t> mag(1, std::int64_t{1} << 50);  // sums stay below 2^58
  std::vector<std::int64_t> wp(kHistBins * K, 0), wm(kHistBins * K, 0);
  for (int b = 0; b < n_value; ++b)
    for (std::size_t k = 0; k < K; ++k) {
      wp[b * K + k] = mag(rng) / (b < 100 ? 1 : 8);
      wm[b * K + k] = mag(rng) / (b < 100 ? 8 : 1);
    }
  for (std::size_t k = 0; k < K; ++k) wp[missing * K + k] = wm[missing * K + k] = mag(rng);
  const RootCandidates ca = evaluate_multiclass_feature(wp.data(), wm.data(), K, n_value, missing, 0);
  const RootSplit a = pick_root({ca}, K);
  ASSERT_TRUE(a.found);
  ASSERT_LT(a.loss, a.loss_unsplit);
  // Feature 1: the same histograms scaled by (1 - eps): every loss is (1 - eps) times feature 0's. Equal
  // histograms tie (the lower feature wins, in any order); a relative 1e-14 difference, a few fixed-point
  // units, is told apart (the binary losses' integer scores would tell it apart too).
  for (const double eps : {0.0, 1e-14, 1e-9}) {
    std::vector<std::int64_t> sp(wp), sm(wm);
    for (auto& x : sp) x -= static_cast<std::int64_t>(static_cast<double>(x) * eps);
    for (auto& x : sm) x -= static_cast<std::int64_t>(static_cast<double>(x) * eps);
    const RootCandidates cb = evaluate_multiclass_feature(sp.data(), sm.data(), K, n_value, missing, 1);
    const RootSplit b_alone = pick_root({cb}, K);
    ASSERT_TRUE(b_alone.found);
    if (eps > 0) {
      ASSERT_LT(b_alone.precise_loss, a.precise_loss) << "eps " << eps;
    }
    for (const auto& both : {pick_root({ca, cb}, K), pick_root({cb, ca}, K)}) {
      EXPECT_EQ(both.feature, eps == 0.0 ? 0 : 1) << "eps " << eps;
      EXPECT_EQ(both.bin, a.bin);
    }
  }
}

TEST(MulticlassRoot, QuickEqualsFull) {
  // The pruned search picks the full search's split, for skewed weights (pruning bites), several subset
  // schedules and thread counts; features with equal histograms (duplicates) test the tie rule.
  const std::vector<std::vector<double>> shares = {{0.5, 0.5}, {0.2, 0.3, 0.5}, {0.1, 0.0, 0.4, 0.25, 0.25}};
  std::int64_t pruned_total = 0;
  int chunked_cases = 0, fallback_cases = 0;
  for (std::size_t s = 0; s < shares.size(); ++s) {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      const std::size_t K = shares[s].size();
      Case c = make_case(1200, 12, K, 100 * s + seed, seed % 2 ? 256 : 16, shares[s]);
      std::mt19937_64 rng(seed);
      for (std::size_t r = 0; r < 1200; ++r) {  // a few heavy rows, like late boosting iterations
        const int shift = static_cast<int>(rng() % 4 == 0 ? 10 + rng() % 8 : rng() % 4);
        for (std::size_t k = 0; k < K; ++k) c.v[r * K + k] >>= (20 - shift);
      }
      for (std::size_t r = 0; r < 1200; ++r) c.X.at(r, 5) = c.X.at(r, 3);  // a duplicate feature
      c.bins.fit(c.X.c_view(), 1);
      c.binned = c.bins.transform(c.X.c_view(), 1);
      const RootSplit want = best_multiclass_root(c.binned, c.bins, c.v.data(), K, c.class_begin, 1);
      for (const QuickParams params : {QuickParams{0.9, 20}, QuickParams{0.5, 3}, QuickParams{1.0, 1}}) {
        for (int threads : {1, 2, 3}) {
          QuickWork work;
          const RootSplit got = quick_multiclass_root(c.binned, c.bins, c.v.data(), K, c.class_begin, threads, params, work);
          SCOPED_TRACE(::testing::Message() << "shares " << s << " seed " << seed << " eta " << params.eta << " threads " << threads);
          ASSERT_EQ(got.found, want.found);
          EXPECT_LE(work.bin_accumulations, static_cast<std::int64_t>(2 * 1200 * 12));  // survivors' full scan
          pruned_total += work.features_pruned;
          // 12 features, 1 lead: more than 6 survivors (at most 4 pruned on the first subset) are finished
          // by a full scan, fewer chunk by chunk (then at least 5 are pruned).
          (work.features_pruned >= 5 ? chunked_cases : fallback_cases) += 1;
          if (want.found) expect_same_split(got, want);
        }
      }
    }
  }
  EXPECT_GT(pruned_total, 0) << "no feature was ever pruned: the test does not exercise pruning";
  EXPECT_GT(chunked_cases, 0) << "pruning never bit enough to finish features chunk by chunk";
  EXPECT_GT(fallback_cases, 0) << "the survivors' full scan was never exercised";
}

TEST(MulticlassRoot, NoSplitWhenNothingBeatsTheUnsplitNode) {
  // One class holds all the w- mass in every bin in the same proportion as w+: no split lowers the loss.
  Case c = make_case(200, 2, 2, 3, 256, {0.5, 0.5});
  for (std::size_t r = 0; r < 200; ++r) {
    c.v[r * 2] = 1000;
    c.v[r * 2 + 1] = 1000;
  }
  for (std::size_t f = 0; f < 2; ++f)
    for (std::size_t r = 0; r < 200; ++r) c.binned.codes[f * 200 + r] = 0;  // one bin per feature
  const RootSplit got = best_multiclass_root(c.binned, c.bins, c.v.data(), 2, c.class_begin, 2);
  EXPECT_FALSE(got.found);
}

}  // namespace
}  // namespace rebelboost::tree
