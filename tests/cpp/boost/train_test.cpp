// Tests of rebelboost::train with the AdaBoost loss: determinism, monotone loss, depth, weights, errors.
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

TrainParams ada(int n_estimators, int max_depth, int n_threads = 1) {
  TrainParams p;
  p.loss = LossKind::kAdaBoost;
  p.n_estimators = n_estimators;
  p.max_depth = max_depth;
  p.n_threads = n_threads;
  return p;
}

std::vector<double> scores(const Model& m, const Dense<double>& X) {
  std::vector<double> out(X.n_rows * m.n_outputs);
  decision_function(m, X.c_view(), out.data(), 1);
  return out;
}

// Same trees (features, thresholds, NaN sides, leaf values), and steps and bias equal up to `tol` relative
// (floating-point sums of the steps may pair rows differently).
void expect_equivalent(const Model& a, const Model& b, double tol) {
  ASSERT_EQ(a.trees.size(), b.trees.size());
  ASSERT_EQ(a.bias.size(), b.bias.size());
  for (std::size_t k = 0; k < a.bias.size(); ++k) EXPECT_NEAR(a.bias[k], b.bias[k], tol * (1 + std::fabs(a.bias[k])));
  for (std::size_t t = 0; t < a.trees.size(); ++t) {
    const Tree &ta = a.trees[t], &tb = b.trees[t];
    ASSERT_EQ(ta.nodes.size(), tb.nodes.size()) << "tree " << t;
    for (std::size_t i = 0; i < ta.nodes.size(); ++i) {
      EXPECT_EQ(ta.nodes[i].feature, tb.nodes[i].feature) << "tree " << t << " node " << i;
      EXPECT_EQ(ta.nodes[i].threshold, tb.nodes[i].threshold) << "tree " << t << " node " << i;
      EXPECT_EQ(ta.nodes[i].nan_left, tb.nodes[i].nan_left) << "tree " << t << " node " << i;
      EXPECT_EQ(ta.nodes[i].value, tb.nodes[i].value) << "tree " << t << " node " << i;
    }
    for (std::size_t k = 0; k < ta.step.size(); ++k)
      EXPECT_NEAR(ta.step[k], tb.step[k], tol * std::fabs(ta.step[k])) << "tree " << t;
  }
}

TEST(Train, SameModelBitForBitForAnyThreadCount) {
  const auto X = testing::random_matrix(2500, 12, 1, 0.1);
  const auto y = testing::noisy_labels(X, 2, 0.15);
  for (int depth : {1, 3}) {
    std::string reference;
    for (int threads : {1, 2, 3}) {
      const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, ada(25, depth, threads));
      ASSERT_EQ(r.model.trees.size(), 25u);
      const std::string bytes = serialize(r.model);
      if (threads == 1) {
        reference = bytes;
      } else {
        EXPECT_TRUE(bytes == reference) << "depth " << depth << ": model differs between 1 and " << threads << " threads";
      }
    }
  }
}

TEST(Train, LayoutAndPrecisionDoNotChangeTheModel) {
  // float32 data viewed as float32 or widened to float64, C or F order: same values, same model.
  const Dense<float> Xf = testing::random_matrix(1200, 7, 3, 0.05).cast<float>();
  const Dense<double> Xd = Xf.cast<double>();
  const auto y = testing::noisy_labels(Xd, 4, 0.1);
  const TrainParams p = ada(15, 2, 2);
  const std::string ref = serialize(train(Xd.c_view(), y.data(), nullptr, 2, p).model);
  const std::vector<float> ff = Xf.f_order();
  const std::vector<double> fd = Xd.f_order();
  EXPECT_TRUE(serialize(train(Xf.c_view(), y.data(), nullptr, 2, p).model) == ref) << "float32 C order";
  EXPECT_TRUE(serialize(train(MatrixView<float>::col_major(ff.data(), Xf.n_rows, Xf.n_cols), y.data(), nullptr, 2, p)
                            .model) == ref)
      << "float32 F order";
  EXPECT_TRUE(serialize(train(MatrixView<double>::col_major(fd.data(), Xd.n_rows, Xd.n_cols), y.data(), nullptr, 2, p)
                            .model) == ref)
      << "float64 F order";
}

