// Per-feature contributions (predict/tree_shap.hpp): the sum identity, exact zeros, a brute-force Shapley
// computation over every coalition, thread-count identity, covers recorded at fit, and the clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "predict/tree_shap.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;

Model fit(const Dense<double>& X, std::size_t n_classes, LossKind loss, int depth, const double* weights = nullptr) {
  std::vector<std::int32_t> y = testing::noisy_labels(X, 7, 0.2);
  for (std::size_t r = 0; r < y.size(); ++r)  // more classes: split the labels by the third feature too
    if (n_classes > 2 && !std::isnan(X.at(r, 2))) y[r] = (y[r] + static_cast<std::int32_t>(std::fabs(X.at(r, 2)) * 2)) % static_cast<std::int32_t>(n_classes);
  TrainParams p;
  p.loss = loss;
  p.n_estimators = 8;
  p.max_depth = depth;
  p.n_threads = 1;
  return train(X.c_view(), y.data(), weights, n_classes, p).model;
}

std::vector<double> contributions_of(const Model& m, const Dense<double>& X, int threads) {
  std::vector<double> out(X.n_rows * m.n_outputs * (m.n_features + 1));
  contributions(m, X.c_view(), out.data(), threads);
  return out;
}

// E[f | x_S] with path-dependent expectations: known features follow x, unknown ones weigh by cover.
double conditional(const Tree& t, const double* x, std::uint32_t known, std::uint32_t node = 0) {
  const Node& n = t.nodes[node];
  if (n.feature < 0) return n.value;
  if (known >> n.feature & 1u) {
    const double v = x[n.feature];
    const bool left = std::isnan(v) ? n.nan_left != 0 : v <= n.threshold;
    return conditional(t, x, known, left ? n.left : n.right);
  }
  const double c = t.cover[node];
  const double pl = c > 0 ? t.cover[n.left] / c : 0.5, pr = c > 0 ? t.cover[n.right] / c : 0.5;
  return pl * conditional(t, x, known, n.left) + pr * conditional(t, x, known, n.right);
}

// phi_j = sum_S |S|! (M - |S| - 1)! / M! (v(S + j) - v(S)) over every coalition S without j.
std::vector<double> brute_force(const Tree& t, const double* x, std::size_t M) {
  std::vector<double> v(std::size_t{1} << M), fact(M + 1, 1.0), phi(M + 1, 0.0);
  for (std::uint32_t S = 0; S < v.size(); ++S) v[S] = conditional(t, x, S);
  for (std::size_t i = 1; i <= M; ++i) fact[i] = fact[i - 1] * static_cast<double>(i);
  for (std::size_t j = 0; j < M; ++j)
    for (std::uint32_t S = 0; S < v.size(); ++S) {
      if (S >> j & 1u) continue;
      const auto s = static_cast<std::size_t>(__builtin_popcount(S));
      phi[j] += fact[s] * fact[M - s - 1] / fact[M] * (v[S | (1u << j)] - v[S]);
    }
  phi[M] = v[0];
  return phi;
}

struct Case {
  std::size_t n_classes;
  LossKind loss;
  int depth;
};

class TreeShapCases : public ::testing::TestWithParam<Case> {};

