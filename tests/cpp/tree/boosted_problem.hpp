// A training problem part-way through boosting, for the tree-stage tests: raw X with NaN, its bins, labels
// (sorted by class, as the booster trains REBEL), skewed sample weights and a loss after a few trees.
#pragma once

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "data/bin_mapper.hpp"
#include "loss/loss.hpp"
#include "test_util.hpp"
#include "tree/grower.hpp"

namespace rebelboost::testing {

struct BoostedProblem {
  Dense<double> X;
  data::BinMapper bins{256, 1000000};
  data::BinnedMatrix binned;
  std::vector<std::int32_t> y;
  std::vector<double> weights;
  std::vector<std::size_t> class_begin;
  std::unique_ptr<loss::Loss> loss;
};

// kind: "adaboost", "veb" or "rebel" (3 classes). The loss has taken `trees` depth-3 trees already.
inline BoostedProblem boosted_problem(const std::string& kind, std::size_t n, std::size_t n_features, std::uint64_t seed,
                                      int trees = 3) {
  BoostedProblem p;
  const std::size_t K = kind == "rebel" ? 3 : 2;
  const Dense<double> raw = random_matrix(n, n_features, seed, 0.08);
  std::vector<std::int32_t> labels = noisy_labels(raw, seed + 1, 0.15);
  std::mt19937_64 noise(seed + 3);
  if (K == 3)  // class 2 where a third feature is high, with label noise
    for (std::size_t r = 0; r < n; ++r)
      if ((!std::isnan(raw.at(r, 2)) && raw.at(r, 2) > 0.4) != (noise() % 5 == 0)) labels[r] = 2;
  // Rows sorted by class (stable).
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return labels[a] < labels[b]; });
  p.X = Dense<double>{n, n_features, std::vector<double>(n * n_features)};
  p.y.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    p.y[i] = labels[order[i]];
    for (std::size_t c = 0; c < n_features; ++c) p.X.at(i, c) = raw.at(order[i], c);
  }
  p.class_begin.assign(K + 1, 0);
  for (const std::int32_t c : p.y) ++p.class_begin[static_cast<std::size_t>(c) + 1];
  for (std::size_t c = 0; c < K; ++c) p.class_begin[c + 1] += p.class_begin[c];
  std::mt19937_64 rng(seed + 2);
  std::exponential_distribution<double> expo(1.0);
  p.weights.resize(n);
  for (double& w : p.weights) w = rng() % 20 == 0 ? 0.0 : expo(rng);
  p.bins.fit(p.X.c_view(), 1, p.weights.data());
  p.binned = p.bins.transform(p.X.c_view(), 1);
  const double smoothing = 1.0 / static_cast<double>(n);
  if (kind == "adaboost") p.loss = loss::make_adaboost(p.y.data(), p.weights.data(), n, smoothing, 1);
  else if (kind == "veb") p.loss = loss::make_veb(p.y.data(), p.weights.data(), n, smoothing, 1, 0.5);
  else {
    std::vector<double> uniform(K * K, 1.0);
    for (std::size_t k = 0; k < K; ++k) uniform[k * K + k] = 0.0;
    p.loss = loss::make_rebel(p.y.data(), p.weights.data(), n, K, uniform, smoothing, 1);
  }
  p.loss->init_bias();
  tree::TreeGrower grower(p.binned, p.bins, 1, p.class_begin);
  for (int t = 0; t < trees; ++t) {
    const tree::GrowResult g = grower.grow(*p.loss, 3);
    const loss::Loss::Step step = p.loss->step(g.outputs.data());
    p.loss->update(g.outputs.data(), step.step, step);
  }
  return p;
}

}  // namespace rebelboost::testing
