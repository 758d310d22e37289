// Tests of the completed-prefix bound of Gini and entropy (impurity_bound.hpp), against brute force in
// long double: it never exceeds the error of any split on the whole node, it is at least the rows' own
// error, and Gini's grows by at most 8x the mass read between two bounds.
#include "tree/impurity_bound.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace rebelboost::tree {
namespace {

// Exact side errors from class masses: Gini 4 P N / T, entropy T ln T - P ln P - N ln N (nats).
long double exact_side(ClassImpurity kind, long double P, long double N) {
  const long double T = P + N;
  if (T <= 0) return 0;
  if (kind == ClassImpurity::kGini) return 4 * P * N / T;
  auto xl = [](long double z) { return z > 0 ? z * std::log(z) : 0.0L; };
  return xl(T) - xl(P) - xl(N);
}

struct Row {
  int bin;  // kMissing for NaN
  std::int64_t s;  // +-weight: the sign is the class
};
constexpr int kBins = 9, kMissing = kBins;  // value bins 0..8, then the missing bin

// The least exact error over every candidate of the full search (each threshold, NaN right and left).
long double full_error(ClassImpurity kind, const std::vector<Row>& rows) {
  long double pos[kBins + 1] = {}, neg[kBins + 1] = {};
  for (const Row& r : rows) (r.s > 0 ? pos : neg)[r.bin] += static_cast<long double>(std::llabs(r.s));
  long double best = INFINITY, lp = 0, ln = 0, vp = 0, vn = 0;
  for (int b = 0; b < kBins; ++b) vp += pos[b], vn += neg[b];
  const long double mp = pos[kMissing], mn = neg[kMissing];
  for (int b = -1; b < kBins; ++b) {
    if (b >= 0) lp += pos[b], ln += neg[b];
    best = std::min(best, exact_side(kind, lp, ln) + exact_side(kind, vp - lp + mp, vn - ln + mn));
    best = std::min(best, exact_side(kind, lp + mp, ln + mn) + exact_side(kind, vp - lp, vn - ln));
  }
  return best;
}

// The bound from the rows read (a prefix of `rows`) and the class masses of the others, built as the pruned
// pass builds it: positions at the non-empty value bins only.
double bound_after(ClassImpurity kind, const std::vector<Row>& rows, std::size_t read, bool rest_known = true) {
  std::int64_t s[kBins + 1] = {}, t[kBins + 1] = {};
  std::int64_t rest_pos = 0, rest_neg = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i < read) {
      s[rows[i].bin] += rows[i].s;
      t[rows[i].bin] += std::llabs(rows[i].s);
    } else {
      (rows[i].s > 0 ? rest_pos : rest_neg) += std::llabs(rows[i].s);
    }
  }
  std::vector<double> ls{0.0}, lt{0.0};
  double vs = 0, vt = 0;
  for (int b = 0; b < kBins; ++b) {
    if (s[b] == 0 && t[b] == 0) continue;
    vs += static_cast<double>(s[b]);
    vt += static_cast<double>(t[b]);
    ls.push_back(vs);
    lt.push_back(vt);
  }
  const PrefixCandidates c{ls.data(), lt.data(), static_cast<int>(ls.size()), vs, vt,
                           static_cast<double>(s[kMissing]), static_cast<double>(t[kMissing])};
  if (!rest_known) rest_pos = rest_neg = 0;
  return completed_lower_bound(kind, c, static_cast<double>(rest_pos), static_cast<double>(rest_neg));
}

std::vector<Row> random_node(std::mt19937_64& rng, int n) {
  std::vector<Row> rows(static_cast<std::size_t>(n));
  std::lognormal_distribution<double> weight(0.0, 1.5);
  const bool easy = rng() % 2 == 0;
  for (Row& r : rows) {
    r.bin = rng() % 7 == 0 ? kMissing : static_cast<int>(rng() % kBins);
    const bool positive = easy ? (r.bin < 4) != (rng() % 6 == 0) : rng() % 2 == 0;
    const auto w = static_cast<std::int64_t>(1 + weight(rng) * 1e9);
    r.s = positive ? w : -w;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return std::llabs(a.s) > std::llabs(b.s); });
  return rows;
}

