// Tests of training with the REBEL and VEB-Boost losses: determinism, REBEL(K=2) == AdaBoost, costs.
#include "rebelboost/train.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/predict.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;

TrainParams params(LossKind loss, int n_estimators, int max_depth, int n_threads = 1) {
  TrainParams p;
  p.loss = loss;
  p.n_estimators = n_estimators;
  p.max_depth = max_depth;
  p.n_threads = n_threads;
  return p;
}

// Labels in [0, K) from the sign pattern of the first features, with noise.
std::vector<std::int32_t> multiclass_labels(const Dense<double>& X, std::size_t K, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> y(X.n_rows);
  for (std::size_t r = 0; r < X.n_rows; ++r) {
    const double a = std::isnan(X.at(r, 0)) ? 0.0 : X.at(r, 0);
    const double b = std::isnan(X.at(r, 1)) ? 0.0 : X.at(r, 1);
    std::size_t k = static_cast<std::size_t>((a > 0 ? 1 : 0) + (b > 0.3 ? 2 : 0)) % K;
    if (rng() % 10 == 0) k = rng() % K;
    y[r] = static_cast<std::int32_t>(k);
  }
  return y;
}

std::vector<std::int32_t> classes(const Model& m, const Dense<double>& X) {
  std::vector<double> s(X.n_rows * m.n_outputs);
  decision_function(m, X.c_view(), s.data(), 1);
  std::vector<std::int32_t> c(X.n_rows);
  scores_to_classes(m, s.data(), X.n_rows, c.data());
  return c;
}

TEST(Losses, SameModelBitForBitForAnyThreadCount) {
  const auto X = testing::random_matrix(1800, 10, 1, 0.1);
  const auto y2 = testing::noisy_labels(X, 2, 0.15);
  const auto y4 = multiclass_labels(X, 4, 3);
  for (const LossKind loss : {LossKind::kVebBoost, LossKind::kRebel}) {
    for (const int depth : {1, 3}) {
      std::string reference;
      for (const int threads : {1, 2, 3}) {
        const bool rebel = loss == LossKind::kRebel;
        const TrainResult r = train(X.c_view(), rebel ? y4.data() : y2.data(), nullptr, rebel ? 4 : 2,
                                    params(loss, 15, depth, threads));
        ASSERT_FALSE(r.model.trees.empty());
        const std::string bytes = serialize(r.model);
        if (threads == 1) {
          reference = bytes;
        } else {
          EXPECT_TRUE(bytes == reference) << loss_name(loss) << " depth " << depth << ": 1 vs " << threads << " threads";
        }
      }
    }
  }
}

// Thesis App. 7.3 (docs/methods/rebel.md): with K = 2 and uniform costs REBEL gives AdaBoost's predictions.
TEST(Losses, RebelWithTwoClassesPredictsLikeAdaBoost) {
  for (const int depth : {1, 2, 3}) {
    const auto X = testing::random_matrix(1200, 6, 10 + depth, 0.1);
    const auto y = testing::noisy_labels(X, 20 + depth, 0.15);
    const Model ada = train(X.c_view(), y.data(), nullptr, 2, params(LossKind::kAdaBoost, 25, depth, 2)).model;
    const Model rebel = train(X.c_view(), y.data(), nullptr, 2, params(LossKind::kRebel, 25, depth, 2)).model;
    ASSERT_EQ(rebel.n_outputs, 2u);
    ASSERT_EQ(ada.trees.size(), rebel.trees.size()) << "depth " << depth;
    const auto probe = testing::random_matrix(2000, 6, 30 + depth, 0.1);
    EXPECT_EQ(classes(ada, probe), classes(rebel, probe)) << "depth " << depth;
    EXPECT_EQ(classes(ada, X), classes(rebel, X)) << "depth " << depth;
  }
}