TEST_P(TreeShapCases, SumsToTheScoresAndAgreesWithBruteForce) {
  const Case c = GetParam();
  const Dense<double> X = testing::random_matrix(300, 6, 11 + static_cast<std::uint64_t>(c.depth), 0.1);
  const Model m = fit(X, c.n_classes, c.loss, c.depth);
  ASSERT_TRUE(m.has_covers());
  const std::size_t K = m.n_outputs, d = m.n_features, W = K * (d + 1);
  const std::vector<double> phi = contributions_of(m, X, 1);
  std::vector<double> scores(X.n_rows * K);
  decision_function(m, X.c_view(), scores.data(), 1);
  std::vector<double> scale(m.bias);
  for (std::size_t k = 0; k < K; ++k) {
    scale[k] = std::fabs(scale[k]);
    for (const Tree& t : m.trees) scale[k] += std::fabs(t.step[k]);
  }
  for (std::size_t r = 0; r < X.n_rows; ++r)
    for (std::size_t k = 0; k < K; ++k) {
      double sum = 0.0;
      for (std::size_t j = 0; j <= d; ++j) sum += phi[r * W + k * (d + 1) + j];
      EXPECT_LE(std::fabs(sum - scores[r * K + k]), 1e-12 * scale[k]) << "row " << r << " class " << k;
    }
  // The leaf tables (the default for shallow trees) and Algorithm 2's recursion agree.
  std::vector<double> walked(phi.size());
  predict::TreeShap(m, kAllLearners, 0).contributions(X.c_view(), walked.data(), 1);
  for (std::size_t i = 0; i < phi.size(); ++i) EXPECT_NEAR(phi[i], walked[i], 1e-12 * scale[(i % W) / (d + 1)]) << i;
  for (std::size_t r = 0; r < 5; ++r) {
    std::vector<double> expected(W, 0.0);
    for (std::size_t k = 0; k < K; ++k) expected[k * (d + 1) + d] = m.bias[k];
    for (const Tree& t : m.trees) {
      const std::vector<double> one = brute_force(t, &X.c_order[r * d], d);
      for (std::size_t k = 0; k < K; ++k)
        for (std::size_t j = 0; j <= d; ++j) expected[k * (d + 1) + j] += t.step[k] * one[j];
    }
    for (std::size_t i = 0; i < W; ++i) EXPECT_NEAR(phi[r * W + i], expected[i], 1e-12 * scale[i / (d + 1)]) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Losses, TreeShapCases,
                         ::testing::Values(Case{2, LossKind::kAdaBoost, 1}, Case{2, LossKind::kAdaBoost, 4},
                                           Case{2, LossKind::kVebBoost, 3}, Case{3, LossKind::kRebel, 2},
                                           Case{5, LossKind::kRebel, 6}, Case{2, LossKind::kAdaBoost, 8}));

TEST(TreeShap, ThreadCountDoesNotChangeABitAndUnusedFeaturesGetZero) {
  Dense<double> X = testing::random_matrix(2000, 5, 3, 0.1);
  for (std::size_t r = 0; r < X.n_rows; ++r) X.at(r, 4) = 1.5;  // a constant: no tree can split on it
  const Model m = fit(X, 4, LossKind::kRebel, 5);
  const std::vector<double> one = contributions_of(m, X, 1);
  EXPECT_EQ(one, contributions_of(m, X, 2));
  EXPECT_EQ(one, contributions_of(m, X, 3));
  const std::size_t W = m.n_outputs * 6;
  for (std::size_t r = 0; r < X.n_rows; ++r)
    for (std::size_t k = 0; k < m.n_outputs; ++k) EXPECT_EQ(one[r * W + k * 6 + 4], 0.0);
  const Predictor predictor(m);  // the Predictor gives the same values, float rows too
  std::vector<double> via(one.size());
  predictor.contributions(X.c_view(), via.data());
  EXPECT_EQ(one, via);
  const Dense<float> Xf = X.cast<float>();
  predictor.contributions(Xf.c_view(), via.data(), kAllLearners, 2);
  EXPECT_EQ(via.size(), one.size());
}

TEST(TreeShap, CoversAreTheWeightsReachingEachNode) {
  const Dense<double> X = testing::random_matrix(400, 4, 5, 0.1);
  std::vector<double> w(X.n_rows);
  for (std::size_t r = 0; r < w.size(); ++r) w[r] = static_cast<double>(r % 3);
  for (const double* weights : {static_cast<const double*>(nullptr), static_cast<const double*>(w.data())}) {
    const Model m = fit(X, 2, LossKind::kAdaBoost, 3, weights);
    for (const Tree& t : m.trees) {
      std::vector<double> reached(t.nodes.size(), 0.0);
      for (std::size_t r = 0; r < X.n_rows; ++r) {
        std::uint32_t i = 0;
        for (;;) {
          reached[i] += weights ? weights[r] : 1.0;
          const Node& n = t.nodes[i];
          if (n.feature < 0) break;
          const double v = X.at(r, static_cast<std::size_t>(n.feature));
          i = (std::isnan(v) ? n.nan_left != 0 : v <= n.threshold) ? n.left : n.right;
        }
      }
      EXPECT_EQ(t.cover, reached);
    }
  }
}

TEST(TreeShap, ModelsWithoutCoversAndSimilaritiesAreClearErrors) {
  const Dense<double> X = testing::random_matrix(100, 3, 9);
  Model m = fit(X, 2, LossKind::kAdaBoost, 2);
  for (Tree& t : m.trees) t.cover.clear();
  std::vector<double> out(X.n_rows * 4);
  try {
    contributions(m, X.c_view(), out.data(), 1);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no node covers"), std::string::npos) << e.what();
  }
  Model s;
  s.learner = LearnerKind::kSimilarity;
  EXPECT_THROW(contributions(s, X.c_view(), out.data(), 1), InvalidArgument);
  const Model good = fit(X, 2, LossKind::kAdaBoost, 2);
  const Dense<double> wrong = testing::random_matrix(4, 2, 1);
  EXPECT_THROW(contributions(good, wrong.c_view(), out.data(), 1), InvalidArgument);
}

}  // namespace
}  // namespace rebelboost
