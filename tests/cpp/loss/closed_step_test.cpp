// The closed-form steps of the exponential losses against a brute-force line search written here: the step
// a tree gets from Loss::step must be where the loss itself, evaluated on fresh copies of the loss moved
// by update(), is lowest along the tree's outputs (docs/guide/adaboost.md, docs/guide/rebel.md).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "loss/loss.hpp"

namespace rebelboost::loss {
namespace {

using MakeLoss = std::function<std::unique_ptr<Loss>()>;

// The loss after moving every sample by f_n * a from the bias (a fresh loss each time: no state shared).
double loss_along(const MakeLoss& make, const std::vector<std::int8_t>& f, const std::vector<double>& a) {
  std::unique_ptr<Loss> loss = make();
  loss->init_bias();
  const Loss::Step sums = loss->step(f.data());
  loss->update(f.data(), a, sums);
  return loss->value();
}

// Golden-section search for the minimiser of a convex function of one variable on [lo, hi].
double golden_section(const std::function<double(double)>& phi, double lo, double hi) {
  const double r = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int it = 0; it < 200; ++it) {
    const double a = hi - r * (hi - lo), b = lo + r * (hi - lo);
    if (phi(a) < phi(b)) hi = b;
    else lo = a;
  }
  return 0.5 * (lo + hi);
}

struct Data {
  std::vector<std::int32_t> y;
  std::vector<double> weight;
  std::vector<std::int8_t> f;  // a weak learner that agrees with the label (class 0 vs rest) 70 % of the time
};

Data random_data(std::size_t n, std::size_t K, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Data d;
  for (std::size_t i = 0; i < n; ++i) {
    d.y.push_back(static_cast<std::int32_t>(rng() % K));
    d.weight.push_back(0.1 + unit(rng));
    const bool positive = K == 2 ? d.y.back() == 1 : d.y.back() == 0;
    d.f.push_back((unit(rng) < 0.7) == positive ? 1 : -1);
  }
  return d;
}

TEST(ClosedFormStep, AdaBoostStepIsTheLineSearchMinimum) {
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const Data d = random_data(300, 2, seed);
    const double* w = seed % 2 ? d.weight.data() : nullptr;
    const MakeLoss make = [&] { return make_adaboost(d.y.data(), w, d.y.size(), 0.0, 1); };
    std::unique_ptr<Loss> loss = make();
    loss->init_bias();
    const Loss::Step step = loss->step(d.f.data());
    const double best = golden_section([&](double a) { return loss_along(make, d.f, {a}); }, -10.0, 10.0);
    EXPECT_NEAR(step.step[0], best, 1e-6) << "seed " << seed;
    EXPECT_TRUE(step.has_edge == (step.step[0] > 0));
    EXPECT_LT(loss_along(make, d.f, step.step), loss_along(make, d.f, {0.0}));
  }
}

TEST(ClosedFormStep, VebStepMinimisesItsLemmaOneBoundAndLowersTheCost) {
  // VEB-Boost's step minimises U_right e^{-2a} + U_wrong e^{2a}, U the search weights u_n (sample_mass); by
  // Theorem 2 it lowers the variance-penalised cost (value()) for every lam in [0, 1].
  for (double lam : {0.0, 0.3, 1.0}) {
    const Data d = random_data(300, 2, 7);
    const MakeLoss make = [&] { return make_veb(d.y.data(), d.weight.data(), d.y.size(), 0.0, 1, lam); };
    std::unique_ptr<Loss> loss = make();
    loss->init_bias();
    std::vector<double> u(d.y.size());
    loss->sample_mass(u.data());
    double right = 0.0, wrong = 0.0;
    for (std::size_t i = 0; i < u.size(); ++i) ((d.f[i] == 1) == (d.y[i] == 1) ? right : wrong) += u[i];
    const double best = golden_section(
        [&](double a) { return right * std::exp(-2.0 * a) + wrong * std::exp(2.0 * a); }, -10.0, 10.0);
    const Loss::Step step = loss->step(d.f.data());
    EXPECT_NEAR(step.step[0], best, 1e-6) << "lam " << lam;
    EXPECT_LT(loss_along(make, d.f, step.step), loss_along(make, d.f, {0.0})) << "lam " << lam;
  }
}

TEST(ClosedFormStep, RebelStepIsTheLineSearchMinimumOfEveryClass) {
  const std::size_t n = 240, K = 3;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const Data d = random_data(n, K, seed);
    std::vector<double> cost(K * K, 1.0);
    for (std::size_t k = 0; k < K; ++k) cost[k * K + k] = 0.0;
    cost[0 * K + 2] = 4.0;  // uneven costs
    const double* w = seed % 2 ? d.weight.data() : nullptr;
    const MakeLoss make = [&] { return make_rebel(d.y.data(), w, n, K, cost, 0.0, 1); };
    std::unique_ptr<Loss> loss = make();
    loss->init_bias();
    const std::vector<double> step = loss->step(d.f.data()).step;
    for (std::size_t k = 0; k < K; ++k) {  // one class's step moved, the others held at the closed form
      const double best = golden_section(
          [&](double a) {
            std::vector<double> at = step;
            at[k] = a;
            return loss_along(make, d.f, at);
          },
          -10.0, 10.0);
      EXPECT_NEAR(step[k], best, 1e-6) << "seed " << seed << " class " << k;
    }
    EXPECT_LT(loss_along(make, d.f, step), loss_along(make, d.f, std::vector<double>(K, 0.0)));
  }
}

}  // namespace
}  // namespace rebelboost::loss