TEST(Train, TrainingLossNeverIncreases) {
  for (int depth : {1, 2, 4}) {
    const auto X = testing::random_matrix(1500, 8, 10 + depth, 0.1);
    const auto y = testing::noisy_labels(X, 20 + depth, 0.2);
    const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, ada(60, depth, 2));
    ASSERT_FALSE(r.history.empty());
    // The history starts after the bias, whose loss is below the all-zero-scores loss of 1.
    EXPECT_LE(r.history[0].train_loss, 1.0);
    for (std::size_t t = 0; t < r.history.size(); ++t) {
      EXPECT_EQ(r.history[t].iteration, static_cast<int>(t));
      EXPECT_GT(r.history[t].train_loss, 0.0);
      EXPECT_GT(r.history[t].bin_accumulations, 0);
      EXPECT_LT(r.history[t].weighted_error, 0.5) << "a tree without an edge was kept";
      if (t > 0) {
        EXPECT_LE(r.history[t].train_loss, r.history[t - 1].train_loss) << "depth " << depth << " iteration " << t;
      }
    }
  }
}

TEST(Train, HistoryLossEqualsTheExponentialLossOfThePredictions) {
  // train_loss after iteration t is sum_n s_n exp(-y_n H_t(x_n)) (s = normalised sample weights), with
  // H_t the model truncated to t + 1 trees: an independent check of steps, weights and bias.
  const auto X = testing::random_matrix(1000, 6, 40, 0.1);
  const auto y = testing::noisy_labels(X, 41, 0.15);
  std::vector<double> w(X.n_rows);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.5 + static_cast<double>((i * 7919) % 13);
  for (const bool weighted : {false, true}) {
    for (const double lr : {1.0, 0.3}) {
      for (const int depth : {1, 3}) {
        SCOPED_TRACE(::testing::Message() << "weighted " << weighted << " lr " << lr << " depth " << depth);
        TrainParams p = ada(30, depth, 2);
        p.learning_rate = lr;
        const TrainResult r = train(X.c_view(), y.data(), weighted ? w.data() : nullptr, 2, p);
        ASSERT_FALSE(r.history.empty());
        double total_weight = 0.0;
        for (std::size_t i = 0; i < X.n_rows; ++i) total_weight += weighted ? w[i] : 1.0;
        for (std::size_t t = 0; t < r.history.size(); ++t) {
          std::vector<double> H(X.n_rows);
          decision_function(r.model, X.c_view(), H.data(), 1, t + 1);
          double loss = 0.0;
          for (std::size_t i = 0; i < X.n_rows; ++i)
            loss += (weighted ? w[i] : 1.0) / total_weight * std::exp(-(y[i] == 1 ? 1.0 : -1.0) * H[i]);
          ASSERT_NEAR(r.history[t].train_loss, loss, 1e-12 * loss) << "iteration " << t;
        }
      }
    }
  }
}

TEST(Train, EveryStepIsTheSmoothedClosedForm) {
  // a_t = lr * 1/2 ln((R + eps) / (W + eps)) with R, W the weight tree t gets right / wrong under the
  // weights w_n ~ s_n exp(-y_n H_{t-1}(x_n)) normalised to 1, and eps the smoothing (default 1 / n).
  const auto X = testing::random_matrix(700, 5, 50, 0.1);
  const auto y = testing::noisy_labels(X, 51, 0.2);
  for (const double smoothing : {-1.0, 0.0, 0.01}) {
    for (const double lr : {1.0, 0.5}) {
      SCOPED_TRACE(::testing::Message() << "smoothing " << smoothing << " lr " << lr);
      TrainParams p = ada(20, 2, 2);
      p.smoothing = smoothing;
      p.learning_rate = lr;
      const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, p);
      const double eps = smoothing < 0 ? 1.0 / static_cast<double>(X.n_rows) : smoothing;
      std::size_t n_pos = 0;
      for (auto v : y) n_pos += v == 1;
      const double n = static_cast<double>(X.n_rows);
      EXPECT_NEAR(r.model.bias[0], 0.5 * std::log((n_pos / n + eps) / ((n - n_pos) / n + eps)), 1e-14);
      for (std::size_t t = 0; t < r.model.trees.size(); ++t) {
        std::vector<double> H(X.n_rows);
        decision_function(r.model, X.c_view(), H.data(), 1, t);
        double total = 0.0, right = 0.0, wrong = 0.0;
        std::vector<double> w(X.n_rows);
        for (std::size_t i = 0; i < X.n_rows; ++i) total += w[i] = std::exp(-(y[i] == 1 ? 1.0 : -1.0) * H[i]);
        for (std::size_t i = 0; i < X.n_rows; ++i) {
          const int f = r.model.trees[t].output(&X.c_order[i * X.n_cols], 1);
          ((f == 1) == (y[i] == 1) ? right : wrong) += w[i] / total;
        }
        const double want = lr * 0.5 * std::log((right + eps) / (wrong + eps));
        ASSERT_NEAR(r.model.trees[t].step[0], want, 1e-12 * std::fabs(want)) << "tree " << t;
        ASSERT_NEAR(r.history[t].weighted_error, wrong / (right + wrong), 1e-12) << "tree " << t;
        ASSERT_GT(right, wrong) << "tree " << t << " has no edge";
      }
    }
  }
}

