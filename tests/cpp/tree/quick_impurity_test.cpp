// Tests of QuickBoost for the impurity criteria (Gini, entropy, variance): the pruned pass finds the full
// scan's split bit for bit, the bound it prunes with holds for every split, and it prunes where it should.
#include "tree/quick_impurity.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "boosted_problem.hpp"
#include "tree/histogram.hpp"

namespace rebelboost::tree {
namespace {

struct NodeValues {
  std::vector<std::int64_t> s, t, mass;
};

// Gini and entropy see the binary losses' split values: s = q, t = |q|, mass = |q|.
NodeValues class_values(const std::int64_t* q, std::size_t n) {
  NodeValues v{std::vector<std::int64_t>(q, q + n), std::vector<std::int64_t>(n), std::vector<std::int64_t>(n)};
  for (std::size_t i = 0; i < n; ++i) v.t[i] = v.mass[i] = q[i] < 0 ? -q[i] : q[i];
  return v;
}

// Gini and entropy on an easy node: the class follows a step in feature 1 (5 % flipped), heavy-tailed
// weights (most of the mass on few rows, as late in boosting): s = +-w, t = mass = w.
NodeValues easy_class_values(const testing::BoostedProblem& p, std::uint64_t seed) {
  const std::size_t n = p.X.n_rows;
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> weight(0.0, 2.0);
  NodeValues v{std::vector<std::int64_t>(n), std::vector<std::int64_t>(n), std::vector<std::int64_t>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const double x = p.X.at(i, 1);
    const bool positive = (!std::isnan(x) && x > 0.2) != (rng() % 20 == 0);
    v.t[i] = v.mass[i] = static_cast<std::int64_t>(1.0 + weight(rng) * 1e6);
    v.s[i] = positive ? v.t[i] : -v.t[i];
  }
  return v;
}

// Variance: targets with a step in feature 1 (easy) or pure noise (hard), heavy-tailed, weights with zeros.
NodeValues regression_values(const testing::BoostedProblem& p, bool easy, std::uint64_t seed) {
  const std::size_t n = p.X.n_rows;
  std::mt19937_64 rng(seed);
  std::student_t_distribution<double> noise(2.0);
  NodeValues v{std::vector<std::int64_t>(n), std::vector<std::int64_t>(n), std::vector<std::int64_t>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const double x = p.X.at(i, 1);
    const double r = (easy ? (std::isnan(x) ? 3.0 : x > 0.2 ? 8.0 : -5.0) : 0.0) + noise(rng);
    const double w = rng() % 10 == 0 ? 0.0 : 0.5 + static_cast<double>(rng() % 4);
    v.t[i] = static_cast<std::int64_t>(w * 1024.0);
    v.s[i] = static_cast<std::int64_t>(std::llround(w * r * 65536.0));
    v.mass[i] = variance_mass(v.s[i], v.t[i]);
  }
  return v;
}

SplitInfo full_scan(const testing::BoostedProblem& p, ImpurityCriterion c, const std::vector<std::uint32_t>& rows,
                    const NodeValues& v) {
  SplitInfo winner;
  for (std::size_t f = 0; f < p.binned.n_features; ++f) {
    std::vector<std::int64_t> hs(kHistBins, 0), ht(kHistBins, 0);
    for (const std::uint32_t r : rows) {
      hs[p.binned.column(f)[r]] += v.s[r];
      ht[p.binned.column(f)[r]] += v.t[r];
    }
    const SplitInfo s = impurity_split(c, hs.data(), ht.data(), p.bins.n_value_bins(f), p.bins.missing_bin(),
                                       static_cast<std::int32_t>(f));
    if (s.found() && (!winner.found() || better(s, winner))) winner = s;
  }
  return winner;
}

void expect_same(const SplitInfo& got, const SplitInfo& want) {
  ASSERT_EQ(got.found(), want.found());
  if (!want.found()) return;
  EXPECT_EQ(got.feature, want.feature);
  EXPECT_EQ(got.bin, want.bin);
  EXPECT_EQ(got.nan_left, want.nan_left);
  EXPECT_EQ(got.gini_gain, want.gini_gain);  // bit for bit
  EXPECT_EQ(got.left_sum, want.left_sum);
}

// Random leaves (a code range of a random feature, and its complement), every criterion, threads, schedules.
TEST(QuickImpurity, PrunedPassEqualsFullScan) {
  int pruned[3] = {0, 0, 0};  // per criterion
  for (const std::string kind : {"adaboost", "veb"}) {
    const testing::BoostedProblem p = testing::boosted_problem(kind, 3000, 8, 17, 30);
    std::vector<std::int8_t> ones(p.X.n_rows, 1);
    const std::int64_t* q = p.loss->split_values(1, ones.data());
    std::mt19937_64 rng(5);
    for (const ImpurityCriterion c : {ImpurityCriterion::kGini, ImpurityCriterion::kEntropy, ImpurityCriterion::kVariance}) {
      for (int trial = 0; trial < 8; ++trial) {
        const bool easy = trial % 2 == 0;
        const NodeValues v = c == ImpurityCriterion::kVariance ? regression_values(p, easy, 100 + trial)
                             : easy ? easy_class_values(p, 100 + trial)
                                    : class_values(q, p.X.n_rows);
        const std::size_t feature = rng() % p.binned.n_features;
        const auto cut = static_cast<std::uint8_t>(rng() % 256);
        std::vector<std::vector<std::uint32_t>> leaves(2);
        for (std::uint32_t r = 0; r < p.X.n_rows; ++r) leaves[p.binned.column(feature)[r] <= cut ? 0 : 1].push_back(r);
        const QuickParams params{0.5 + 0.05 * trial, 1 + trial * 3};
        for (const auto& leaf : leaves) {
          const SplitInfo want = full_scan(p, c, leaf, v);
          // A heavy-row cache over the whole data (the heaviest third), the leaf's values on it.
          std::vector<std::uint32_t> heaviest(p.X.n_rows);
          for (std::uint32_t r = 0; r < heaviest.size(); ++r) heaviest[r] = r;
          std::stable_sort(heaviest.begin(), heaviest.end(), [&](std::uint32_t a, std::uint32_t b) { return v.mass[a] > v.mass[b]; });
          heaviest.resize(heaviest.size() / 3);
          HeavyRows heavy;
          heavy.build(p.binned, heaviest, 2);
          std::vector<std::uint8_t> in_leaf(p.X.n_rows, 0);
          for (const std::uint32_t r : leaf) in_leaf[r] = 1;
          std::vector<std::int64_t> cs(heavy.rows.size()), ct(heavy.rows.size()), cm(heavy.rows.size());
          for (std::size_t i = 0; i < heavy.rows.size(); ++i) {
            const std::uint32_t r = heavy.rows[i];
            cs[i] = in_leaf[r] ? v.s[r] : 0;
            ct[i] = in_leaf[r] ? v.t[r] : 0;
            cm[i] = in_leaf[r] ? v.mass[r] : 0;
          }
          const ImpurityCache cache{&heavy, cs.data(), ct.data(), cm.data()};
          for (const int threads : {1, 3}) {
            for (const bool cached : {false, true}) {
              SCOPED_TRACE(::testing::Message() << kind << " criterion " << static_cast<int>(c) << " trial " << trial
                                                << " threads " << threads << " rows " << leaf.size() << " cached " << cached);
              QuickWork work;
              const SplitInfo got = quick_impurity_split(p.binned, p.bins, c, leaf.data(), leaf.size(), v.s.data(),
                                                         v.t.data(), v.mass.data(), threads, params, work, nullptr,
                                                         cached ? &cache : nullptr);
              expect_same(got, want);
              EXPECT_LE(work.bin_accumulations, static_cast<std::int64_t>(leaf.size() * p.binned.n_features));
              pruned[static_cast<int>(c)] += work.features_pruned;
            }
          }
        }
      }
    }
  }
  for (const int count : pruned) EXPECT_GT(count, 0);  // the bound bites for every criterion
  std::printf("features pruned: gini %d, entropy %d, variance %d\n", pruned[0], pruned[1], pruned[2]);
}

// LazyBoost's inactive features are neither searched nor returned.
TEST(QuickImpurity, InactiveFeaturesAreSkipped) {
  const testing::BoostedProblem p = testing::boosted_problem("adaboost", 1500, 6, 3, 10);
  const NodeValues v = regression_values(p, true, 7);
  std::vector<std::uint32_t> rows(p.X.n_rows);
  for (std::uint32_t r = 0; r < rows.size(); ++r) rows[r] = r;
  std::vector<std::uint8_t> active{1, 0, 1, 1, 0, 1};
  QuickWork work;
  const SplitInfo got = quick_impurity_split(p.binned, p.bins, ImpurityCriterion::kVariance, rows.data(), rows.size(),
                                             v.s.data(), v.t.data(), v.mass.data(), 2, {}, work, active.data());
  ASSERT_TRUE(got.found());
  EXPECT_TRUE(active[static_cast<std::size_t>(got.feature)]);
  EXPECT_NE(got.feature, 1);  // feature 1 holds the step but is inactive
}

// The bound itself (App. 7.2), by brute force: for every split of every feature, the error on the heaviest
// m rows never exceeds the error on m + 1 rows (so on all rows); Gini's grows by at most 4x a row's mass.
TEST(QuickImpurity, PrefixErrorNeverExceedsTheFullError) {
  const testing::BoostedProblem p = testing::boosted_problem("veb", 400, 3, 23, 12);
  std::vector<std::int8_t> ones(p.X.n_rows, 1);
  const std::int64_t* q = p.loss->split_values(1, ones.data());
  for (const ImpurityCriterion c : {ImpurityCriterion::kGini, ImpurityCriterion::kEntropy, ImpurityCriterion::kVariance}) {
    const NodeValues v = c == ImpurityCriterion::kVariance ? regression_values(p, true, 3) : class_values(q, p.X.n_rows);
    const ImpurityKind kind = c == ImpurityCriterion::kEntropy ? ImpurityKind::kEntropy : ImpurityKind::kPurity;
    std::vector<std::uint32_t> order(p.X.n_rows);
    for (std::uint32_t r = 0; r < order.size(); ++r) order[r] = r;
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return v.mass[a] > v.mass[b]; });
    for (std::size_t f = 0; f < p.binned.n_features; ++f) {
      for (int bin = 0; bin < p.bins.n_value_bins(f); bin += 7) {
        double previous = -1e300;
        std::int64_t ls = 0, lt = 0, rs = 0, rt = 0, m = 0;
        for (const std::uint32_t r : order) {
          const bool left = p.binned.column(f)[r] <= bin;  // NaN (the top code) right
          (left ? ls : rs) += v.s[r];
          (left ? lt : rt) += v.t[r];
          m += kind == ImpurityKind::kPurity ? v.mass[r] : 0;
          const double error = static_cast<double>(m) - side_score(kind, ls, lt) - side_score(kind, rs, rt);
          const double slack = 1e-9 * (static_cast<double>(m) + static_cast<double>(lt + rt) * 40.0);
          ASSERT_GE(error, previous - slack) << "criterion " << static_cast<int>(c) << " feature " << f << " bin " << bin;
          if (c == ImpurityCriterion::kGini && previous > -1e300) {  // and grows by at most 4x the row's mass
            ASSERT_LE(error - previous, 4.0 * static_cast<double>(v.mass[r]) + slack) << "feature " << f << " bin " << bin;
          }
          previous = error;
        }
      }
    }
  }
}

