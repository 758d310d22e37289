// REBEL with the logistic and squared surrogates: the safeguarded Newton step against golden-section
// search, the subcosts against Eq. 4.3 solved by brute force, the losses' steps against a line search of
// their own value(), and the Newton root split against a brute-force scan.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "loss/loss.hpp"
#include "loss/newton_step.hpp"
#include "loss/subcosts.hpp"
#include "test_util.hpp"
#include "tree/histogram.hpp"
#include "tree/newton_root.hpp"

namespace rebelboost::loss {
namespace {

double logistic(double x) { return (std::fmax(x, 0.0) + std::log1p(std::exp(-std::fabs(x)))) / std::log(2.0); }
double squared(double x) { return (1.0 + x) * (1.0 + x); }

template <typename F>
double golden_section(F&& phi, double lo, double hi) {
  const double r = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int it = 0; it < 120; ++it) {  // 0.618^120 of the bracket: below double resolution
    const double a = hi - r * (hi - lo), b = lo + r * (hi - lo);
    if (phi(a) < phi(b)) hi = b;
    else lo = a;
  }
  return 0.5 * (lo + hi);
}

TEST(NewtonStep, FindsTheMinimiserOfSumsOfLogistics) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 30; ++trial) {
    const std::size_t K = 1 + trial % 3, n = 4 + static_cast<std::size_t>(trial) * 5;
    // phi_k(a) = sum_m c g(s (h + f a)) with g the logistic (some classes nearly separated: far minimisers).
    std::vector<std::vector<double>> c(K), s(K), h(K), f(K);
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t m = 0; m < n; ++m) {
        c[k].push_back(std::pow(10.0, -2.0 * unit(rng)));
        s[k].push_back(unit(rng) < 0.5 ? 1.0 : -1.0);
        h[k].push_back(8.0 * unit(rng) - 4.0);
        f[k].push_back(unit(rng) < 0.3 + 0.2 * static_cast<double>(k) ? 1.0 : -1.0);
      }
    auto phi = [&](std::size_t k, double a) {
      double v = 0.0;
      for (std::size_t m = 0; m < n; ++m) v += c[k][m] * logistic(s[k][m] * (h[k][m] + f[k][m] * a));
      return v;
    };
    auto evaluate = [&](const std::vector<double>& at, const std::vector<std::uint8_t>& active) {
      SlopeCurvature d(K);
      for (std::size_t k = 0; k < K; ++k) {
        if (!active[k]) continue;
        for (std::size_t m = 0; m < n; ++m) {
          const double x = s[k][m] * (h[k][m] + f[k][m] * at[k]);
          const double p = 1.0 / (1.0 + std::exp(-x));
          d.slope[k] += c[k][m] * s[k][m] * f[k][m] * p / std::log(2.0);
          d.curvature[k] += c[k][m] * p * (1.0 - p) / std::log(2.0);
        }
      }
      return d;
    };
    const std::vector<double> a = newton_minimise(std::vector<double>(K, 0.0), 40.0, evaluate);
    for (std::size_t k = 0; k < K; ++k) {
      const double best = golden_section([&](double x) { return phi(k, x); }, -40.0, 40.0);
      EXPECT_LE(phi(k, a[k]), phi(k, best) * (1.0 + 1e-12)) << "trial " << trial << " class " << k;
      EXPECT_LE(phi(k, a[k]), phi(k, 0.0)) << "the step never raises the loss";
      if (std::fabs(best) < 39.0) {
        EXPECT_NEAR(a[k], best, 1e-6 * std::fmax(1.0, std::fabs(best)));
      }
    }
  }
}

