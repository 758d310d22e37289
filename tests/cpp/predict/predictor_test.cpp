// Tests of the compiled predictor: every kernel set, the batch, one-row and class paths give the same bits.
#include "rebelboost/predict.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "predict/engine.hpp"
#include "predict/flat_forest.hpp"
#include "predict/kernels.hpp"
#include "predict/random_models.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;
using testing::uneven_model;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// H in learner order from the model's own nodes (Tree::output), the definition every path must match.
std::vector<double> reference(const Model& m, const Dense<double>& X, std::size_t n_trees = kAllLearners) {
  const std::size_t K = m.n_outputs, n = std::min(n_trees, m.trees.size());
  std::vector<double> out(X.n_rows * K);
  for (std::size_t r = 0; r < X.n_rows; ++r)
    for (std::size_t k = 0; k < K; ++k) {
      double h = m.bias[k];
      for (std::size_t t = 0; t < n; ++t) h += m.trees[t].output(&X.c_order[r * X.n_cols], 1) * m.trees[t].step[k];
      out[r * K + k] = h;
    }
  return out;
}

// Values that hit the thresholds (multiples of 0.5 and 0.25), with NaN, +-inf and -0.0.
Dense<double> special_rows(std::size_t n_rows, std::size_t n_cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Dense<double> X{n_rows, n_cols, std::vector<double>(n_rows * n_cols)};
  const double special[] = {kNaN, INFINITY, -INFINITY, 0.0, -0.0, 1.5, -2.0};
  for (double& v : X.c_order)
    v = rng() % 4 == 0 ? special[rng() % 7] : static_cast<double>(static_cast<int>(rng() % 21) - 10) * 0.25;
  // Rows 0..63 without NaN, so whole 16-row groups take the kernels' NaN-free path.
  for (std::size_t i = 0; i < std::min<std::size_t>(64, n_rows) * n_cols; ++i)
    if (std::isnan(X.c_order[i])) X.c_order[i] = 0.5;
  return X;
}

std::vector<const predict::Kernels*> kernel_sets() {
  std::vector<const predict::Kernels*> sets{&predict::generic_kernels()};
  if (predict::avx2_kernels()) sets.push_back(predict::avx2_kernels());
  if (predict::avx512_kernels()) sets.push_back(predict::avx512_kernels());
  return sets;
}

Model trained(std::size_t n_classes, int depth, int n_trees, std::uint64_t seed) {
  const Dense<double> X = testing::random_matrix(800, 6, seed, 0.1).cast<float>().cast<double>();
  std::vector<std::int32_t> y = testing::noisy_labels(X, seed + 1, 0.2);
  if (n_classes > 2)
    for (std::size_t r = 0; r < y.size(); ++r)
      if (!std::isnan(X.at(r, 2)) && X.at(r, 2) > 0.5) y[r] = 2;
  TrainParams p;
  p.loss = n_classes > 2 ? LossKind::kRebel : LossKind::kAdaBoost;
  p.n_estimators = n_trees;
  p.max_depth = depth;
  p.n_threads = 1;
  return train(X.c_view(), y.data(), nullptr, n_classes, p).model;
}

std::vector<Model> models() {
  return {uneven_model(5, 5), uneven_model(7, 5, 3, 60), trained(2, 2, 40, 1), trained(3, 3, 30, 3), trained(2, 6, 10, 5)};
}

TEST(Kernels, EveryInstructionSetGivesTheReferenceBits) {
  for (const Model& m : models()) {
    const Dense<double> X = special_rows(517, m.n_features, 9);
    const auto want = reference(m, X);
    const Dense<float> Xf = X.cast<float>();
    const auto want_f = reference(m, Xf.cast<double>());
    for (const predict::Kernels* kernels : kernel_sets()) {
      const predict::Engine engine(m, *kernels);
      std::vector<double> got(want.size(), -1.0), got_f(want.size(), -1.0);
      engine.decision_function(X.c_view(), got.data(), kAllLearners, 2);
      engine.decision_function(Xf.c_view(), got_f.data(), kAllLearners, 1);
      EXPECT_EQ(got, want) << kernels->name;
      EXPECT_EQ(got_f, want_f) << kernels->name;
      std::vector<std::int8_t> out(X.n_rows * m.trees.size());
      engine.tree_outputs(X.c_view(), out.data(), 2, 0, kAllLearners);
      std::vector<std::int8_t> part(X.n_rows * 3);
      engine.tree_outputs(X.c_view(), part.data(), 1, 2, 3);  // trees 2, 3, 4 only
      for (std::size_t r = 0; r < X.n_rows; ++r)
        for (std::size_t t = 0; t < 3; ++t) ASSERT_EQ(part[r * 3 + t], out[r * m.trees.size() + 2 + t]);
      for (std::size_t r = 0; r < X.n_rows; ++r)
        for (std::size_t t = 0; t < m.trees.size(); ++t)
          ASSERT_EQ(out[r * m.trees.size() + t], m.trees[t].output(&X.c_order[r * X.n_cols], 1)) << kernels->name;
    }
  }
}

