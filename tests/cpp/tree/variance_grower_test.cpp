// Tests of the regressor's grower: it grows the slow reference's tree (grow_regression_tree's full scan)
// bit for bit at every depth, with and without weights and NaN, for any thread count; its leaves partition
// the rows as the tree routes them, and outputs() gives each row its leaf's value; min_leaf_weight holds on
// every leaf of a split; QuickBoost's pruned layers (quick on and auto) grow the full scan's tree bit for bit.
#include "tree/variance_grower.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "boosted_problem.hpp"

namespace rebelboost::tree {
namespace {

struct Values {
  std::vector<std::int64_t> s, t;
};

// A step in feature 1, a smooth term in feature 2, heavy-tailed noise; weights with zeros.
Values values(const testing::BoostedProblem& p, std::uint64_t seed, bool weighted) {
  const std::size_t n = p.X.n_rows;
  std::mt19937_64 rng(seed);
  std::student_t_distribution<double> noise(2.5);
  Values v{std::vector<std::int64_t>(n), std::vector<std::int64_t>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const double x1 = p.X.at(i, 1), x2 = std::isnan(p.X.at(i, 2)) ? 0.0 : p.X.at(i, 2);
    const double r = (std::isnan(x1) ? 2.0 : x1 > 0.2 ? 6.0 : -4.0) + 3.0 * x2 + noise(rng);
    const double w = weighted ? (rng() % 8 == 0 ? 0.0 : 0.25 * static_cast<double>(1 + rng() % 8)) : 1.0;
    v.t[i] = static_cast<std::int64_t>(w * 4096.0);
    v.s[i] = static_cast<std::int64_t>(std::llround(w * r * 65536.0));
  }
  return v;
}

void expect_same(const RegressionTree& a, const RegressionTree& b, const std::string& what) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size()) << what;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const RegressionNode &x = a.nodes[i], &y = b.nodes[i];
    EXPECT_TRUE(x.feature == y.feature && x.bin == y.bin && x.nan_left == y.nan_left && x.left == y.left &&
                std::memcmp(&x.value, &y.value, sizeof(double)) == 0 && std::memcmp(&x.gain, &y.gain, sizeof(double)) == 0)
        << what << ": node " << i;
  }
}

TEST(VarianceGrower, GrowsTheReferenceTreeAtEveryDepth) {
  const testing::BoostedProblem p = testing::boosted_problem("adaboost", 5000, 8, 23, 1);
  for (int depth = 0; depth <= 6; ++depth)
    for (const bool weighted : {false, true}) {
      const Values v = values(p, 70 + static_cast<std::uint64_t>(depth), weighted);
      const RegressionTree reference = grow_regression_tree(p.binned, p.bins, v.s.data(), v.t.data(), depth, false, 1);
      for (const int threads : {1, 3}) {
        VarianceGrower grower(p.binned, p.bins, threads);
        for (int again = 0; again < 2; ++again)  // buffers reused across trees change nothing
          expect_same(reference, grower.grow(v.s.data(), v.t.data(), depth, 0),
                      "depth " + std::to_string(depth) + " weighted " + std::to_string(weighted) + " threads " +
                          std::to_string(threads));
      }
    }
}

// A caller's sums for unit weights (VarianceGrower::UniformRows) replace grow()'s own pass: the same tree,
// packed (small sums) or not (sum |s| beyond the packing's limit), for any thread count.
TEST(VarianceGrower, CallersUniformSumsGrowTheSameTree) {
  const testing::BoostedProblem p = testing::boosted_problem("adaboost", 5000, 8, 23, 1);
  for (const int scale_bits : {0, 10})
    for (int depth = 0; depth <= 5; ++depth) {
      Values v = values(p, 90 + static_cast<std::uint64_t>(depth), false);
      VarianceGrower::UniformRows uniform{v.t[0], 0, 0};
      for (std::int64_t& s : v.s) {
        s *= std::int64_t{1} << scale_bits;
        uniform.S += s;
        uniform.abs_S += s < 0 ? -s : s;
      }
      ASSERT_EQ(uniform.abs_S >= std::int64_t{1} << 39, scale_bits > 0);  // the packing's limit (variance_grower.cpp)
      const RegressionTree reference = grow_regression_tree(p.binned, p.bins, v.s.data(), v.t.data(), depth, false, 1);
      for (const int threads : {1, 3}) {
        VarianceGrower grower(p.binned, p.bins, threads), own(p.binned, p.bins, threads);
        const RegressionTree got = grower.grow(v.s.data(), v.t.data(), depth, 0, nullptr, &uniform);
        const RegressionTree want = own.grow(v.s.data(), v.t.data(), depth, 0);  // its own pass: the nodes' weights
        const std::string what = "depth " + std::to_string(depth) + " scale 2^" + std::to_string(scale_bits) +
                                 " threads " + std::to_string(threads);
        expect_same(reference, got, what);
        for (std::size_t i = 0; i < got.nodes.size(); ++i) EXPECT_EQ(want.nodes[i].weight, got.nodes[i].weight) << what;
      }
    }
}