TEST(Train, StopsWhenNoTreeHasAnEdge) {
  // A constant feature and balanced labels: the only learner is f = +1 everywhere, which after the bias
  // gets exactly half the weight wrong.
  const Dense<double> X{100, 1, std::vector<double>(100, 3.0)};
  std::vector<std::int32_t> y(100);
  for (std::size_t i = 0; i < 100; ++i) y[i] = static_cast<std::int32_t>(i % 2);
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, ada(10, 2));
  EXPECT_EQ(r.stop_reason, "no_edge");
  EXPECT_TRUE(r.model.trees.empty());
  EXPECT_TRUE(r.history.empty());
  EXPECT_EQ(r.model.bias[0], 0.0);
}

TEST(Train, TreesRespectMaxDepth) {
  const auto X = testing::random_matrix(2000, 6, 5, 0.1);
  const auto y = testing::noisy_labels(X, 6, 0.1);
  for (int max_depth = 1; max_depth <= 4; ++max_depth) {
    const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, ada(20, max_depth, 2));
    bool reached = false;
    ASSERT_EQ(r.history.size(), r.model.trees.size());
    for (std::size_t t = 0; t < r.model.trees.size(); ++t) {
      const int d = r.model.trees[t].depth();
      EXPECT_GE(d, 1);
      EXPECT_LE(d, max_depth) << "tree " << t;
      EXPECT_EQ(r.history[t].tree_depth, d);
      EXPECT_LE(r.model.trees[t].nodes.size(), (std::size_t{2} << max_depth) - 1);
      reached = reached || d == max_depth;
    }
    EXPECT_TRUE(reached) << "no tree reached depth " << max_depth;
  }
}

TEST(Train, SeparableFeatureGivesAPerfectFirstStump) {
  // 200 rows: fewer distinct values than bins, so every gap between neighbours is a candidate split.
  auto X = testing::random_matrix(200, 5, 8);
  std::vector<std::int32_t> y(X.n_rows);
  for (std::size_t r = 0; r < X.n_rows; ++r) y[r] = X.at(r, 3) > 0.25 ? 1 : 0;
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, ada(50, 1));
  ASSERT_EQ(r.model.trees.size(), 1u);
  EXPECT_EQ(r.stop_reason, "perfect_fit");
  EXPECT_EQ(r.history[0].weighted_error, 0.0);
  const Node& root = r.model.trees[0].nodes[0];
  EXPECT_EQ(root.feature, 3);
  // The threshold is the midpoint between the largest negative and the smallest positive value.
  double lo = -1e300, hi = 1e300;
  for (std::size_t i = 0; i < X.n_rows; ++i) {
    if (y[i] == 0) lo = std::max(lo, X.at(i, 3));
    else hi = std::min(hi, X.at(i, 3));
  }
  EXPECT_GE(root.threshold, lo);
  EXPECT_LT(root.threshold, hi);
  EXPECT_TRUE(std::isfinite(r.model.trees[0].step[0]));
  const auto s = scores(r.model, X);
  for (std::size_t i = 0; i < X.n_rows; ++i) ASSERT_EQ(s[i] > 0, y[i] == 1) << "row " << i;
}