TEST(ImpurityBound, SideErrorsAreGiniAndALowerBoundOnTheEntropy) {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 20000; ++trial) {
    const auto P = static_cast<std::int64_t>(rng() % 1000000), N = static_cast<std::int64_t>(rng() % (trial % 3 ? 1000000 : 50));
    const double S = static_cast<double>(P - N), T = static_cast<double>(P + N);
    const long double gini = exact_side(ClassImpurity::kGini, P, N), entropy = exact_side(ClassImpurity::kEntropy, P, N);
    EXPECT_NEAR(side_error<ClassImpurity::kGini>(S, T), static_cast<double>(gini), 1e-9 * T);
    const double lower = side_error<ClassImpurity::kEntropy>(S, T);
    ASSERT_LE(lower, static_cast<double>(entropy) + 1e-12 * T) << P << " " << N;
    // Tight near balance (the series' first terms are exact) and at a pure side.
    const double u = T > 0 ? S / T : 0.0;
    if (std::fabs(u) < 0.3) {
      EXPECT_NEAR(lower, static_cast<double>(entropy), 0.08 * T * std::pow(u, 6) + 1e-9 * T);
    }
  }
  EXPECT_NEAR(side_error<ClassImpurity::kEntropy>(7.0, 7.0), 0.0, 1e-12);
  EXPECT_NEAR(side_error<ClassImpurity::kEntropy>(0.0, 8.0), 8.0 * std::log(2.0), 1e-12);
}

TEST(ImpurityBound, NeverExceedsAnySplitOfTheWholeNodeAndBeatsTheRowsAlone) {
  std::mt19937_64 rng(7);
  for (const ClassImpurity kind : {ClassImpurity::kGini, ClassImpurity::kEntropy}) {
    int tighter = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<Row> rows = random_node(rng, 2 + static_cast<int>(rng() % 60));
      if (trial % 4 == 3) std::shuffle(rows.begin(), rows.end(), rng);  // the bound holds for any subset read
      const long double full = full_error(kind, rows);
      double total = 0;
      for (const Row& r : rows) total += static_cast<double>(std::llabs(r.s));
      const double slack = 1e-10 * total;  // the doubles' rounding
      double previous = 0;
      for (std::size_t read = 0; read <= rows.size(); ++read) {
        const double bound = bound_after(kind, rows, read);
        const double own = bound_after(kind, rows, read, /*rest_known=*/false);  // the rows read alone
        ASSERT_LE(bound, static_cast<double>(full) + slack) << "criterion " << static_cast<int>(kind) << " trial " << trial
                                                            << " read " << read;
        ASSERT_GE(bound, own - slack);
        tighter += bound > own + 1e-6 * total;
        if (read > 0) {
          const double added = static_cast<double>(std::llabs(rows[read - 1].s));
          if (kind == ClassImpurity::kGini) {  // what lets a refresh be skipped
            ASSERT_LE(bound, previous + 8.0 * added + slack) << "trial " << trial << " read " << read;
          }
        }
        previous = bound;
      }
      // Every row read: Gini's bound is the error itself (the entropy's is its polynomial lower bound,
      // tight near balance: SideErrorsAreGiniAndALowerBoundOnTheEntropy).
      if (kind == ClassImpurity::kGini) {
        EXPECT_NEAR(bound_after(kind, rows, rows.size()), static_cast<double>(full), 1e-9 * static_cast<double>(full + 1));
      }
    }
    EXPECT_GT(tighter, 1000);  // the unread rows' class masses raise the bound, often
  }
}

}  // namespace
}  // namespace rebelboost::tree