// Eq. 4.3 with c+_y = c-_k = 0: min_h c+_k g(h) + c-_y g(-h) = c_k, by golden section in the test.
template <typename G>
void expect_eq_4_3(const std::vector<double>& cost, std::size_t K, PairMinInverse r_of, G&& g) {
  const Subcosts s = coupled_subcosts(cost, K, r_of);
  for (std::size_t y = 0; y < K; ++y) {
    double mean = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      const double plus = s.plus[y * K + k], minus = s.minus[y];
      if (k == y) {
        EXPECT_EQ(plus, 0.0);
        continue;
      }
      mean += plus / static_cast<double>(K - 1);
      auto pair = [&](double h) { return plus * g(h) + minus * g(-h); };
      const double reached = pair(golden_section(pair, -60.0, 60.0));
      EXPECT_NEAR(reached, cost[y * K + k], 1e-8 * cost[y * K + k] + 1e-12) << "row " << y << " class " << k;
    }
    EXPECT_NEAR(mean, s.minus[y], 1e-9 * s.minus[y]) << "theta is the mean of c+ (row " << y << ")";
  }
}

double squared_inverse(double x) { return x <= 0.0 ? 0.0 : x < 4.0 ? x / (4.0 - x) : std::numeric_limits<double>::infinity(); }

double logistic_inverse(double x) {  // the test's own: bisection on r of (r ln(1 + 1/r) + ln(1 + r)) / ln 2
  if (x <= 0.0) return 0.0;
  double lo = 0.0, hi = 1.0;
  auto pair_min = [](double r) { return (r * std::log1p(1.0 / r) + std::log1p(r)) / std::log(2.0); };
  while (pair_min(hi) < x) hi *= 2.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (pair_min(mid) < x ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

TEST(Subcosts, SatisfyEquation43ForEveryG) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const std::size_t K : {2u, 3u, 5u}) {
    std::vector<double> cost(K * K, 0.0);
    for (std::size_t y = 0; y < K; ++y)
      for (std::size_t k = 0; k < K; ++k)
        if (k != y) cost[y * K + k] = 0.05 + unit(rng);  // scaled below so the largest is 1
    double cmax = 0.0;
    for (double v : cost) cmax = std::fmax(cmax, v);
    for (double& v : cost) v /= cmax;
    expect_eq_4_3(cost, K, &squared_inverse, squared);
    expect_eq_4_3(cost, K, &logistic_inverse, logistic);
  }
  // Uniform costs: c+ = c- = 1/2 for both (pair_min(1) = 2).
  const Subcosts u = coupled_subcosts({0, 1, 1, 0}, 2, &squared_inverse);
  EXPECT_EQ(u.plus[1], 0.5);
  EXPECT_EQ(u.minus[0], 0.5);
}

// The loss after H = bias + f a, from a fresh loss (value() is the unsmoothed loss).
double loss_after(bool logistic_g, const std::vector<std::int32_t>& y, std::size_t K, const std::vector<std::int8_t>& f,
                  const std::vector<double>& a, const std::vector<double>& cost) {
  const std::size_t n = y.size();
  auto loss = logistic_g ? make_logistic(y.data(), nullptr, n, K, cost, 0.0, 1) : make_squared(y.data(), nullptr, n, K, cost, 0.0, 1);
  loss->update(f.data(), a, Loss::Step{});
  return loss->value();
}

TEST(CoupledSumLoss, StepMinimisesTheLossAlongTheTree) {
  const std::size_t K = 3, n = 90;
  std::mt19937_64 rng(2);
  std::vector<std::int32_t> y(n);
  std::vector<std::int8_t> f(n);
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = static_cast<std::int32_t>(i * K / n);  // sorted by class
    f[i] = (rng() % 10 < 3 + 2 * static_cast<unsigned>(y[i])) ? 1 : -1;
  }
  const std::vector<double> cost = {0, 1, 4, 2, 0, 1, 1, 3, 0};
  for (const bool logistic_g : {true, false}) {
    auto loss = logistic_g ? make_logistic(y.data(), nullptr, n, K, cost, 0.0, 1) : make_squared(y.data(), nullptr, n, K, cost, 0.0, 1);
    EXPECT_DOUBLE_EQ(loss->value(), 1.0);
    const Loss::Step step = loss->step(f.data());
    EXPECT_TRUE(step.has_edge);
    const double at = loss_after(logistic_g, y, K, f, step.step, cost);
    EXPECT_LT(at, 1.0);
    for (std::size_t k = 0; k < K; ++k) {
      std::vector<double> a = step.step;
      const double best = golden_section([&](double x) { a[k] = x; return loss_after(logistic_g, y, K, f, a, cost); },
                                         -20.0, 20.0);
      EXPECT_NEAR(step.step[k], best, 1e-6 * std::fmax(1.0, std::fabs(best))) << (logistic_g ? "logistic" : "squared");
    }
  }
}

}  // namespace
}  // namespace rebelboost::loss

