// The hybrid family (trees and similarities in one model): both kinds are kept, training reports the kind
// it kept, the model file round-trips and rejects an inconsistent order, predictions sum the learners in
// order on every path, and the model never depends on the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

// A ring (similarities' shape) and a threshold on another feature (trees' shape).
struct Problem {
  Dense<double> X = testing::random_matrix(240, 3, 7);
  std::vector<std::int32_t> y;
  Problem() {
    for (std::size_t r = 0; r < X.n_rows; ++r) {
      const double radius = X.at(r, 0) * X.at(r, 0) + X.at(r, 1) * X.at(r, 1);
      y.push_back(static_cast<std::int32_t>((radius < 1.0) + (X.at(r, 2) > 0.3)));
    }
  }
};

TrainResult train_hybrid(const Problem& p, int n_threads, int n_estimators = 120) {
  TrainParams params;
  params.loss = LossKind::kRebel;
  params.learner = LearnerKind::kHybrid;
  params.max_depth = 1;
  params.n_estimators = n_estimators;
  params.n_threads = n_threads;
  return train(p.X.c_view(), p.y.data(), nullptr, 3, params);
}

TEST(HybridTrain, KeepsBothKindsAndReportsEachIterationsKind) {
  const Problem p;
  const TrainResult r = train_hybrid(p, 1);
  const Model& m = r.model;
  ASSERT_EQ(m.learner, LearnerKind::kHybrid);
  ASSERT_EQ(m.n_learners(), r.history.size());
  EXPECT_GT(m.trees.size(), 0u);
  EXPECT_GT(m.similarities.size(), 0u);
  EXPECT_EQ(m.trees.size() + m.similarities.size(), m.n_learners());
  for (std::size_t t = 0; t < m.n_learners(); ++t) EXPECT_EQ(r.history[t].learner, m.order[t].kind) << t;
  for (std::size_t t = 1; t < r.history.size(); ++t)  // each kept learner minimises the loss along itself
    EXPECT_LE(r.history[t].train_loss, r.history[t - 1].train_loss * (1 + 1e-12)) << t;
}

// Two threads fit the two candidates at the same time (one family per thread), other counts in turn.
TEST(HybridTrain, SameModelForEveryThreadCount) {
  const Problem p;
  const std::string once = serialize(train_hybrid(p, 1).model);
  for (const int threads : {2, 3, 4}) EXPECT_EQ(serialize(train_hybrid(p, threads).model), once) << threads;
}

// The scores of the first n learners, summed here from each learner's own definition in learner order.
std::vector<double> reference_scores(const Model& m, const Dense<double>& X, std::size_t n) {
  const std::size_t K = m.n_outputs, d = m.n_features;
  std::vector<double> out(X.n_rows * K);
  Model similarities_only = m;  // one similarity at a time through the similarity engine's own model
  similarities_only.learner = LearnerKind::kSimilarity;
  similarities_only.trees.clear();
  similarities_only.order.clear();
  std::vector<double> f(X.n_rows * m.similarities.size());
  if (!m.similarities.empty())
    learner_outputs(similarities_only, X.c_view(), f.data(), 1, 0, m.similarities.size());
  for (std::size_t r = 0; r < X.n_rows; ++r)
    for (std::size_t k = 0; k < K; ++k) {
      double s = m.bias[k];
      for (std::size_t t = 0; t < n; ++t) {
        const LearnerRef ref = m.order[t];
        const double v = ref.kind == LearnerKind::kTree ? m.trees[ref.index].output(&X.c_order[r * d], 1)
                                                        : f[r * m.similarities.size() + ref.index];
        s += v * m.step(t)[k];
      }
      out[r * K + k] = s;
    }
  return out;
}

