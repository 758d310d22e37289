// The regressor end to end in C++: train_regressor's model predicts, through every path of the Predictor
// (batch kernels of each instruction set, one row, the model's own node walk), the scores its training
// accumulated; it survives the file; classification entry points refuse it; bad targets are errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"

namespace rebelboost {
namespace {

struct Data {
  std::vector<double> X, y;
  std::size_t n, d;
};

Data data(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Data v{std::vector<double>(n * d), std::vector<double>(n), n, d};
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j) v.X[i * d + j] = (rng() % 17 == 0) ? std::nan("") : normal(rng);
    const double x0 = std::isnan(v.X[i * d]) ? 0.5 : v.X[i * d];
    v.y[i] = 3.0 * std::sin(x0) + (std::isnan(v.X[i * d + 1]) ? 2.0 : v.X[i * d + 1]) + 0.1 * normal(rng);
  }
  return v;
}

TrainParams regression_params(int depth) {
  TrainParams p;
  p.loss = LossKind::kSquaredError;
  p.n_estimators = 40;
  p.max_depth = depth;
  p.learning_rate = 0.2;
  p.min_samples_leaf = 3;
  return p;
}

TEST(Regressor, EveryPredictionPathGivesTheTrainingScores) {
  for (const int depth : {1, 3, 7}) {  // 7: deeper than the kernels' mask trees
    const Data v = data(3000, 5, 10 + static_cast<std::uint64_t>(depth));
    const MatrixView<double> X{v.X.data(), v.n, v.d, static_cast<std::ptrdiff_t>(v.d), 1};
    std::vector<double> watched;
    TrainOptions<double> options;
    options.eval_sets.push_back({X, nullptr, nullptr});
    options.eval_sets.back().target = v.y.data();
    options.callback = [&](const IterationInfo& info) {
      watched.assign(info.eval_scores[0], info.eval_scores[0] + v.n);
      return true;
    };
    const TrainResult r = train_regressor(X, v.y.data(), nullptr, regression_params(depth), options);
    ASSERT_TRUE(r.model.is_regression());
    ASSERT_EQ(r.model.trees.size(), 40u);
    EXPECT_LT(r.history.back().train_loss, 0.2 * r.history.front().train_loss);
    const Predictor predictor(r.model);
    std::vector<double> batch(v.n), row(1);
    predictor.decision_function(X, batch.data(), kAllLearners, 2);
    for (std::size_t i = 0; i < v.n; ++i) {
      ASSERT_EQ(batch[i], watched[i]) << "depth " << depth << " row " << i;  // bit for bit
      predictor.decision_row(v.X.data() + i * v.d, 1, row.data());
      ASSERT_EQ(row[0], batch[i]);
    }
    std::vector<double> few(5);  // a few rows: the model's own nodes, not the compiled forest
    decision_function(r.model, MatrixView<double>{v.X.data(), 5, v.d, static_cast<std::ptrdiff_t>(v.d), 1}, few.data(), 1);
    for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(few[i], batch[i]);
    const Model reread = deserialize(serialize(r.model).data(), serialize(r.model).size());
    std::vector<double> again(v.n);
    Predictor(reread).decision_function(X, again.data());
    EXPECT_EQ(again, batch);
    std::vector<std::int32_t> classes(v.n);
    EXPECT_THROW(predictor.predict(X, classes.data()), InvalidArgument);
  }
}

TEST(Regressor, RefusesBadTargetsAndClassifierOptions) {
  Data v = data(200, 3, 1);
  const MatrixView<double> X{v.X.data(), v.n, v.d, static_cast<std::ptrdiff_t>(v.d), 1};
  v.y[5] = std::nan("");
  EXPECT_THROW(train_regressor(X, v.y.data(), nullptr, regression_params(2), {}), InvalidArgument);
  v.y[5] = 1e151;
  EXPECT_THROW(train_regressor(X, v.y.data(), nullptr, regression_params(2), {}), InvalidArgument);
  v.y[5] = 0.0;
  TrainParams p = regression_params(2);
  p.criterion = 1;
  EXPECT_THROW(train_regressor(X, v.y.data(), nullptr, p, {}), InvalidArgument);
  p = regression_params(2);
  p.min_samples_leaf = 0;
  EXPECT_THROW(train_regressor(X, v.y.data(), nullptr, p, {}), InvalidArgument);
  std::vector<std::int32_t> labels(v.n, 0);
  EXPECT_THROW(train(X, labels.data(), nullptr, 2, regression_params(2)), InvalidArgument);  // needs train_regressor
}

// A regression model's file: leaf values are validated (finite, 0 at splits, bounded scores).
TEST(Regressor, InvalidLeafValuesAreRefused) {
  const Data v = data(500, 3, 2);
  const MatrixView<double> X{v.X.data(), v.n, v.d, static_cast<std::ptrdiff_t>(v.d), 1};
  const Model good = train_regressor(X, v.y.data(), nullptr, regression_params(2), {}).model;
  Model bad = good;
  bad.trees[0].leaf_value.back() = std::nan("");
  EXPECT_THROW(bad.validate(), ModelFileError);
  bad = good;
  bad.trees[0].leaf_value[0] = 1.0;  // the root splits
  EXPECT_THROW(bad.validate(), ModelFileError);
  bad = good;
  bad.trees[0].leaf_value.back() = 1e308;
  bad.trees[0].step[0] = 10.0;
  EXPECT_THROW(bad.validate(), ModelFileError);
  bad = good;
  bad.trees[1].leaf_value.clear();
  EXPECT_THROW(bad.validate(), ModelFileError);
}

}  // namespace
}  // namespace rebelboost
