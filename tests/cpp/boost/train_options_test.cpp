// Tests of TrainOptions: warm start (replayed trees), eval sets watched per tree, the stop flag.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <vector>

#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

TrainParams params(LossKind loss, int n_estimators) {
  TrainParams p;
  p.loss = loss;
  p.n_estimators = n_estimators;
  p.max_depth = 2;
  p.n_threads = 2;
  p.subsample = 0.8;  // random streams per iteration: a warm start must draw the same ones
  return p;
}

TEST(TrainOptions, WarmStartEqualsTrainingAtOnceForEveryLoss) {
  const auto X = testing::random_matrix(1500, 8, 3, 0.05);
  for (LossKind loss : {LossKind::kAdaBoost, LossKind::kVebBoost, LossKind::kRebel}) {
    const std::size_t K = loss == LossKind::kRebel ? 3 : 2;
    auto y = testing::noisy_labels(X, 1, 0.2);
    if (K == 3)  // a third class where feature 2 is large
      for (std::size_t i = 0; i < X.n_rows; ++i) y[i] = X.at(i, 2) > 0.8 ? 2 : y[i];
    const Model at_once = train(X.c_view(), y.data(), nullptr, K, params(loss, 30)).model;
    const Model first = train(X.c_view(), y.data(), nullptr, K, params(loss, 11)).model;
    TrainOptions<double> options;
    options.init_model = &first;
    const TrainResult resumed = train(X.c_view(), y.data(), nullptr, K, params(loss, 30), options);
    ASSERT_EQ(at_once.trees.size(), 30u);
    EXPECT_EQ(serialize(resumed.model), serialize(at_once)) << loss_name(loss);
    ASSERT_EQ(resumed.history.size(), 30u);
    EXPECT_TRUE(resumed.history[10].replayed);
    EXPECT_FALSE(resumed.history[11].replayed);
    // A model trained on other weights cannot be continued on these.
    std::vector<double> w(X.n_rows, 1.0);
    w[0] = 50.0;
    EXPECT_THROW(train(X.c_view(), y.data(), w.data(), K, params(loss, 30), options), InvalidArgument);
  }
}

TEST(TrainOptions, EvalSetScoresAndLossFollowEveryTree) {
  const auto X = testing::random_matrix(800, 6, 5, 0.05);
  const auto y = testing::noisy_labels(X, 2, 0.2);
  const auto V = testing::random_matrix(300, 6, 6, 0.05);
  const auto yv = testing::noisy_labels(V, 3, 0.2);
  TrainOptions<double> options;
  options.eval_sets.push_back({V.c_view(), yv.data(), nullptr});
  std::vector<std::vector<double>> seen;
  std::vector<double> losses;
  options.callback = [&](const IterationInfo& info) {
    seen.emplace_back(info.eval_scores[0], info.eval_scores[0] + V.n_rows);
    losses.push_back(info.eval_loss[0]);
    return true;
  };
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, params(LossKind::kAdaBoost, 12), options);
  ASSERT_EQ(seen.size(), 12u);
  for (std::size_t t = 0; t < seen.size(); ++t) {
    std::vector<double> expected(V.n_rows);
    decision_function(r.model, V.c_view(), expected.data(), 1, t + 1);
    EXPECT_EQ(seen[t], expected) << "tree " << t;
    double loss = 0.0;  // AdaBoost's loss on the eval set: mean exp(-y H), 1 at H = 0
    for (std::size_t i = 0; i < V.n_rows; ++i) loss += std::exp(-(yv[i] == 1 ? 1.0 : -1.0) * expected[i]);
    EXPECT_NEAR(losses[t], loss / static_cast<double>(V.n_rows), 1e-12);
    EXPECT_TRUE(r.history[t].eval_scores.empty());  // pointers are not kept past the callback
  }
}

TEST(TrainOptions, StopFlagEndsTrainingKeepingFinishedTrees) {
  const auto X = testing::random_matrix(500, 5, 7, 0.0);
  const auto y = testing::noisy_labels(X, 2, 0.2);
  std::atomic<bool> stop{false};
  TrainOptions<double> options;
  options.stop = &stop;
  options.callback = [&](const IterationInfo& info) {
    if (info.iteration == 4) stop = true;
    return true;
  };
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, params(LossKind::kAdaBoost, 100), options);
  EXPECT_EQ(r.stop_reason, "interrupted");
  EXPECT_EQ(r.model.trees.size(), 5u);
}

}  // namespace
}  // namespace rebelboost