// Thresholds a hair above or below float values, rows at those floats: float32 input must route exactly as
// its double value does (the kernels compare floats with thresholds rounded down to float).
TEST(Kernels, FloatRowsAtThresholdsNotRepresentableAsFloat) {
  Model m = uneven_model(21, 4);
  std::vector<float> values;
  std::size_t i = 0;
  for (Tree& tree : m.trees)
    for (Node& node : tree.nodes)
      if (node.feature >= 0) {
        node.threshold = std::nextafter(node.threshold, (i++ % 2) ? INFINITY : -INFINITY);
        const float f = static_cast<float>(node.threshold);
        values.insert(values.end(), {f, std::nextafter(f, INFINITY), std::nextafter(f, -INFINITY)});
      }
  std::mt19937_64 rng(22);
  Dense<float> Xf{300, 4, std::vector<float>(1200)};
  for (float& v : Xf.c_order) v = values[rng() % values.size()];
  const auto want = reference(m, Xf.cast<double>());
  for (const predict::Kernels* kernels : kernel_sets()) {
    std::vector<double> got(want.size());
    predict::Engine(m, *kernels).decision_function(Xf.c_view(), got.data(), kAllLearners, 1);
    EXPECT_EQ(got, want) << kernels->name;
  }
  std::vector<double> row(1);
  const Predictor predictor(m);
  for (std::size_t r = 0; r < 300; ++r) {
    predictor.decision_row(&Xf.c_order[r * 4], 1, row.data());
    ASSERT_EQ(row[0], want[r]);
  }
}

TEST(Predictor, OneRowBatchAndClassesAgree) {
  for (const Model& m : models()) {
    const Predictor predictor(m);
    const std::size_t K = m.n_outputs;
    const Dense<double> X = special_rows(203, m.n_features, 11);
    const std::vector<double> fo = X.f_order();
    const auto Xf = MatrixView<double>::col_major(fo.data(), X.n_rows, X.n_cols);
    for (std::size_t n_trees : {std::size_t{0}, std::size_t{3}, kAllLearners}) {
      const auto want = reference(m, X, n_trees);
      std::vector<double> batch(want.size()), row(K);
      predictor.decision_function(Xf, batch.data(), n_trees, 3);
      EXPECT_EQ(batch, want);
      std::vector<std::int32_t> classes(X.n_rows), expected(X.n_rows);
      std::vector<std::uint32_t> counts(X.n_rows);
      PredictOptions options;
      options.n_trees = n_trees;
      predictor.predict(X.c_view(), classes.data(), options, counts.data());
      scores_to_classes(m, want.data(), X.n_rows, expected.data());
      EXPECT_EQ(classes, expected);
      for (std::size_t r = 0; r < X.n_rows; ++r) {
        ASSERT_EQ(counts[r], std::min(n_trees, m.trees.size()));
        predictor.decision_row(&fo[r], static_cast<std::ptrdiff_t>(X.n_rows), row.data(), n_trees);
        for (std::size_t k = 0; k < K; ++k) ASSERT_EQ(row[k], want[r * K + k]);
        ASSERT_EQ(predictor.predict_row(&X.c_order[r * X.n_cols], 1, row.data(), options), expected[r]);
      }
      // Fewer rows than a group: the one-row path inside the batch calls.
      std::vector<double> few(2 * K);
      predictor.decision_function(MatrixView<double>::row_major(X.c_order.data(), 2, X.n_cols), few.data(), n_trees);
      EXPECT_EQ(few, std::vector<double>(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(2 * K)));
    }
  }
}

TEST(Predictor, OwnsItsModelAndChecksColumns) {
  Model m = trained(2, 2, 5, 13);
  const Dense<double> X = testing::random_matrix(40, 6, 14);
  const auto want = reference(m, X);
  const Predictor predictor(m);
  m.trees.clear();  // the predictor holds its own copy
  std::vector<double> got(40);
  predictor.decision_function(X.c_view(), got.data());
  EXPECT_EQ(got, want);
  const Dense<double> narrow = testing::random_matrix(40, 5, 14);
  EXPECT_THROW(predictor.decision_function(narrow.c_view(), got.data()), InvalidArgument);
  std::vector<std::int32_t> c(40);
  EXPECT_THROW(predictor.predict(narrow.c_view(), c.data()), InvalidArgument);
}

TEST(FlatForest, RoundDownToFloatKeepsEveryComparison) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const double edges[] = {0.0, -0.0, 1e-46, -1e-46, 3.4028235677973366e38, 3.5e38, -3.5e38, INFINITY, -INFINITY, 0.1};
  std::vector<double> thresholds(std::begin(edges), std::end(edges));
  for (int i = 0; i < 2000; ++i) thresholds.push_back(std::ldexp(unit(rng), static_cast<int>(rng() % 300) - 150));
  for (double v : thresholds) {
    const float t = predict::round_down_to_float(v);
    float x = predict::round_down_to_float(v);
    for (int step = 0; step < 3; ++step, x = std::nextafter(x, INFINITY)) {
      ASSERT_EQ(x <= t, static_cast<double>(x) <= v) << v;
      const float below = std::nextafter(t, -INFINITY);
      ASSERT_EQ(below <= t, static_cast<double>(below) <= v) << v;
    }
  }
}

}  // namespace
}  // namespace rebelboost
