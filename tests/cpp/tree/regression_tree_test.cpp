// Tests of regression trees by the variance criterion: the pruned pass grows the full scan's tree bit for
// bit (depths 1-6, NaN, weights, threads), leaves are their rows' weighted means, and a split never raises
// the weighted squared error.
#include "tree/regression_tree.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "boosted_problem.hpp"

namespace rebelboost::tree {
namespace {

struct Targets {
  std::vector<std::int64_t> s, t;
  std::vector<double> r, w;
};

// A step in feature 1 plus a smooth term in feature 2 plus heavy-tailed noise; weights with zeros.
Targets targets(const testing::BoostedProblem& p, std::uint64_t seed, bool weighted) {
  const std::size_t n = p.X.n_rows;
  std::mt19937_64 rng(seed);
  std::student_t_distribution<double> noise(2.5);
  Targets v{std::vector<std::int64_t>(n), std::vector<std::int64_t>(n), std::vector<double>(n), std::vector<double>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const double x1 = p.X.at(i, 1), x2 = std::isnan(p.X.at(i, 2)) ? 0.0 : p.X.at(i, 2);
    v.r[i] = (std::isnan(x1) ? 2.0 : x1 > 0.2 ? 6.0 : -4.0) + 3.0 * x2 + noise(rng);
    v.w[i] = weighted ? (rng() % 8 == 0 ? 0.0 : 0.25 * static_cast<double>(1 + rng() % 8)) : 1.0;
    v.t[i] = static_cast<std::int64_t>(v.w[i] * 4096.0);
    v.s[i] = static_cast<std::int64_t>(std::llround(v.w[i] * v.r[i] * 65536.0));
  }
  return v;
}

bool same_nodes(const RegressionTree& a, const RegressionTree& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const RegressionNode &x = a.nodes[i], &y = b.nodes[i];
    if (x.feature != y.feature || x.bin != y.bin || x.nan_left != y.nan_left || x.left != y.left ||
        std::memcmp(&x.value, &y.value, sizeof(double)) != 0)
      return false;
  }
  return true;
}

TEST(RegressionTree, PrunedPassGrowsTheFullScansTree) {
  const testing::BoostedProblem p = testing::boosted_problem("adaboost", 4000, 8, 29, 1);
  std::int64_t pruned = 0;
  for (int depth = 1; depth <= 6; ++depth) {
    for (const bool weighted : {false, true}) {
      const Targets v = targets(p, 40 + static_cast<std::uint64_t>(depth), weighted);
      const RegressionTree full = grow_regression_tree(p.binned, p.bins, v.s.data(), v.t.data(), depth, false, 1);
      EXPECT_GT(full.nodes.size(), 1u);
      for (const int threads : {1, 3}) {
        const RegressionTree quick = grow_regression_tree(p.binned, p.bins, v.s.data(), v.t.data(), depth, true, threads);
        EXPECT_TRUE(same_nodes(full, quick)) << "depth " << depth << " weighted " << weighted << " threads " << threads;
        EXPECT_LE(quick.work.bin_accumulations, full.work.bin_accumulations);
        pruned += quick.work.features_pruned;
      }
    }
  }
  EXPECT_GT(pruned, 0);  // the variance bound bites on these nodes
}

// Leaves hold their rows' weighted mean (in fixed point), and the tree's weighted squared error is at most
// the unsplit mean's.
TEST(RegressionTree, LeavesAreWeightedMeansAndSplitsLowerTheError) {
  const testing::BoostedProblem p = testing::boosted_problem("veb", 3000, 6, 31, 1);
  const Targets v = targets(p, 8, true);
  const RegressionTree tree = grow_regression_tree(p.binned, p.bins, v.s.data(), v.t.data(), 4, true, 2);
  std::vector<double> S(tree.nodes.size(), 0.0), W(tree.nodes.size(), 0.0);
  double total_s = 0, total_w = 0;
  for (std::size_t r = 0; r < p.X.n_rows; ++r) {
    std::uint32_t i = 0;  // the leaf the row reaches
    while (tree.nodes[i].feature >= 0) {
      const RegressionNode& n = tree.nodes[i];
      const std::uint8_t code = p.binned.column(static_cast<std::size_t>(n.feature))[r];
      i = (code == p.bins.missing_bin() ? n.nan_left : code <= n.bin) ? n.left : n.right;
    }
    EXPECT_EQ(tree.output(p.binned, r), tree.nodes[i].value);
    S[i] += static_cast<double>(v.s[r]);
    W[i] += static_cast<double>(v.t[r]);
    total_s += static_cast<double>(v.s[r]);
    total_w += static_cast<double>(v.t[r]);
  }
  double tree_error = 0, unsplit_error = 0;
  const double mean = total_s / total_w;
  for (std::size_t r = 0; r < p.X.n_rows; ++r) {
    const double y = static_cast<double>(v.s[r]) / std::max(1.0, static_cast<double>(v.t[r]));
    const double wt = static_cast<double>(v.t[r]);
    tree_error += wt * (y - tree.output(p.binned, r)) * (y - tree.output(p.binned, r));
    unsplit_error += wt * (y - mean) * (y - mean);
  }
  for (std::size_t i = 0; i < tree.nodes.size(); ++i)
    if (tree.nodes[i].feature < 0 && W[i] > 0) {
      EXPECT_NEAR(tree.nodes[i].value, S[i] / W[i], 1e-9 * std::fabs(S[i] / W[i]) + 1e-12);
    }
  EXPECT_LT(tree_error, 0.5 * unsplit_error);  // the step and the smooth term explain most of the variance
}

}  // namespace
}  // namespace rebelboost::tree