TEST(Losses, TrainingLossNeverIncreases) {
  const auto X = testing::random_matrix(1500, 8, 40, 0.1);
  const auto y2 = testing::noisy_labels(X, 41, 0.2);
  const auto y3 = multiclass_labels(X, 3, 42);
  for (const LossKind loss : {LossKind::kRebel, LossKind::kVebBoost}) {
    for (const int depth : {1, 3}) {
      const bool rebel = loss == LossKind::kRebel;
      const TrainResult r =
          train(X.c_view(), rebel ? y3.data() : y2.data(), nullptr, rebel ? 3 : 2, params(loss, 40, depth, 2));
      ASSERT_FALSE(r.history.empty());
      for (std::size_t t = 0; t < r.history.size(); ++t) {
        EXPECT_TRUE(std::isfinite(r.history[t].train_loss));
        EXPECT_LE(r.model.trees[t].depth(), depth);
        if (t > 0) {
          EXPECT_LE(r.history[t].train_loss, r.history[t - 1].train_loss)
              << loss_name(loss) << " depth " << depth << " iteration " << t;
        }
      }
    }
  }
}

TEST(Losses, RebelLearnsAMulticlassProblem) {
  const auto X = testing::random_matrix(2000, 5, 50, 0.05);
  const auto y = multiclass_labels(X, 4, 51);
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 4, params(LossKind::kRebel, 60, 2, 2));
  ASSERT_EQ(r.model.n_outputs, 4u);
  EXPECT_NO_THROW(r.model.validate());
  const auto c = classes(r.model, X);
  std::size_t errors = 0;
  for (std::size_t i = 0; i < y.size(); ++i) errors += c[i] != y[i];
  EXPECT_LT(errors, y.size() * 15 / 100);  // about 7.5% of the labels are noise
  // The file round trip keeps a multi-output model exactly.
  const std::string bytes = serialize(r.model);
  EXPECT_TRUE(serialize(deserialize(bytes.data(), bytes.size())) == bytes);
}

TEST(Losses, CostsSteerPredictions) {
  // Making it expensive to mistake class 0 for anything else moves predictions towards class 0.
  const auto X = testing::random_matrix(1500, 4, 60, 0.0);
  const auto y = multiclass_labels(X, 3, 61);
  TrainParams p = params(LossKind::kRebel, 40, 2, 2);
  const auto uniform = classes(train(X.c_view(), y.data(), nullptr, 3, p).model, X);
  p.cost_matrix = {0, 20, 20, 1, 0, 1, 1, 1, 0};
  const auto costly = classes(train(X.c_view(), y.data(), nullptr, 3, p).model, X);
  std::size_t zeros_uniform = 0, zeros_costly = 0, missed_uniform = 0, missed_costly = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    zeros_uniform += uniform[i] == 0;
    zeros_costly += costly[i] == 0;
    missed_uniform += y[i] == 0 && uniform[i] != 0;
    missed_costly += y[i] == 0 && costly[i] != 0;
  }
  EXPECT_GT(zeros_costly, zeros_uniform);
  EXPECT_LT(missed_costly, missed_uniform);
}

TEST(Losses, InvalidArgumentsThrow) {
  const auto X = testing::random_matrix(60, 3, 70);
  const auto y3 = multiclass_labels(X, 3, 71);
  const auto y2 = testing::noisy_labels(X, 72, 0.2);
  const double inf = std::numeric_limits<double>::infinity();
  TrainParams p = params(LossKind::kRebel, 3, 1);
  for (const std::vector<double>& bad : {std::vector<double>{0, 1, 1, 0},                       // wrong size
                                         std::vector<double>{0, 1, 1, 1, 0, 1, 1, 1, 1},        // diagonal
                                         std::vector<double>{0, -1, 1, 1, 0, 1, 1, 1, 0},       // negative
                                         std::vector<double>{0, inf, 1, 1, 0, 1, 1, 1, 0},      // infinite
                                         std::vector<double>{0, 0, 0, 1, 0, 1, 1, 1, 0}}) {     // zero row
    p.cost_matrix = bad;
    EXPECT_THROW(train(X.c_view(), y3.data(), nullptr, 3, p), InvalidArgument);
  }
  EXPECT_THROW(train(X.c_view(), y3.data(), nullptr, 1, params(LossKind::kRebel, 3, 1)), InvalidArgument);
  EXPECT_THROW(train(X.c_view(), y3.data(), nullptr, 3, params(LossKind::kVebBoost, 3, 1)), InvalidArgument);
  for (const double lam : {-0.1, 1.1, std::numeric_limits<double>::quiet_NaN()}) {
    TrainParams v = params(LossKind::kVebBoost, 3, 1);
    v.veb_lambda = lam;
    EXPECT_THROW(train(X.c_view(), y2.data(), nullptr, 2, v), InvalidArgument) << "veb_lambda " << lam;
  }
}

}  // namespace
}  // namespace rebelboost