TEST(Train, WeightTwoEqualsADuplicatedRow) {
  // 150 rows of continuous data: fewer distinct values than bins, so duplicates do not move bin edges.
  const auto X = testing::random_matrix(150, 4, 31, 0.05);
  const auto y = testing::noisy_labels(X, 32, 0.2);
  const std::vector<std::size_t> doubled = {3, 17, 42, 99, 149};
  std::vector<double> w(X.n_rows, 1.0);
  Dense<double> Xdup = X;
  std::vector<std::int32_t> ydup = y;
  for (std::size_t r : doubled) {
    w[r] = 2.0;
    Xdup.c_order.insert(Xdup.c_order.end(), X.c_order.begin() + static_cast<std::ptrdiff_t>(r * X.n_cols),
                        X.c_order.begin() + static_cast<std::ptrdiff_t>((r + 1) * X.n_cols));
    ++Xdup.n_rows;
    ydup.push_back(y[r]);
  }
  const auto probe = testing::random_matrix(500, 4, 33, 0.05);
  // smoothing -1 is the default, 1 / max(n_samples, sum of weights): 1/155 in both runs.
  for (const double smoothing : {-1.0, 1e-3}) {
    for (const int depth : {1, 3}) {
      SCOPED_TRACE(::testing::Message() << "smoothing " << smoothing << " depth " << depth);
      TrainParams p = ada(40, depth, 2);
      p.smoothing = smoothing;
      const TrainResult a = train(X.c_view(), y.data(), w.data(), 2, p);
      const TrainResult b = train(Xdup.c_view(), ydup.data(), nullptr, 2, p);
      expect_equivalent(a.model, b.model, 1e-9);
      const auto sa = scores(a.model, probe), sb = scores(b.model, probe);
      for (std::size_t i = 0; i < sa.size(); ++i) ASSERT_NEAR(sa[i], sb[i], 1e-9 * (1 + std::fabs(sa[i]))) << "row " << i;
    }
  }
}

TEST(Train, ZeroWeightRowsChangeNothing) {
  // Rows with weight 0 neither move bin edges nor weigh in any sum: the same trees as without them, steps
  // equal up to summation order (smoothing fixed, since its default depends on the row count).
  const auto X = testing::random_matrix(900, 5, 34, 0.1);
  const auto y = testing::noisy_labels(X, 35, 0.2);
  std::vector<double> w(X.n_rows, 1.0);
  Dense<double> kept{0, X.n_cols, {}};
  std::vector<std::int32_t> y_kept;
  for (std::size_t r = 0; r < X.n_rows; ++r) {
    if (r % 7 == 3) {
      w[r] = 0.0;
      continue;
    }
    kept.c_order.insert(kept.c_order.end(), X.c_order.begin() + static_cast<std::ptrdiff_t>(r * X.n_cols),
                        X.c_order.begin() + static_cast<std::ptrdiff_t>((r + 1) * X.n_cols));
    ++kept.n_rows;
    y_kept.push_back(y[r]);
  }
  for (const int depth : {1, 3}) {
    TrainParams p = ada(30, depth, 2);
    p.smoothing = 1.0 / 800;
    p.n_bins = 32;  // quantile bins: edges would move if zero-weight rows counted
    SCOPED_TRACE(::testing::Message() << "depth " << depth);
    expect_equivalent(train(X.c_view(), y.data(), w.data(), 2, p).model,
                      train(kept.c_view(), y_kept.data(), nullptr, 2, p).model, 1e-12);
  }
}

TEST(Train, BiasIsHalfTheLogPriorOdds) {
  const auto X = testing::random_matrix(400, 3, 12);
  std::vector<std::int32_t> y(400, 0);
  for (std::size_t i = 0; i < 100; ++i) y[i * 4] = 1;  // 100 positives, 300 negatives
  TrainParams p = ada(1, 1);  // the bias does not depend on the trees grown after it (n_estimators >= 1)
  p.smoothing = 0.0;
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, p);
  ASSERT_EQ(r.model.bias.size(), 1u);
  EXPECT_NEAR(r.model.bias[0], 0.5 * std::log(100.0 / 300.0), 1e-12);
  EXPECT_LE(r.model.trees.size(), 1u);
  EXPECT_EQ(r.model.n_features, 3u);
  // Sample weights shift the prior: weight 3 on every positive makes the classes balanced.
  std::vector<double> w(400, 1.0);
  for (std::size_t i = 0; i < 100; ++i) w[i * 4] = 3.0;
  EXPECT_NEAR(train(X.c_view(), y.data(), w.data(), 2, p).model.bias[0], 0.0, 1e-12);
}