// The final leaves hold every row once, each where the tree routes it, with its S and W.
TEST(VarianceGrower, LeavesPartitionTheRowsAsTheTreeRoutesThem) {
  const testing::BoostedProblem p = testing::boosted_problem("veb", 3000, 6, 5, 1);
  const Values v = values(p, 9, true);
  VarianceGrower grower(p.binned, p.bins, 2);
  const RegressionTree tree = grower.grow(v.s.data(), v.t.data(), 5, 0);
  std::vector<int> seen(p.X.n_rows, 0);
  for (const VarianceGrower::Leaf& leaf : grower.leaves()) {
    std::int64_t S = 0, W = 0;
    for (std::size_t i = leaf.begin; i < leaf.end; ++i) {
      const std::uint32_t r = grower.rows()[i];
      ++seen[r];
      EXPECT_EQ(tree.output(p.binned, r), tree.nodes[leaf.node].value);
      S += v.s[r];
      W += v.t[r];
    }
    EXPECT_EQ(S, leaf.S);
    EXPECT_EQ(W, leaf.W);
    EXPECT_EQ(W, tree.nodes[leaf.node].weight);
    EXPECT_LT(tree.nodes[leaf.node].feature, 0);
  }
  for (int c : seen) EXPECT_EQ(c, 1);
}

// outputs() gives every row its leaf's value as the tree routes it, at every depth (the last layer from its
// parents' rows and rules, unpartitioned), and the same after leaves() has made the last partition.
TEST(VarianceGrower, OutputsFollowTheTreeForEveryRow) {
  const testing::BoostedProblem p = testing::boosted_problem("veb", 3000, 6, 8, 1);
  const Values v = values(p, 12, true);
  for (int depth = 0; depth <= 5; ++depth)
    for (const int threads : {1, 3}) {
      VarianceGrower grower(p.binned, p.bins, threads);
      const RegressionTree tree = grower.grow(v.s.data(), v.t.data(), depth, 0);
      std::vector<double> before(p.X.n_rows, -1.0), after(p.X.n_rows, -2.0);
      grower.outputs(tree, before.data());
      EXPECT_GE(grower.leaves().size(), 1u);
      grower.outputs(tree, after.data());
      for (std::size_t r = 0; r < p.X.n_rows; ++r) {
        ASSERT_EQ(before[r], tree.output(p.binned, r)) << "depth " << depth << " threads " << threads << " row " << r;
        ASSERT_EQ(after[r], before[r]) << "depth " << depth << " row " << r;
      }
    }
}

// Every child of a split holds at least min_leaf_weight, and a larger minimum never grows more leaves.
TEST(VarianceGrower, MinLeafWeightHoldsOnEverySplit) {
  const testing::BoostedProblem p = testing::boosted_problem("adaboost", 2000, 5, 3, 1);
  const Values v = values(p, 4, false);
  VarianceGrower grower(p.binned, p.bins, 2);
  std::size_t previous = 1u << 30;
  for (const std::int64_t rows : {0, 1, 20, 200, 1001}) {
    const std::int64_t min_weight = rows * 4096;
    const RegressionTree tree = grower.grow(v.s.data(), v.t.data(), 6, min_weight);
    for (const RegressionNode& n : tree.nodes)
      if (n.feature >= 0) {
        EXPECT_GE(tree.nodes[n.left].weight, min_weight);
        EXPECT_GE(tree.nodes[n.right].weight, min_weight);
      }
    EXPECT_LE(grower.leaves().size(), previous);
    previous = grower.leaves().size();
  }
  EXPECT_EQ(previous, 1u);  // 1001 rows a side: no split of 2000 rows can
}