namespace rebelboost {
namespace {

// REBEL's logistic and squared surrogates (docs/guide/rebel.md "The loss family"): the model records its g; the loss
// falls every iteration; the model is the same for every thread count and quick mode, and for a warm start;
// a warm start with another g, and a g with a binary loss or similarities, are clear errors.
TEST(RebelSurrogates, TrainRecordsGAndKeepsThePromises) {
  const auto X = testing::random_matrix(1500, 8, 60, 0.1);
  const auto y = multiclass_labels(X, 4, 61);
  for (const RebelG g : {RebelG::kLogistic, RebelG::kSquared}) {
    TrainParams p = params(LossKind::kRebel, 12, 3, 1);
    p.rebel_g = g;
    const TrainResult base = train(X.c_view(), y.data(), nullptr, 4, p);
    EXPECT_EQ(base.model.g, g);
    ASSERT_EQ(base.history.size(), 12u);
    for (std::size_t t = 1; t < base.history.size(); ++t)
      EXPECT_LT(base.history[t].train_loss, base.history[t - 1].train_loss) << rebel_g_name(g) << " iteration " << t;
    const std::string reference = serialize(base.model);
    const Predictor loaded(deserialize(reference.data(), reference.size()));  // the file keeps g; predictions
    EXPECT_EQ(loaded.model().g, g);                                           // are argmax H, as for any g
    std::vector<std::int32_t> from_file(X.n_rows), trained(X.n_rows);
    loaded.predict(X.c_view(), from_file.data());
    Predictor(base.model).predict(X.c_view(), trained.data());
    EXPECT_EQ(from_file, trained);
    for (const int threads : {2, 3})
      for (const int quick : {0, 1, 2}) {
        TrainParams q = p;
        q.n_threads = threads;
        q.quick = quick;
        EXPECT_TRUE(serialize(train(X.c_view(), y.data(), nullptr, 4, q).model) == reference)
            << rebel_g_name(g) << " threads " << threads << " quick " << quick;
      }
    TrainParams half = p;
    half.n_estimators = 5;
    const Model first = train(X.c_view(), y.data(), nullptr, 4, half).model;
    TrainOptions<double> warm;
    warm.init_model = &first;
    EXPECT_TRUE(serialize(train(X.c_view(), y.data(), nullptr, 4, p, warm).model) == reference) << rebel_g_name(g);
    TrainParams other = p;
    other.rebel_g = g == RebelG::kLogistic ? RebelG::kSquared : RebelG::kLogistic;
    EXPECT_THROW(train(X.c_view(), y.data(), nullptr, 4, other, warm), InvalidArgument);
  }
  TrainParams binary = params(LossKind::kAdaBoost, 3, 1, 1);
  binary.rebel_g = RebelG::kLogistic;
  const auto y2 = testing::noisy_labels(X, 62, 0.1);
  EXPECT_THROW(train(X.c_view(), y2.data(), nullptr, 2, binary), InvalidArgument);
  TrainParams unknown = params(LossKind::kRebel, 3, 1, 1);
  unknown.rebel_g = static_cast<RebelG>(9);
  EXPECT_THROW(train(X.c_view(), y.data(), nullptr, 4, unknown), InvalidArgument);
}

}  // namespace
}  // namespace rebelboost
