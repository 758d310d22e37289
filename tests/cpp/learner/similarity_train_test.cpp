// Training with Localized Similarities: the thesis's guarantees (the loss falls every iteration, zero
// training error on distinct points within the bound of §5.4, XOR), the exact step against brute force,
// determinism over thread counts, costs, NaN, and predictions consistent with the training loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;

TrainParams similarity_params(int n_estimators, int n_threads = 1) {
  TrainParams p;
  p.loss = LossKind::kRebel;
  p.learner = LearnerKind::kSimilarity;
  p.n_estimators = n_estimators;
  p.n_threads = n_threads;
  return p;
}

std::vector<std::int32_t> predicted(const Model& m, const Dense<double>& X, std::size_t n_learners) {
  std::vector<double> s(X.n_rows * m.n_outputs);
  decision_function(m, X.c_view(), s.data(), 1, n_learners);
  std::vector<std::int32_t> c(X.n_rows);
  scores_to_classes(m, s.data(), X.n_rows, c.data());
  return c;
}

std::size_t errors(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b) {
  std::size_t e = 0;
  for (std::size_t i = 0; i < a.size(); ++i) e += a[i] != b[i];
  return e;
}

std::vector<std::int32_t> random_labels(std::size_t n, std::size_t K, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<std::int32_t>(i < K ? i : rng() % K);  // every class present
  return y;
}

TEST(SimilarityTraining, LossFallsEveryIterationAndErrorReachesZeroWithinTheBound) {
  for (const auto& [n, K, d, seed] : std::vector<std::tuple<std::size_t, std::size_t, std::size_t, std::uint64_t>>{
           {20, 2, 2, 1}, {60, 3, 3, 2}, {100, 5, 4, 3}}) {  // N up to 200: tests/python/test_similarity.py
    const Dense<double> X = testing::random_matrix(n, d, seed);
    const auto y = random_labels(n, K, seed + 7);
    const double N = static_cast<double>(n), k = static_cast<double>(K);
    const auto bound = static_cast<int>(std::ceil(std::log(2.0 / (k * N)) / std::log(1.0 - 2.0 / (k * N * N))));
    const TrainResult r = train(X.c_view(), y.data(), nullptr, K, similarity_params(600));
    double previous = 1.0;
    for (const IterationInfo& info : r.history) {
      ASSERT_LT(info.train_loss, previous) << "iteration " << info.iteration;
      previous = info.train_loss;
    }
    std::size_t first_zero = 0;
    while (first_zero < r.model.n_learners() && errors(predicted(r.model, X, first_zero), y) > 0) ++first_zero;
    ASSERT_LT(first_zero, r.model.n_learners()) << "never reached zero training error";
    EXPECT_LE(static_cast<int>(first_zero), bound);
    std::printf("N=%zu K=%zu: zero training error after %zu learners (thesis bound %d)\n", n, K, first_zero, bound);
  }
}

TEST(SimilarityTraining, XorReachesZeroTrainingError) {
  Dense<double> X{4, 2, {0, 0, 1, 1, 0, 1, 1, 0}};
  const std::vector<std::int32_t> y = {0, 0, 1, 1};
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, similarity_params(20));
  EXPECT_EQ(errors(predicted(r.model, X, r.model.n_learners()), y), 0u);
  TrainParams trees;
  trees.loss = LossKind::kRebel;
  EXPECT_EQ(train(X.c_view(), y.data(), nullptr, 2, trees).stop_reason, "no_edge");  // what trees do
}

TEST(SimilarityTraining, SameModelBitForBitForAnyThreadCount) {
  const Dense<double> X = testing::random_matrix(3000, 50, 5);  // row blocks threaded (WORK_PER_THREAD=64)
  const auto y = random_labels(3000, 4, 6);
  std::string reference;
  for (const int threads : {1, 2, 3}) {
    TrainParams p = similarity_params(6, threads);
    p.similarity.max_candidates = 10;
    const std::string bytes = serialize(train(X.c_view(), y.data(), nullptr, 4, p).model);
    if (reference.empty()) reference = bytes;
    EXPECT_TRUE(bytes == reference) << threads << " threads";
  }
}

// The loss of the model's scores recomputed from predictions (uniform costs: every class slot costs
// exp(H_k) off the label and exp(-H_y) at the label, halved), relative to H = 0.
double loss_of_scores(const Model& m, const Dense<double>& X, const std::vector<std::int32_t>& y) {
  std::vector<double> s(X.n_rows * m.n_outputs);
  decision_function(m, X.c_view(), s.data(), 2);
  double total = 0.0;
  const std::size_t K = m.n_outputs;
  for (std::size_t r = 0; r < X.n_rows; ++r)
    for (std::size_t k = 0; k < K; ++k)
      total += std::exp(static_cast<std::size_t>(y[r]) == k ? -s[r * K + k] : s[r * K + k]);
  return total / static_cast<double>(X.n_rows * K);
}

