// Tests of training on hostile parameters and data: diverging learning rates stop cleanly, extreme sample
// weights are treated alike by every loss, and counts beyond the model limits are refused up front.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "rebelboost/error.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;

TrainParams params(LossKind loss, int n_estimators, int max_depth) {
  TrainParams p;
  p.loss = loss;
  p.n_estimators = n_estimators;
  p.max_depth = max_depth;
  p.n_threads = 1;
  return p;
}

// Labels in [0, K) from the argmax of the first K features plus noise: not separable by a few trees.
std::vector<std::int32_t> labels(const Dense<double>& X, std::size_t K, std::uint64_t seed) {
  if (K == 2) return testing::noisy_labels(X, seed, 0.2);
  std::vector<std::int32_t> y(X.n_rows);
  for (std::size_t r = 0; r < X.n_rows; ++r) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < K; ++k)
      if (X.at(r, k) + 0.7 * std::sin(13.0 * static_cast<double>(r * (k + 1))) >
          X.at(r, best) + 0.7 * std::sin(13.0 * static_cast<double>(r * (best + 1))))
        best = k;
    y[r] = static_cast<std::int32_t>(best);
  }
  return y;
}

struct LossCase {
  LossKind loss;
  std::size_t n_classes;
};
const LossCase kLosses[] = {{LossKind::kAdaBoost, 2}, {LossKind::kVebBoost, 2}, {LossKind::kRebel, 3}};

TEST(TrainDivergence, HugeLearningRatesStopWithDivergedAndAValidModel) {
  // learning_rate 1e308 gave inf scores (stop reason "no_edge"), 1000 a NaN loss ("perfect_fit"), 3 a loss
  // climbing from 1.5 to 194: now training stops at the first tree that overflows or raises the loss,
  // keeps the trees before it, and the model is finite and savable.
  const Dense<double> X = testing::random_matrix(400, 4, 61, 0.05);
  for (const LossCase& c : kLosses) {
    const auto y = labels(X, c.n_classes, 62);
    for (const double lr : {1e308, 1e6, 1000.0, 3.0}) {
      SCOPED_TRACE(::testing::Message() << loss_name(c.loss) << " learning_rate " << lr);
      TrainParams p = params(c.loss, 30, 2);
      p.learning_rate = lr;
      const TrainResult r = train(X.c_view(), y.data(), nullptr, c.n_classes, p);
      EXPECT_EQ(r.stop_reason, "diverged");
      EXPECT_NE(r.stop_message.find("learning_rate"), std::string::npos) << r.stop_message;
      EXPECT_EQ(r.model.trees.size(), r.history.size());
      EXPECT_LT(r.history.size(), 30u);
      double before = 1.0;
      for (const IterationInfo& info : r.history) {
        EXPECT_TRUE(std::isfinite(info.train_loss));
        EXPECT_LE(info.train_loss, before * (1 + 1e-9));
        before = info.train_loss;
      }
      EXPECT_NO_THROW(deserialize(serialize(r.model).data(), serialize(r.model).size()));
    }
    TrainParams p = params(c.loss, 30, 2);  // the same data at learning_rate 1 and 1.5 trains on
    for (const double lr : {1.0, 1.5}) {
      p.learning_rate = lr;
      EXPECT_NE(train(X.c_view(), y.data(), nullptr, c.n_classes, p).stop_reason, "diverged") << lr;
    }
  }
}

// Same trees (features, thresholds, NaN sides, leaves); steps and bias within `tol` relative.
void expect_same_trees(const Model& a, const Model& b, double tol) {
  ASSERT_EQ(a.trees.size(), b.trees.size());
  for (std::size_t k = 0; k < a.bias.size(); ++k) EXPECT_NEAR(a.bias[k], b.bias[k], tol * std::fabs(a.bias[k]));
  for (std::size_t t = 0; t < a.trees.size(); ++t) {
    ASSERT_EQ(a.trees[t].nodes.size(), b.trees[t].nodes.size()) << "tree " << t;
    for (std::size_t i = 0; i < a.trees[t].nodes.size(); ++i) {
      const Node &x = a.trees[t].nodes[i], &z = b.trees[t].nodes[i];
      EXPECT_TRUE(x.feature == z.feature && x.threshold == z.threshold && x.nan_left == z.nan_left && x.value == z.value)
          << "tree " << t << " node " << i;
    }
    for (std::size_t k = 0; k < a.trees[t].step.size(); ++k)
      EXPECT_NEAR(a.trees[t].step[k], b.trees[t].step[k], tol * std::fabs(a.trees[t].step[k])) << "tree " << t;
  }
}

// The model without its node covers (which are sums of the sample weights, so scale with them).
Model without_covers(Model m) {
  for (Tree& t : m.trees) t.cover.clear();
  return m;
}