// The entropy search against a slow reference in long double over every candidate.
TEST(QuickImpurity, EntropySplitIsTheLowestWeightedEntropy) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int n_value_bins = 2 + static_cast<int>(rng() % 12), missing = 255;
    std::vector<std::int64_t> pos(kHistBins, 0), neg(kHistBins, 0), hs(kHistBins), ht(kHistBins);
    for (int b = 0; b < n_value_bins; ++b) {
      pos[b] = static_cast<std::int64_t>(rng() % 1000);
      neg[b] = static_cast<std::int64_t>(rng() % 1000);  // one draw per statement: the same data for every compiler
      neg[b] *= (rng() % 3 == 0);
    }
    if (trial % 2) pos[missing] = static_cast<std::int64_t>(rng() % 500), neg[missing] = static_cast<std::int64_t>(rng() % 500);
    for (int b = 0; b < kHistBins; ++b) hs[b] = pos[b] - neg[b], ht[b] = pos[b] + neg[b];
    auto h = [](long double p, long double n) {
      auto xl = [](long double z) { return z > 0 ? z * std::log(z) : 0.0L; };
      return xl(p + n) - xl(p) - xl(n);
    };
    long double P = 0, N = 0;
    for (int b = 0; b < kHistBins; ++b) P += pos[b], N += neg[b];
    long double best = 0;
    int best_bin = -1;
    long double lp = 0, ln = 0;
    for (int bin = 0; bin < n_value_bins; ++bin) {
      lp += pos[bin], ln += neg[bin];
      const long double mp = pos[missing], mn = neg[missing];
      const long double g1 = h(P, N) - h(lp, ln) - h(P - lp, N - ln);
      if (g1 > best * (1 + 1e-12L) + 1e-9L) best = g1, best_bin = bin;
      if (mp + mn > 0 && bin < n_value_bins - 1) {
        const long double g2 = h(P, N) - h(lp + mp, ln + mn) - h(P - lp - mp, N - ln - mn);
        if (g2 > best * (1 + 1e-12L) + 1e-9L) best = g2, best_bin = bin;
      }
    }
    const SplitInfo s = best_split_entropy(hs.data(), ht.data(), n_value_bins, missing, 0);
    ASSERT_EQ(s.found(), best_bin >= 0) << trial;
    if (s.found()) {
      EXPECT_NEAR(s.gini_gain, static_cast<double>(best), 1e-6 * static_cast<double>(best)) << trial;
    }
  }
}

}  // namespace
}  // namespace rebelboost::tree