TEST(SimilarityTraining, PredictionsReproduceTheTrainingLoss) {
  const Dense<double> X = testing::random_matrix(300, 3, 8);
  const auto y = random_labels(300, 3, 9);
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 3, similarity_params(40));
  ASSERT_EQ(r.model.n_learners(), 40u);
  EXPECT_NEAR(loss_of_scores(r.model, X, y), r.history.back().train_loss, 1e-9 * r.history.back().train_loss);
  std::size_t kinds[3] = {0, 0, 0};
  for (const Similarity& s : r.model.similarities) ++kinds[static_cast<int>(s.kind)];
  EXPECT_GT(kinds[2], 0u);  // two-point learners were chosen
}

TEST(SimilarityTraining, SignRuleIsTheClosedFormOnSignsAndMayNotLowerTheLoss) {
  const Dense<double> X = testing::random_matrix(150, 2, 10);
  const auto y = random_labels(150, 3, 11);
  TrainParams p = similarity_params(30);
  p.similarity.step_rule = StepRule::kSign;
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 3, p);
  ASSERT_EQ(r.model.n_learners(), 30u);
  EXPECT_NEAR(loss_of_scores(r.model, X, y), r.history.back().train_loss, 1e-9 * r.history.back().train_loss);
}

TEST(SimilarityTraining, CostMatrixTrainsAndLowersTheLoss) {
  const Dense<double> X = testing::random_matrix(200, 3, 12);
  const auto y = random_labels(200, 3, 13);
  TrainParams p = similarity_params(25);
  p.cost_matrix = {0, 1, 5, 1, 0, 1, 2, 1, 0};
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 3, p);
  double previous = 1.0;
  for (const IterationInfo& info : r.history) {
    EXPECT_LT(info.train_loss, previous);
    previous = info.train_loss;
  }
  EXPECT_EQ(r.model.n_learners(), 25u);
}

TEST(SimilarityTraining, RejectsNaNBinaryLossesAndBadParameters) {
  Dense<double> X = testing::random_matrix(30, 2, 14);
  const auto y = random_labels(30, 2, 15);
  X.at(7, 1) = std::nan("");
  try {
    train(X.c_view(), y.data(), nullptr, 2, similarity_params(3));
    ADD_FAILURE() << "NaN accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("NaN at row 7, feature 1"), std::string::npos) << e.what();
  }
  X.at(7, 1) = 0.5;
  TrainParams ada = similarity_params(3);
  ada.loss = LossKind::kAdaBoost;
  EXPECT_THROW(train(X.c_view(), y.data(), nullptr, 2, ada), InvalidArgument);
  TrainParams bad = similarity_params(3);
  bad.similarity.tau_ratio = 1.0;
  EXPECT_THROW(train(X.c_view(), y.data(), nullptr, 2, bad), InvalidArgument);
  bad = similarity_params(3);
  bad.similarity.max_candidates = -1;
  EXPECT_THROW(train(X.c_view(), y.data(), nullptr, 2, bad), InvalidArgument);
  for (const double cache : {-1.0, std::numeric_limits<double>::quiet_NaN()}) {
    bad = similarity_params(3);
    bad.similarity.distance_cache_mb = cache;
    try {
      train(X.c_view(), y.data(), nullptr, 2, bad);
      ADD_FAILURE() << "distance_cache_mb " << cache << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("distance_cache_mb must be a number in [0, "), std::string::npos) << e.what();
    }
  }
}

TEST(SimilarityTraining, CoincidentPointsAndConstantFeatures) {
  // Copies of points (same label) and a constant column: anchors are stored once per location, the
  // constant feature gets scale 1, and the loss still falls.
  Dense<double> X = testing::random_matrix(60, 3, 16);
  auto y = random_labels(60, 3, 17);
  for (std::size_t r = 0; r < 60; ++r) X.at(r, 2) = 4.0;
  for (std::size_t r = 40; r < 60; ++r) {
    for (std::size_t c = 0; c < 3; ++c) X.at(r, c) = X.at(r - 40, c);
    y[r] = y[r - 40];
  }
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 3, similarity_params(400));
  EXPECT_EQ(r.model.feature_scale[2], 1.0);
  EXPECT_EQ(r.model.feature_mean[2], 4.0);
  for (const std::uint64_t row : r.model.anchor_rows) EXPECT_LT(row, 40u);  // a copy's first occurrence
  EXPECT_EQ(errors(predicted(r.model, X, r.model.n_learners()), y), 0u);
}

}  // namespace
}  // namespace rebelboost