TEST(Train, CallbackCanStopTraining) {
  const auto X = testing::random_matrix(500, 4, 13);
  const auto y = testing::noisy_labels(X, 14, 0.2);
  int seen = 0;
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, ada(100, 2), [&](const IterationInfo& info) {
    EXPECT_EQ(info.iteration, seen);
    return ++seen < 3;
  });
  EXPECT_EQ(r.stop_reason, "callback");
  EXPECT_EQ(r.model.trees.size(), 3u);
  EXPECT_EQ(r.history.size(), 3u);
}

TEST(Train, LearnsAnEasyProblem) {
  const auto X = testing::random_matrix(2000, 5, 15, 0.05);
  const auto y = testing::noisy_labels(X, 16, 0.0);
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, ada(100, 2, 2));
  const auto s = scores(r.model, X);
  std::size_t errors = 0;
  for (std::size_t i = 0; i < X.n_rows; ++i) errors += (s[i] > 0) != (y[i] == 1);
  EXPECT_LT(errors, X.n_rows / 20);
  const auto imp = r.model.feature_importances();
  ASSERT_EQ(imp.size(), 5u);
  // The labels depend on features 0 and 1 only.
  EXPECT_GT(imp[0] + imp[1], 0.8);
}

TEST(Train, InvalidArgumentsThrow) {
  auto X = testing::random_matrix(50, 3, 17);
  auto y = testing::noisy_labels(X, 18, 0.2);
  const auto ok = ada(5, 1);
  auto bad = [&](TrainParams p) { return train(X.c_view(), y.data(), nullptr, 2, p); };
  TrainParams p = ok;
  p.max_depth = 0;
  EXPECT_THROW(bad(p), InvalidArgument);
  p.max_depth = 9;
  EXPECT_THROW(bad(p), InvalidArgument);
  p = ok;
  p.n_bins = 2;
  EXPECT_THROW(bad(p), InvalidArgument);
  p = ok;
  p.learning_rate = 0.0;
  EXPECT_THROW(bad(p), InvalidArgument);
  p.learning_rate = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(bad(p), InvalidArgument);
  p = ok;
  p.n_estimators = -1;
  EXPECT_THROW(bad(p), InvalidArgument);

  EXPECT_THROW(train(X.c_view(), y.data(), nullptr, 3, ok), InvalidArgument);  // AdaBoost is binary
  y[7] = 2;
  EXPECT_THROW(train(X.c_view(), y.data(), nullptr, 2, ok), InvalidArgument);
  y[7] = -1;
  EXPECT_THROW(train(X.c_view(), y.data(), nullptr, 2, ok), InvalidArgument);
  y[7] = 0;
  std::vector<double> w(50, 1.0);
  w[3] = -1.0;
  EXPECT_THROW(train(X.c_view(), y.data(), w.data(), 2, ok), InvalidArgument);
  w[3] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(train(X.c_view(), y.data(), w.data(), 2, ok), InvalidArgument);
  std::fill(w.begin(), w.end(), 0.0);
  EXPECT_THROW(train(X.c_view(), y.data(), w.data(), 2, ok), InvalidArgument);
  X.at(10, 1) = -std::numeric_limits<double>::infinity();
  EXPECT_THROW(train(X.c_view(), y.data(), nullptr, 2, ok), InvalidArgument);
  const MatrixView<double> empty{X.c_order.data(), 0, 3, 3, 1};
  EXPECT_THROW(train(empty, y.data(), nullptr, 2, ok), InvalidArgument);
}

TEST(Train, AllSameLabelDoesNotProduceNonFiniteModels) {
  const auto X = testing::random_matrix(100, 3, 19);
  const std::vector<std::int32_t> y(100, 1);
  const TrainResult r = train(X.c_view(), y.data(), nullptr, 2, ada(10, 2));
  EXPECT_TRUE(std::isfinite(r.model.bias[0]));
  EXPECT_GT(r.model.bias[0], 0.0);
  EXPECT_NO_THROW(r.model.validate());
  EXPECT_NO_THROW(serialize(r.model));
}

}  // namespace
}  // namespace rebelboost