TEST(TrainWeights, TinyUniformWeightsGiveTheUnweightedModel) {
  // All weights 5e-324 made REBEL fail ("no usable training weight") while AdaBoost and VEB trained: every
  // loss now gives the unweighted model, bit for bit when the weight is a power of two (the scaling to
  // [0.5, 1) is then exact), up to rounding otherwise. (Weights summing to less than n_samples all get
  // the default smoothing of n_samples unit weights.)
  const Dense<double> X = testing::random_matrix(300, 4, 71, 0.05);
  for (const LossCase& c : kLosses) {
    SCOPED_TRACE(loss_name(c.loss));
    const auto y = labels(X, c.n_classes, 72);
    const TrainParams p = params(c.loss, 8, 2);
    const Model unweighted = train(X.c_view(), y.data(), nullptr, c.n_classes, p).model;
    for (const double w : {1.0, 0.5, 5e-324, std::ldexp(1.0, -1060), 1e-300, 1e-310, 0.3}) {
      const std::vector<double> weights(X.n_rows, w);
      const Model weighted = train(X.c_view(), y.data(), weights.data(), c.n_classes, p).model;
      if (std::ldexp(1.0, std::ilogb(w)) == w) {  // the covers, the weights reaching each node, scale exactly
        EXPECT_TRUE(serialize(without_covers(weighted)) == serialize(without_covers(unweighted))) << w;
        for (std::size_t t = 0; t < weighted.trees.size(); ++t)
          for (std::size_t i = 0; i < weighted.trees[t].cover.size(); ++i)
            EXPECT_EQ(weighted.trees[t].cover[i], unweighted.trees[t].cover[i] * w);
      } else
        expect_same_trees(weighted, unweighted, 1e-12);
    }
  }
}

TEST(TrainWeights, ScalingAllWeightsByAPowerOfTwoChangesNothing) {
  // Unequal weights (1..13) / 16, and the same times 2^-1060 (subnormal, exact): the same model.
  const Dense<double> X = testing::random_matrix(300, 4, 81, 0.05);
  std::vector<double> w(X.n_rows), tiny(X.n_rows);
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = static_cast<double>(1 + (i * 7919) % 13) / 16.0;
    tiny[i] = std::ldexp(w[i], -1060);
  }
  for (const LossCase& c : kLosses) {
    SCOPED_TRACE(loss_name(c.loss));
    const auto y = labels(X, c.n_classes, 82);
    const TrainParams p = params(c.loss, 8, 2);
    EXPECT_TRUE(serialize(without_covers(train(X.c_view(), y.data(), tiny.data(), c.n_classes, p).model)) ==
                serialize(without_covers(train(X.c_view(), y.data(), w.data(), c.n_classes, p).model)));
  }
}

void expect_invalid(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing '" << needle << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(TrainLimits, CountsBeyondTheModelLimitsAreRefused) {
  const Dense<double> X = testing::random_matrix(50, 3, 91);
  const auto y = testing::noisy_labels(X, 92, 0.2);
  TrainParams p = params(LossKind::kAdaBoost, static_cast<int>(kMaxTrees) + 1, 1);
  expect_invalid([&] { train(X.c_view(), y.data(), nullptr, 2, p); }, "n_estimators must be an integer in [1, 1000000]");
  p = params(LossKind::kRebel, 5, 1);
  expect_invalid([&] { train(X.c_view(), y.data(), nullptr, kMaxClasses + 1, p); },
                 "4097 classes, more than the limit kMaxClasses = 4096");
  // n_features beyond the limit, through a view whose columns all alias one value (no memory needed).
  const MatrixView<double> wide{X.c_order.data(), X.n_rows, std::size_t{kMaxFeatures} + 1, 1, 0};
  expect_invalid([&] { train(wide, y.data(), nullptr, 2, params(LossKind::kAdaBoost, 5, 1)); },
                 "16777217 features, more than the limit kMaxFeatures");
}

TEST(TrainLimits, RebelStateLargerThanTheMachineIsRefusedBeforeAllocating) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  ASSERT_GT(pages, 0);
  const std::size_t K = kMaxClasses;
  const auto n = static_cast<std::size_t>(static_cast<double>(pages) * static_cast<double>(page) / (24.0 * K)) + 1;
  const double value = 0.5;
  const MatrixView<double> X{&value, n, 2, 0, 0};  // n rows, all the same single value
  std::vector<std::int32_t> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<std::int32_t>(i % K);
  expect_invalid([&] { train(X, y.data(), nullptr, K, params(LossKind::kRebel, 1, 1)); },
                 "GiB of memory");
}

}  // namespace
}  // namespace rebelboost