// Residuals late in boosting on an easy task: most rows fit (small noise), a few rows keep large residuals
// that a step in feature 1 explains; `scale` multiplies s (large values need masses in units of 2^shift).
Values concentrated(const testing::BoostedProblem& p, std::uint64_t seed, bool weighted, double scale) {
  const std::size_t n = p.X.n_rows;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.05);
  Values v{std::vector<std::int64_t>(n), std::vector<std::int64_t>(n)};
  for (std::size_t i = 0; i < n; ++i) {
    const double x1 = p.X.at(i, 1);
    const double r = noise(rng) + (rng() % 16 == 0 ? (std::isnan(x1) ? 1.0 : x1 > 0.3 ? 8.0 : -6.0) : 0.0);
    const double w = weighted ? (rng() % 8 == 0 ? 0.0 : 0.25 * static_cast<double>(1 + rng() % 8)) : 1.0;
    v.t[i] = static_cast<std::int64_t>(w * 4096.0);
    v.s[i] = static_cast<std::int64_t>(std::llround(w * r * scale));
  }
  return v;
}

void expect_same_weights(const RegressionTree& a, const RegressionTree& b, const std::string& what) {
  expect_same(a, b, what);
  for (std::size_t i = 0; i < a.nodes.size() && i < b.nodes.size(); ++i) EXPECT_EQ(a.nodes[i].weight, b.nodes[i].weight) << what;
}

// quick=True prunes every layer: the full scan's tree at depths 1-6, with NaN, weights, min_leaf_weight,
// values needing a mass shift, 1 and 3 threads; and the bound bites.
TEST(VarianceGrower, PrunedLayersGrowTheFullScansTree) {
  const testing::BoostedProblem p = testing::boosted_problem("adaboost", 6000, 12, 31, 1);
  std::int64_t pruned = 0, quick_nodes = 0;
  for (int depth = 1; depth <= 6; ++depth)
    for (const bool weighted : {false, true})
      for (const double scale : {65536.0, std::ldexp(1.0, 44)}) {
        const Values v = depth % 2 ? concentrated(p, 90 + static_cast<std::uint64_t>(depth), weighted, scale)
                                   : values(p, 90 + static_cast<std::uint64_t>(depth), weighted);
        for (const std::int64_t min_weight : {std::int64_t{0}, std::int64_t{30 * 4096}}) {
          VarianceGrower full(p.binned, p.bins, 1, QuickMode::kOff);
          const RegressionTree want = full.grow(v.s.data(), v.t.data(), depth, min_weight);
          EXPECT_EQ(want.quick_nodes, 0);
          for (const int threads : {1, 3}) {
            VarianceGrower quick(p.binned, p.bins, threads, QuickMode::kOn, {0.9, 20});
            for (int again = 0; again < 2; ++again) {
              const RegressionTree got = quick.grow(v.s.data(), v.t.data(), depth, min_weight);
              expect_same_weights(want, got, "depth " + std::to_string(depth) + " weighted " + std::to_string(weighted) +
                                                 " scale " + std::to_string(scale) + " min weight " +
                                                 std::to_string(min_weight) + " threads " + std::to_string(threads));
              EXPECT_GT(got.quick_nodes, 0);
              if (depth == 1) {  // the root alone
                EXPECT_LE(got.work.bin_accumulations, want.work.bin_accumulations);
              }
              pruned += got.work.features_pruned;
              quick_nodes += got.quick_nodes;
            }
          }
        }
      }
  EXPECT_GT(pruned, quick_nodes);  // more than a feature per node on average
}

// quick="auto" on a root large enough to be worth pruning: auto measures a full tree first, then probes a
// tree with its root pruned, whose next layer builds both children of the root from their rows (no
// histograms to subtract from) and subtracts below them; every tree is the full scan's, and both ran.
TEST(VarianceGrower, AutoLayersGrowTheFullScansTree) {
  const testing::BoostedProblem p = testing::boosted_problem("adaboost", 60000, 40, 37, 1);
  VarianceGrower full(p.binned, p.bins, 2, QuickMode::kOff);
  VarianceGrower autom(p.binned, p.bins, 2, QuickMode::kAuto, {0.9, 20});
  std::int64_t quick_nodes = 0, full_nodes = 0;
  for (int tree = 0; tree < 12; ++tree) {
    const Values v = concentrated(p, 300 + static_cast<std::uint64_t>(tree), tree % 3 == 1, 65536.0);
    const RegressionTree want = full.grow(v.s.data(), v.t.data(), 6, tree % 2 ? 20 * 4096 : 0);
    const RegressionTree got = autom.grow(v.s.data(), v.t.data(), 6, tree % 2 ? 20 * 4096 : 0);
    expect_same_weights(want, got, "tree " + std::to_string(tree));
    quick_nodes += got.quick_nodes;
    full_nodes += got.full_nodes;
  }
  EXPECT_GT(quick_nodes, 0);
  EXPECT_GT(full_nodes, 0);
}

}  // namespace
}  // namespace rebelboost::tree
