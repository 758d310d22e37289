// Tests of BinnedLeaves (tree/binned_leaves.hpp): for runs of rows of any length and start, each row's
// value is that of the leaf RegressionTree::output routes it to, bit for bit, for trees of every depth that
// fits (up to 5 at least), uneven trees, NaN codes and a single leaf.
#include "tree/binned_leaves.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "boosted_problem.hpp"
#include "tree/variance_grower.hpp"

namespace rebelboost::tree {
namespace {

// Residual-like values: a step in feature 1, a smooth term in feature 0, noise.
void residuals(const testing::BoostedProblem& p, std::uint64_t seed, std::vector<std::int64_t>& s, std::vector<std::int64_t>& t) {
  const std::size_t n = p.X.n_rows;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  s.resize(n);
  t.assign(n, 4096);
  for (std::size_t i = 0; i < n; ++i) {
    const double x0 = std::isnan(p.X.at(i, 0)) ? 0.5 : p.X.at(i, 0), x1 = p.X.at(i, 1);
    const double r = (std::isnan(x1) ? 1.0 : x1 > 0.3 ? 5.0 : -3.0) + 2.0 * x0 + noise(rng);
    s[i] = static_cast<std::int64_t>(std::llround(r * 65536.0));
  }
}

void expect_tree_values(const RegressionTree& tree, const data::BinnedMatrix& X, std::size_t run, const std::string& what) {
  const BinnedLeaves leaves(tree, X);
  const std::size_t n = X.n_samples;
  std::vector<double> f(n, -1.0);
  for (std::size_t begin = 0; begin < n; begin += run) leaves.values(begin, std::min(n, begin + run), f.data() + begin);
  for (std::size_t r = 0; r < n; ++r) {
    const double want = tree.output(X, r);
    ASSERT_EQ(std::memcmp(&f[r], &want, sizeof(double)), 0) << what << " row " << r;
  }
}

TEST(BinnedLeaves, EveryRowGetsItsLeafValue) {
  const testing::BoostedProblem p = testing::boosted_problem("veb", 3001, 6, 9, 1);
  std::vector<std::int64_t> s, t;
  residuals(p, 4, s, t);
  VarianceGrower grower(p.binned, p.bins, 1);
  for (int depth = 0; depth <= 7; ++depth)
    for (const std::int64_t min_leaf_weight : {std::int64_t{0}, std::int64_t{300} * 4096}) {  // uneven trees with a minimum
      RegressionTree tree = grower.grow(s.data(), t.data(), depth, min_leaf_weight);
      if (depth <= 5) {
        EXPECT_TRUE(BinnedLeaves::fits(tree));
      }
      if (!BinnedLeaves::fits(tree)) continue;
      for (std::size_t k = 0; k < tree.nodes.size(); ++k) tree.nodes[k].value += 0.001 * static_cast<double>(k);  // distinct leaves
      for (const std::size_t run : {std::size_t{1}, std::size_t{255}, std::size_t{1000}, std::size_t{3001}})
        expect_tree_values(tree, p.binned, run,
                           "depth " + std::to_string(depth) + " min " + std::to_string(min_leaf_weight) + " run " + std::to_string(run));
    }
}

// A hand-made tree whose splits send the missing code to either side, and the one-leaf tree.
TEST(BinnedLeaves, MissingCodesAndASingleLeaf) {
  const testing::BoostedProblem p = testing::boosted_problem("adaboost", 1500, 4, 3, 1);
  for (const bool nan_left : {false, true}) {
    RegressionTree tree;
    tree.missing_bin = p.bins.missing_bin();
    tree.nodes.resize(5);
    tree.nodes[0] = {0, 100, nan_left, 1, 2, 0.0, 0.0, 0};
    tree.nodes[1].value = -1.5;
    tree.nodes[2] = {2, 30, !nan_left, 3, 4, 0.0, 0.0, 0};
    tree.nodes[3].value = 2.25;
    tree.nodes[4].value = 7.0;
    expect_tree_values(tree, p.binned, 700, "nan_left " + std::to_string(nan_left));
  }
  RegressionTree leaf;
  leaf.nodes.resize(1);
  leaf.nodes[0].value = 0.125;
  expect_tree_values(leaf, p.binned, 999, "one leaf");
}

}  // namespace
}  // namespace rebelboost::tree
