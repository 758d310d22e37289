// Prediction of similarity models: outputs equal the thesis's formulas evaluated directly on the
// standardised row; a row's scores do not depend on its neighbours, the layout, or the thread count;
// NaN is a clear error and far-away rows give finite scores.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "model/similarity_outputs.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;

Model trained(const Dense<double>& X) {
  std::vector<std::int32_t> y(X.n_rows);
  for (std::size_t r = 0; r < X.n_rows; ++r) y[r] = static_cast<std::int32_t>((X.at(r, 0) * X.at(r, 1) > 0) + (X.at(r, 2) > 1));
  TrainParams p;
  p.loss = LossKind::kRebel;
  p.learner = LearnerKind::kSimilarity;
  p.n_estimators = 50;
  p.n_threads = 1;
  return train(X.c_view(), y.data(), nullptr, 3, p).model;
}

// f_t(x) from the definitions of thesis §5.4 with vectors (no distance identities).
double reference_output(const Model& m, const Similarity& s, const std::vector<double>& z) {
  const std::size_t d = m.n_features;
  const double* a = &m.anchors[s.anchor_i * d];
  if (s.kind == Similarity::Kind::kConstant) return 1.0;
  if (s.kind == Similarity::Kind::kOnePoint) {
    double dist = 0.0;
    for (std::size_t c = 0; c < d; ++c) dist += (a[c] - z[c]) * (a[c] - z[c]);
    return (s.tau - dist) / (s.tau + dist);
  }
  const double* b = &m.anchors[s.anchor_j * d];
  double dot = 0.0, q = 0.0, m2 = 0.0;
  for (std::size_t c = 0; c < d; ++c) {
    const double dc = (a[c] - b[c]) / 2, mc = (a[c] + b[c]) / 2;
    dot += dc * (z[c] - mc);
    q += dc * dc;
    m2 += (z[c] - mc) * (z[c] - mc);
  }
  return 16 * q / (3 * std::pow(4.0 / 3.0, 0.25)) * dot / (4 * q * q + m2 * m2);
}

TEST(SimilarityPredict, OutputsFollowTheDefinitions) {
  const Dense<double> X = testing::random_matrix(200, 3, 41);
  const Model m = trained(X);
  const Dense<double> Q = testing::random_matrix(40, 3, 42);
  const std::size_t T = m.n_learners();
  std::vector<double> out(Q.n_rows * T);
  learner_outputs(m, Q.c_view(), out.data(), 1);
  for (std::size_t r = 0; r < Q.n_rows; ++r) {
    std::vector<double> z(3);
    for (std::size_t c = 0; c < 3; ++c) z[c] = (Q.at(r, c) - m.feature_mean[c]) / m.feature_scale[c];
    for (std::size_t t = 0; t < T; ++t) ASSERT_NEAR(out[r * T + t], reference_output(m, m.similarities[t], z), 1e-12);
  }
  // decision_function = bias + sum_t f_t a_t.
  std::vector<double> s(Q.n_rows * 3);
  decision_function(m, Q.c_view(), s.data(), 1);
  for (std::size_t r = 0; r < Q.n_rows; ++r)
    for (std::size_t k = 0; k < 3; ++k) {
      double h = m.bias[k];
      for (std::size_t t = 0; t < T; ++t) h += out[r * T + t] * m.similarities[t].step[k];
      EXPECT_EQ(s[r * 3 + k], h);
    }
}

// Evaluating a few learners (an eval set advances one per iteration) computes the distances to their own
// anchors only, not to every anchor of the model, and gives the outputs of evaluating all of them.
TEST(SimilarityPredict, AFewLearnersComputeOnlyTheirOwnAnchorsDistances) {
  const Dense<double> X = testing::random_matrix(200, 3, 41);
  const Model m = trained(X);
  const Dense<double> Q = testing::random_matrix(5, 3, 43);
  const std::size_t T = m.n_learners();
  std::vector<double> all(Q.n_rows * T);
  learner_outputs(m, Q.c_view(), all.data(), 1);
  ASSERT_GT(m.anchor_rows.size(), 10u);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t t = 0; t < T; ++t) {
    const similarity::SimilarityEvaluator one(m, t, 1);
    const Similarity& s = m.similarities[t];
    const std::size_t own = s.kind == Similarity::Kind::kConstant ? 0 : s.kind == Similarity::Kind::kOnePoint ? 1 : 2;
    for (std::size_t r = 0; r < Q.n_rows; ++r) {
      std::vector<double> z(4), distance(one.n_anchors(), nan);  // z: 4, not 3, quiets GCC 12's -Warray-bounds false positive
      double f = nan;
      one.outputs(Q.c_order.data() + r * 3, 1, r, z.data(), distance.data(), &f);
      EXPECT_EQ(f, all[r * T + t]) << "learner " << t << ", row " << r;
      std::size_t written = 0;
      for (const double v : distance) written += !std::isnan(v);
      EXPECT_EQ(written, own) << "learner " << t;
    }
  }
}

TEST(SimilarityPredict, ARowsScoresIgnoreItsNeighboursLayoutAndThreads) {
  const Dense<double> X = testing::random_matrix(200, 3, 43);
  const Model m = trained(X);
  const Dense<double> Q = testing::random_matrix(700, 3, 44);  // several row blocks
  std::vector<double> batch(700 * 3), one(3), threaded(700 * 3), strided(700 * 3);
  decision_function(m, Q.c_view(), batch.data(), 1);
  decision_function(m, Q.c_view(), threaded.data(), 3);
  EXPECT_EQ(batch, threaded);
  const std::vector<double> f = Q.f_order();
  decision_function(m, MatrixView<double>::col_major(f.data(), 700, 3), strided.data(), 2);
  EXPECT_EQ(batch, strided);
  for (const std::size_t r : {0u, 255u, 256u, 699u}) {
    decision_function(m, MatrixView<double>::row_major(&Q.c_order[r * 3], 1, 3), one.data(), 1);
    for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(one[k], batch[r * 3 + k]);
  }
}

TEST(SimilarityPredict, NaNIsAnErrorAndFarRowsStayFinite) {
  const Dense<double> X = testing::random_matrix(100, 3, 45);
  const Model m = trained(X);
  Dense<double> Q = testing::random_matrix(10, 3, 46);
  Q.at(6, 1) = std::nan("");
  std::vector<double> s(30);
  try {
    decision_function(m, Q.c_view(), s.data(), 2);
    ADD_FAILURE() << "NaN accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("NaN at row 6, feature 1"), std::string::npos) << e.what();
  }
  for (const double far : {1e150, -1e300, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::max()}) {
    Q.at(6, 1) = far;
    decision_function(m, Q.c_view(), s.data(), 1);
    for (double v : s) EXPECT_TRUE(std::isfinite(v)) << far;
  }
  std::vector<std::int8_t> signs(10 * m.n_learners());
  EXPECT_THROW(tree_outputs(m, Q.c_view(), signs.data(), 1), InvalidArgument);
}

}  // namespace
}  // namespace rebelboost
