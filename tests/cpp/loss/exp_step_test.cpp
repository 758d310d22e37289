// Tests of the exact step of real-valued learners: the safeguarded Newton minimiser against golden-section
// search, REBEL's step_real against its closed form for +-1 outputs, and the loss it promises.
#include "loss/exp_step.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "loss/loss.hpp"

namespace rebelboost::loss {
namespace {

struct Problem {
  std::vector<double> c, g;  // one class
  double eps;
  double phi(double a) const {
    double v = eps * (std::exp(a) + std::exp(-a));
    for (std::size_t n = 0; n < c.size(); ++n) v += c[n] * std::exp(g[n] * a);
    return v;
  }
};

double golden_section(const Problem& p, double lo, double hi) {
  const double r = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int it = 0; it < 300; ++it) {
    const double a = hi - r * (hi - lo), b = lo + r * (hi - lo);
    if (p.phi(a) < p.phi(b)) hi = b;
    else lo = a;
  }
  return 0.5 * (lo + hi);
}

TEST(ExpStep, NewtonFindsTheMinimiserOfEveryClass) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t K = 1 + trial % 4, n = 5 + static_cast<std::size_t>(trial) * 7;
    std::vector<Problem> problems(K);
    for (Problem& p : problems) {
      p.eps = trial % 5 == 0 ? 0.0 : std::pow(10.0, -6.0 * unit(rng));
      const double bias = unit(rng);  // some classes far from balanced
      for (std::size_t m = 0; m < n; ++m) {
        p.c.push_back(std::pow(10.0, -3.0 * unit(rng)));
        p.g.push_back(unit(rng) < bias ? unit(rng) : -unit(rng));
      }
    }
    int passes = 0;
    const std::vector<double> a = minimise_exp_sums(std::vector<double>(K, 0.0), 0.0, 40.0,
        [&](const std::vector<double>& at, const std::vector<std::uint8_t>& active) {
          ++passes;
          ExpSums s(K);
          for (std::size_t k = 0; k < K; ++k) {
            if (!active[k]) continue;
            const Problem& p = problems[k];
            for (std::size_t m = 0; m < n; ++m) {
              const double e = p.c[m] * std::exp(p.g[m] * at[k]);
              s.value[k] += e;
              s.slope[k] += p.g[m] * e;
              s.curvature[k] += p.g[m] * p.g[m] * e;
            }
            // Each class has its own smoothing here, so it is folded into the sums (the solver's eps is 0).
            s.value[k] += p.eps * (std::exp(at[k]) + std::exp(-at[k]));
            s.slope[k] += p.eps * (std::exp(at[k]) - std::exp(-at[k]));
            s.curvature[k] += p.eps * (std::exp(at[k]) + std::exp(-at[k]));
          }
          return s;
        });
    for (std::size_t k = 0; k < K; ++k) {
      const double want = golden_section(problems[k], -40.0, 40.0);
      EXPECT_NEAR(a[k], want, 1e-6 * std::max(1.0, std::fabs(want))) << "trial " << trial << " class " << k;
      EXPECT_LE(problems[k].phi(a[k]), problems[k].phi(want) * (1 + 1e-12));
    }
    EXPECT_LT(passes, 60);
  }
}

TEST(ExpStep, SignedOutputsGiveTheClosedForm) {
  // g in {+-1}: s+ e^a + s- e^-a + eps (e^a + e^-a) is minimised by 1/2 ln((s- + eps) / (s+ + eps)).
  const double plus = 0.3, minus = 0.05, eps = 1e-3;
  const std::vector<double> a = minimise_exp_sums({0.0}, eps, 40.0, [&](const std::vector<double>& at, const auto&) {
    ExpSums s(1);
    s.value[0] = plus * std::exp(at[0]) + minus * std::exp(-at[0]);
    s.slope[0] = plus * std::exp(at[0]) - minus * std::exp(-at[0]);
    s.curvature[0] = s.value[0];
    return s;
  });
  EXPECT_NEAR(a[0], 0.5 * std::log((minus + eps) / (plus + eps)), 1e-13);
}

TEST(ExpStep, RebelStepRealEqualsTheClosedFormForSignsAndLowersTheLoss) {
  const std::size_t n = 200, K = 4;
  std::mt19937_64 rng(5);
  std::vector<std::int32_t> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<std::int32_t>(i % K);
  std::vector<double> cost(K * K, 1.0);
  for (std::size_t k = 0; k < K; ++k) cost[k * K + k] = 0.0;
  auto rebel = make_rebel(y.data(), nullptr, n, K, cost, 1.0 / (K * n), 1);
  rebel->init_bias();
  std::vector<std::int8_t> sign(n);
  std::vector<double> f(n), real(n);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    real[i] = unit(rng) * (y[i] == 2 ? -1.0 : 1.0) * std::fabs(unit(rng));
    sign[i] = real[i] >= 0 ? 1 : -1;
    f[i] = sign[i];
  }
  const Loss::Step closed = rebel->step(sign.data());
  const Loss::Step exact = rebel->step_real(f.data());
  for (std::size_t k = 0; k < K; ++k) EXPECT_NEAR(exact.step[k], closed.step[k], 1e-12);
  const Loss::Step step = rebel->step_real(real.data());
  ASSERT_TRUE(step.has_edge);
  const double before = rebel->value();
  rebel->update_real(real.data(), step.step);
  EXPECT_LT(rebel->value(), before);
  // A learner with no edge: f = 0 everywhere.
  const std::vector<double> zero(n, 0.0);
  EXPECT_FALSE(rebel->step_real(zero.data()).has_edge);
}

}  // namespace
}  // namespace rebelboost::loss