TEST(HybridPredict, EveryPathSumsTheLearnersInOrder) {
  const Problem p;
  const Model m = train_hybrid(p, 1).model;
  const Predictor predictor(m);
  const std::size_t K = m.n_outputs, N = p.X.n_rows;
  for (const std::size_t n : {std::size_t{0}, std::size_t{17}, m.n_learners()}) {
    const std::vector<double> expected = reference_scores(m, p.X, n);
    std::vector<double> got(N * K);
    predictor.decision_function(p.X.c_view(), got.data(), n, 2);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "n " << n << " at " << i;
    Model truncated = m;
    truncated.truncate(n);
    truncated.validate();
    decision_function(truncated, p.X.c_view(), got.data(), 1);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << "truncated to " << n;
  }
  std::vector<std::int32_t> full(N), exit(N);
  PredictOptions options;
  predictor.predict(p.X.c_view(), full.data(), options);
  options.early_exit = true;
  std::vector<std::uint32_t> used(N);
  predictor.predict(p.X.c_view(), exit.data(), options, used.data());
  EXPECT_EQ(full, exit);
  std::vector<double> row(K);
  for (std::size_t r = 0; r < N; r += 37) EXPECT_EQ(predictor.predict_row(&p.X.c_order[r * 3], 1, row.data(), options), full[r]);
}

TEST(HybridFile, RoundTripsAndRejectsAnInconsistentOrder) {
  const Problem p;
  Model m = train_hybrid(p, 1, 40).model;
  const std::string bytes = serialize(m);
  const Model back = deserialize(bytes.data(), bytes.size());
  EXPECT_EQ(serialize(back), bytes);
  ASSERT_EQ(back.order.size(), m.order.size());
  for (std::size_t t = 0; t < m.order.size(); ++t) {
    EXPECT_EQ(back.order[t].kind, m.order[t].kind);
    EXPECT_EQ(back.order[t].index, m.order[t].index);
  }
  const auto rejected = [](Model bad, const std::string& what) {
    try {
      bad.validate();
      ADD_FAILURE() << "accepted: " << what;
    } catch (const ModelFileError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  Model bad = m;
  bad.order.pop_back();
  rejected(bad, "the hybrid order names");
  bad = m;
  std::swap(bad.order[0], bad.order[1]);
  if (bad.order[0].kind != bad.order[1].kind) rejected(bad, "out of order");
  bad = m;
  bad.order[0].kind = static_cast<LearnerKind>(2);
  rejected(bad, "unknown kind 2");
  bad = m;
  bad.learner = LearnerKind::kTree;
  rejected(bad, "holds similarity members");
  // The hybrid family is unknown to version 5 files: their header's learner field 2 is corrupt.
  std::string old = bytes;
  const std::uint32_t five = 5;
  std::memcpy(&old[8], &five, 4);
  EXPECT_THROW(deserialize(old.data(), old.size()), ModelFileError);
}

TEST(HybridTrain, WarmStartEqualsTrainingAtOnce) {
  const Problem p;
  const Model half = train_hybrid(p, 1, 60).model;
  TrainParams params;
  params.loss = LossKind::kRebel;
  params.learner = LearnerKind::kHybrid;
  params.max_depth = 1;
  params.n_estimators = 120;
  params.n_threads = 1;
  TrainOptions<double> options;
  options.init_model = &half;
  const Model continued = train(p.X.c_view(), p.y.data(), nullptr, 3, params, options).model;
  EXPECT_EQ(serialize(continued), serialize(train_hybrid(p, 1, 120).model));
}

TEST(HybridTrain, RefusesMissingValuesAndBinaryLosses) {
  Problem p;
  p.X.at(5, 1) = std::nan("");
  EXPECT_THROW(train_hybrid(p, 1), InvalidArgument);
  Problem q;
  TrainParams params;
  params.learner = LearnerKind::kHybrid;
  params.loss = LossKind::kAdaBoost;
  std::vector<std::int32_t> binary(q.y.size());
  for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = q.y[i] > 0;
  EXPECT_THROW(train(q.X.c_view(), binary.data(), nullptr, 2, params), InvalidArgument);
}

}  // namespace
}  // namespace rebelboost