namespace rebelboost::tree {
namespace {

TEST(NewtonRoot, MatchesABruteForceScan) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const std::size_t n = 400, d = 5, K = 1 + seed % 4;
    testing::Dense<double> X = testing::random_matrix(n, d, seed, 0.1);
    for (std::size_t r = 0; r < n; ++r)
      if (!std::isnan(X.at(r, 1))) X.at(r, 1) = std::round(2.0 * X.at(r, 1));  // few bins
    data::BinMapper bins(seed % 2 ? 16 : 256, 1000000);
    bins.fit(X.c_view(), 1);
    const data::BinnedMatrix binned = bins.transform(X.c_view(), 1);
    std::mt19937_64 rng(seed);
    std::vector<std::int64_t> G(n * K), curvature(K, 0);
    for (auto& g : G) g = static_cast<std::int64_t>(rng() % 2001) - 1000;
    for (auto& h : curvature) h = 1000 + static_cast<std::int64_t>(rng() % 100000);
    // Brute force: every (feature, bin, NaN side) from naive sums, in long double.
    long double best = 0.0L;
    std::int32_t best_feature = -1, best_bin = -1;
    bool best_nan = false;
    auto gain = [&](const std::vector<std::int64_t>& left, const std::vector<std::int64_t>& total) {
      long double s = 0.0L;
      for (std::size_t k = 0; k < K; ++k) {
        const long double dk = static_cast<long double>(total[k] - 2 * left[k]);
        s += dk * dk / static_cast<long double>(curvature[k]);
      }
      return s;
    };
    std::vector<std::int64_t> total(K, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < K; ++k) total[k] += G[i * K + k];
    best = gain(std::vector<std::int64_t>(K, 0), total);
    const int missing = bins.missing_bin();
    for (std::size_t f = 0; f < d; ++f) {
      const int nvb = bins.n_value_bins(f);
      bool has_missing = false;
      for (std::size_t i = 0; i < n; ++i) has_missing = has_missing || binned.column(f)[i] == missing;
      for (int b = 0; b < nvb; ++b)
        for (const bool nan_left : {false, true}) {
          if (nan_left && (!has_missing || b == nvb - 1)) continue;
          if (!nan_left && b == nvb - 1 && !has_missing) continue;
          std::vector<std::int64_t> left(K, 0);
          for (std::size_t i = 0; i < n; ++i) {
            const int code = binned.column(f)[i];
            if (code <= b && code != missing ? true : (code == missing && nan_left))
              for (std::size_t k = 0; k < K; ++k) left[k] += G[i * K + k];
          }
          const long double g = gain(left, total);
          if (g > best) {
            best = g;
            best_feature = static_cast<std::int32_t>(f);
            best_bin = b;
            best_nan = nan_left;
          }
        }
    }
    const RootSplit r = best_newton_root(binned, bins, G.data(), curvature, K, 2, nullptr, nullptr);
    ASSERT_EQ(r.found, best_feature >= 0) << "seed " << seed;
    if (!r.found) continue;
    EXPECT_EQ(r.feature, best_feature) << "seed " << seed;
    EXPECT_EQ(r.bin, best_bin) << "seed " << seed;
    EXPECT_EQ(r.nan_left, best_nan) << "seed " << seed;
    EXPECT_NEAR(static_cast<double>(r.precise_loss), static_cast<double>(-best), 1e-14 * static_cast<double>(best));
  }
}

}  // namespace
}  // namespace rebelboost::tree
