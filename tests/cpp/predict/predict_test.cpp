// Tests of batch prediction against a by-hand sum of Tree::output, across dtypes, layouts and threads.
#include "rebelboost/predict.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "rebelboost/error.hpp"
#include "rebelboost/train.hpp"
#include "predict/engine.hpp"
#include "predict/flat_forest.hpp"
#include "predict/gather.hpp"
#include "predict/random_models.hpp"
#include "test_util.hpp"

namespace rebelboost {
namespace {

using testing::Dense;
using testing::uneven_model;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

Model trained_model(std::size_t n_features, std::uint64_t seed, int depth = 3, int n_trees = 30) {
  // float32-representable training data, so float32 and float64 views of it route identically.
  const Dense<double> X = testing::random_matrix(1500, n_features, seed, 0.1).cast<float>().cast<double>();
  const auto y = testing::noisy_labels(X, seed + 1, 0.2);
  TrainParams p;
  p.n_estimators = n_trees;
  p.max_depth = depth;
  p.n_threads = 2;
  Model m = train(X.c_view(), y.data(), nullptr, 2, p).model;
  return m;
}

// H = a_0 + sum_{t < n_trees} f_t(x) a_t, in tree order, from Tree::output on a C-order row.
std::vector<double> by_hand(const Model& m, const Dense<double>& X, std::size_t n_trees) {
  const std::size_t K = m.n_outputs;
  std::vector<double> out(X.n_rows * K);
  for (std::size_t r = 0; r < X.n_rows; ++r) {
    for (std::size_t k = 0; k < K; ++k) out[r * K + k] = m.bias[k];
    for (std::size_t t = 0; t < std::min(n_trees, m.trees.size()); ++t) {
      const int f = m.trees[t].output(&X.c_order[r * X.n_cols], 1);
      EXPECT_TRUE(f == 1 || f == -1);
      for (std::size_t k = 0; k < K; ++k) out[r * K + k] += f * m.trees[t].step[k];
    }
  }
  return out;
}

template <typename T>
std::vector<double> predict(const Model& m, MatrixView<T> X, int threads,
                            std::size_t n_trees = std::numeric_limits<std::size_t>::max()) {
  std::vector<double> out(X.n_rows * m.n_outputs, -12345.0);
  decision_function(m, X, out.data(), threads, n_trees);
  return out;
}

TEST(DecisionFunction, EqualsTheSumOfTreeOutputs) {
  const Model m = trained_model(6, 1);
  ASSERT_EQ(m.trees.size(), 30u);
  const Dense<double> X = testing::random_matrix(1000, 6, 2, 0.15);  // > one row block of 256
  EXPECT_EQ(predict(m, X.c_view(), 1), by_hand(m, X, m.trees.size()));
  EXPECT_EQ(predict(m, X.c_view(), 3), by_hand(m, X, m.trees.size()));
}

TEST(DecisionFunction, DtypesAndLayoutsAgree) {
  const Model m = trained_model(5, 3);
  const Dense<float> Xf = testing::random_matrix(700, 5, 4, 0.1).cast<float>();
  const Dense<double> Xd = Xf.cast<double>();
  const std::vector<float> ff = Xf.f_order();
  const std::vector<double> fd = Xd.f_order();
  const auto ref = by_hand(m, Xd, m.trees.size());
  EXPECT_EQ(predict(m, Xd.c_view(), 2), ref);
  EXPECT_EQ(predict(m, Xf.c_view(), 2), ref);
  EXPECT_EQ(predict(m, MatrixView<double>::col_major(fd.data(), 700, 5), 2), ref);
  EXPECT_EQ(predict(m, MatrixView<float>::col_major(ff.data(), 700, 5), 1), ref);
}

TEST(DecisionFunction, StridedSubmatrixView) {
  // Every other row and the first 4 of 7 columns of a bigger C-order buffer.
  const Model m = trained_model(4, 5, 2, 10);
  const Dense<double> big = testing::random_matrix(600, 7, 6, 0.1);
  Dense<double> compact{300, 4, std::vector<double>(300 * 4)};
  for (std::size_t r = 0; r < 300; ++r)
    for (std::size_t c = 0; c < 4; ++c) compact.at(r, c) = big.at(2 * r, c);
  const MatrixView<double> view{big.c_order.data(), 300, 4, 14, 1};
  EXPECT_EQ(predict(m, view, 2), by_hand(m, compact, m.trees.size()));
}

TEST(Gather, UsedLineShareCountsDistinctLines) {
  std::mt19937 rng(3);
  for (std::size_t n_features : {std::size_t{1}, std::size_t{7}, std::size_t{16}, std::size_t{17}, std::size_t{300}}) {
    for (std::size_t bytes : {std::size_t{4}, std::size_t{8}}) {
      std::vector<std::int32_t> all(n_features);
      for (std::size_t j = 0; j < n_features; ++j) all[j] = static_cast<std::int32_t>(j);
      std::shuffle(all.begin(), all.end(), rng);
      const std::size_t n_lines = (n_features * bytes + 63) / 64;
      for (std::size_t k = 0; k <= n_features; k += 1 + n_features / 5) {
        std::vector<bool> hit(n_lines, false);  // by hand: the lines holding byte offsets j * bytes
        for (std::size_t u = 0; u < k; ++u) hit[static_cast<std::size_t>(all[u]) * bytes / 64] = true;
        const double want = static_cast<double>(std::count(hit.begin(), hit.end(), true)) / static_cast<double>(n_lines);
        EXPECT_EQ(predict::used_line_share(all.data(), k, n_features, bytes), want) << n_features << " " << bytes << " " << k;
      }
      EXPECT_EQ(predict::used_line_share(all.data(), n_features, n_features, bytes), 1.0);
    }
  }
  EXPECT_EQ(predict::used_line_share(nullptr, 0, 0, 4), 0.0);
}

TEST(DecisionFunction, WideRowsReadInAddressOrderAgree) {
  // 200 float features (13 lines a row) with most lines used: rows are read in address order before their
  // columns are copied (contiguous and strided row-major views), not for a column-major view; so many
  // features per split that the copies are not scanned for NaN (10 % of the values are NaN); every path
  // gives the same scores and the same exact-exit classes.
  const Model m = trained_model(200, 21, 3, 60);
  const predict::FlatForest forest(m);
  ASSERT_GE(predict::used_line_share(forest.arrays().features, forest.arrays().n_slots, 200, sizeof(float)),
            predict::kStreamLineShare);
  std::size_t n_splits = 0;
  for (const Tree& tree : m.trees) n_splits += tree.nodes.size() / 2;
  ASSERT_GT(static_cast<double>(forest.arrays().n_slots), predict::Engine::kScanSlotsPerSplit * static_cast<double>(n_splits));
  const Dense<float> Xf = testing::random_matrix(600, 200, 22, 0.1).cast<float>();
  const Dense<double> Xd = Xf.cast<double>();
  const auto ref = by_hand(m, Xd, m.trees.size());
  std::vector<float> wide(600 * 211, 0.0f);  // rows 211 apart, 11 values of padding after each
  for (std::size_t r = 0; r < 600; ++r)
    for (std::size_t c = 0; c < 200; ++c) wide[r * 211 + c] = Xf.at(r, c);
  const std::vector<float> ff = Xf.f_order();
  EXPECT_EQ(predict(m, Xf.c_view(), 2), ref);
  EXPECT_EQ(predict(m, MatrixView<float>{wide.data(), 600, 200, 211, 1}, 2), ref);
  EXPECT_EQ(predict(m, MatrixView<float>::col_major(ff.data(), 600, 200), 2), ref);
  const Predictor predictor(m);
  std::vector<std::int32_t> full(600), exit(600);
  PredictOptions early;
  early.early_exit = true;
  early.check_every = 4;
  early.n_threads = 2;
  predictor.predict(Xf.c_view(), full.data());
  predictor.predict(MatrixView<float>{wide.data(), 600, 200, 211, 1}, exit.data(), early);
  EXPECT_EQ(exit, full);
}

TEST(DecisionFunction, NTreesTruncates) {
  const Model m = trained_model(5, 7, 2, 20);
  const Dense<double> X = testing::random_matrix(300, 5, 8, 0.1);
  for (std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{19}, std::size_t{20}, std::size_t{1000}}) {
    const auto got = predict(m, X.c_view(), 2, k);
    EXPECT_EQ(got, by_hand(m, X, k)) << "n_trees " << k;
    if (k == 0) {
      for (double v : got) ASSERT_EQ(v, m.bias[0]);
    }
  }
  EXPECT_NE(predict(m, X.c_view(), 1, 7), predict(m, X.c_view(), 1, 8));
}

TEST(DecisionFunction, WrongColumnCountThrows) {
  const Model m = trained_model(5, 9, 1, 3);
  const Dense<double> X = testing::random_matrix(10, 4, 1);
  std::vector<double> out(10);
  EXPECT_THROW(decision_function(m, X.c_view(), out.data(), 1), InvalidArgument);
  std::vector<std::int8_t> f(10 * 3);
  EXPECT_THROW(tree_outputs(m, X.c_view(), f.data(), 1), InvalidArgument);
}

TEST(TreeOutputs, MatchTreeOutputForEveryTree) {
  const Model m = trained_model(6, 11, 3, 12);
  const Dense<double> X = testing::random_matrix(600, 6, 12, 0.2);
  const std::vector<float> f = X.cast<float>().f_order();
  for (int threads : {1, 3}) {
    std::vector<std::int8_t> got(600 * 12, 0);
    tree_outputs(m, X.c_view(), got.data(), threads);
    std::vector<std::int8_t> got_f(600 * 12, 0);
    tree_outputs(m, MatrixView<float>::col_major(f.data(), 600, 6), got_f.data(), threads);
    const Dense<double> Xr = X.cast<float>().cast<double>();
    for (std::size_t r = 0; r < 600; ++r)
      for (std::size_t t = 0; t < 12; ++t) {
        ASSERT_EQ(got[r * 12 + t], m.trees[t].output(&X.c_order[r * 6], 1)) << r << "," << t;
        ASSERT_EQ(got_f[r * 12 + t], m.trees[t].output(&Xr.c_order[r * 6], 1)) << r << "," << t;
      }
  }
}

// A hand-made 3-output model: one stump on feature 1 with NaN sent left, one leaf-only tree.
Model hand_model() {
  Model m;
  m.loss = LossKind::kRebel;
  m.n_features = 2;
  m.n_outputs = 3;
  m.bias = {0.5, 0.0, -0.5};
  Tree stump;
  stump.step = {1.0, -1.0, 0.25};
  Node root;
  root.feature = 1;
  root.threshold = 2.0;
  root.nan_left = 1;
  root.left = 1;
  root.right = 2;
  Node left, right;
  left.value = 1;
  right.value = -1;
  stump.nodes = {root, left, right};
  Tree leaf;
  leaf.step = {0.0, 0.5, 0.0};
  Node only;
  only.value = -1;
  leaf.nodes = {only};
  m.trees = {stump, leaf};
  return m;
}

TEST(DecisionFunction, HandModelAndClasses) {
  const Model m = hand_model();
  ASSERT_NO_THROW(m.validate());
  // rows: x1 = 2 (left, <=), x1 = 3 (right), x1 = NaN (left by nan_left), x1 = -inf (left), x1 = +inf (right)
  const std::vector<double> X = {0, 2.0, 0, 3.0, 0, kNaN, 0, -INFINITY, 0, INFINITY};
  std::vector<double> s(5 * 3);
  decision_function(m, MatrixView<double>::row_major(X.data(), 5, 2), s.data(), 1);
  const std::vector<double> left = {1.5, -1.5, -0.25}, right = {-0.5, 0.5, -0.75};
  const std::vector<std::vector<double>> want = {left, right, left, left, right};
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(s[r * 3 + k], want[r][k]) << r << "," << k;
  std::vector<std::int32_t> cls(5);
  scores_to_classes(m, s.data(), 5, cls.data());
  EXPECT_EQ(cls, (std::vector<std::int32_t>{0, 1, 0, 0, 1}));
  // Ties go to the first class.
  const std::vector<double> tied = {1.0, 1.0, 0.0, -1.0, 2.0, 2.0};
  std::vector<std::int32_t> tc(2);
  scores_to_classes(m, tied.data(), 2, tc.data());
  EXPECT_EQ(tc, (std::vector<std::int32_t>{0, 1}));
}

TEST(DecisionFunction, UnevenTreesAndSpecialValuesMatchTheNodeWalk) {
  const std::size_t n_features = 5, n_rows = 3003;  // not a multiple of the 8 rows walked together
  const Model m = uneven_model(5, n_features);
  ASSERT_NO_THROW(m.validate());
  std::mt19937_64 rng(6);
  std::vector<double> X(n_rows * n_features);
  const double special[] = {kNaN, INFINITY, -INFINITY, 0.0, -0.0, 1.5, -2.0};
  for (double& v : X) v = rng() % 4 == 0 ? special[rng() % 7] : static_cast<double>(static_cast<int>(rng() % 21) - 10) * 0.25;
  std::vector<double> batch(n_rows), single(1);
  decision_function(m, MatrixView<double>::row_major(X.data(), n_rows, n_features), batch.data(), 2);
  std::vector<std::int8_t> outputs(n_rows * m.trees.size());
  tree_outputs(m, MatrixView<double>::row_major(X.data(), n_rows, n_features), outputs.data(), 1);
  for (std::size_t r = 0; r < n_rows; ++r) {
    double want = m.bias[0];
    for (std::size_t t = 0; t < m.trees.size(); ++t) {
      const int f = m.trees[t].output(&X[r * n_features], 1);
      want += f * m.trees[t].step[0];
      ASSERT_EQ(outputs[r * m.trees.size() + t], f) << r << "," << t;
    }
    ASSERT_EQ(batch[r], want) << r;
    decision_function(m, MatrixView<double>::row_major(&X[r * n_features], 1, n_features), single.data(), 1);
    ASSERT_EQ(single[0], want) << r;
  }
}

// A depth-`depth` chain of 2 depth + 1 nodes: node 2i splits on feature i % n_features, its right child
// is a leaf and its left child the next split. Flattened into a complete tree it would take 2^(depth+1) - 1
// entries for its 2 depth + 1 nodes.
Tree chain(int depth, std::size_t n_features, double step) {
  Tree tree;
  tree.step = {step};
  for (int i = 0; i < depth; ++i) {
    Node split;
    split.feature = static_cast<std::int32_t>(static_cast<std::size_t>(i) % n_features);
    split.threshold = 0.25 * (i % 5) - 0.5;
    split.nan_left = static_cast<std::uint8_t>(i % 2);
    split.left = static_cast<std::uint32_t>(2 * i + 2);
    split.right = static_cast<std::uint32_t>(2 * i + 1);
    tree.nodes.push_back(split);
    Node leaf;
    leaf.value = static_cast<std::int8_t>(i % 3 == 0 ? 1 : -1);
    tree.nodes.push_back(leaf);
  }
  Node last;
  last.value = 1;
  tree.nodes.push_back(last);
  return tree;
}

TEST(DecisionFunction, LopsidedDeepTreesAreWalkedAndAgreeWithFlattenedOnes) {
  // Depth-12 chains (walked: flattening would cost 8 191 entries for 25 nodes) between balanced trees
  // (flattened): every row, any number of rows, any range of trees, gives the node walk's answer.
  const std::size_t n_features = 4;
  Model m = trained_model(n_features, 31, 3, 6);
  for (Tree& t : m.trees) t.cover.clear();  // the hand-made chains have none (covers: every tree or none)
  for (int i = 0; i < 6; ++i) m.trees.insert(m.trees.begin() + 2 * i, chain(12, n_features, 0.125 * (i + 1)));
  ASSERT_NO_THROW(m.validate());
  const Dense<double> X = testing::random_matrix(203, n_features, 32, 0.1);
  for (std::size_t rows : {std::size_t{5}, std::size_t{17}, std::size_t{203}}) {
    const Dense<double> Xr{rows, n_features, std::vector<double>(X.c_order.begin(), X.c_order.begin() + rows * n_features)};
    EXPECT_EQ(predict(m, Xr.c_view(), 2), by_hand(m, Xr, m.trees.size())) << rows << " rows";
    for (std::size_t first : {std::size_t{0}, std::size_t{3}, std::size_t{11}}) {
      const std::size_t n = std::min<std::size_t>(5, m.trees.size() - first);
      std::vector<std::int8_t> got(rows * n, 0);
      tree_outputs(m, Xr.c_view(), got.data(), 2, first, 5);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t t = 0; t < n; ++t)
          ASSERT_EQ(got[r * n + t], m.trees[first + t].output(&Xr.c_order[r * n_features], 1)) << r << "," << first + t;
    }
  }
}

TEST(ScoresToClasses, BinaryIsPositiveScore) {
  Model m;
  m.n_outputs = 1;
  const std::vector<double> s = {-1.0, 0.0, 1e-300, -0.0, 3.0};
  std::vector<std::int32_t> c(5);
  scores_to_classes(m, s.data(), 5, c.data());
  EXPECT_EQ(c, (std::vector<std::int32_t>{0, 0, 1, 0, 1}));
}

}  // namespace
}  // namespace rebelboost
