// Tests of histogram subtraction: parent - built child equals the sibling built directly, bit for bit, on
// every loss's real split values (NaN, sample weights) at depths 2-6; and the pool's budget.
#include "tree/node_histograms.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "boosted_problem.hpp"
#include "tree/histogram.hpp"

namespace rebelboost::tree {
namespace {

// Rows reaching each node of `tree` (by raw thresholds, as prediction does), and each node's depth.
void rows_per_node(const Tree& tree, const testing::Dense<double>& X, std::vector<std::vector<std::uint32_t>>& rows,
                   std::vector<int>& depth) {
  rows.assign(tree.nodes.size(), {});
  depth.assign(tree.nodes.size(), 0);
  for (std::size_t i = 0; i < tree.nodes.size(); ++i)
    if (tree.nodes[i].feature >= 0) depth[tree.nodes[i].left] = depth[tree.nodes[i].right] = depth[i] + 1;
  for (std::uint32_t r = 0; r < X.n_rows; ++r) {
    std::uint32_t i = 0;
    rows[0].push_back(r);
    while (tree.nodes[i].feature >= 0) {
      const Node& n = tree.nodes[i];
      const double v = X.at(r, static_cast<std::size_t>(n.feature));
      i = (std::isnan(v) ? n.nan_left != 0 : v <= n.threshold) ? n.left : n.right;
      rows[i].push_back(r);
    }
  }
}

TEST(HistogramSubtraction, ParentMinusChildIsTheSiblingForEveryLossAndDepth) {
  for (const std::string kind : {"adaboost", "veb", "rebel"}) {
    SCOPED_TRACE(kind);
    testing::BoostedProblem p = testing::boosted_problem(kind, 3000, 5, 11);
    TreeGrower grower(p.binned, p.bins, 2, p.class_begin);
    const GrowResult g = grower.grow(*p.loss, 6);
    // The split values of a deeper layer for this tree (REBEL's are scalar below the root).
    const std::int64_t* q = p.loss->split_values(1, g.outputs.data());
    std::vector<std::vector<std::uint32_t>> rows;
    std::vector<int> depth;
    rows_per_node(g.tree, p.X, rows, depth);
    const std::size_t F = p.binned.n_features;
    HistogramPool pool(F, 1);
    int checked = 0;
    for (std::size_t node = 0; node < g.tree.nodes.size(); ++node) {
      const Node& parent = g.tree.nodes[node];
      if (parent.feature < 0) continue;
      const auto& left = rows[parent.left];
      const auto& right = rows[parent.right];
      const bool left_small = left.size() <= right.size();
      const auto& small = left_small ? left : right;
      const auto& large = left_small ? right : left;
      const int parent_buffer = pool.acquire();
      ASSERT_GE(parent_buffer, 0);
      for (std::size_t f = 0; f < F; ++f) {
        // Parent by the gather kernel over its rows, the small child likewise, then parent - small.
        std::vector<std::int64_t> parent_values, small_values;
        for (const std::uint32_t r : rows[node]) parent_values.push_back(q[r]);
        for (const std::uint32_t r : small) small_values.push_back(q[r]);
        std::int64_t* h = pool.at(parent_buffer, f);
        std::fill(h, h + kHistBins, 0);
        accumulate_gather(p.binned.column(f), rows[node].data(), parent_values.data(), rows[node].size(), h);
        std::vector<std::int64_t> s(kHistBins, 0), want(kHistBins, 0);
        accumulate_gather(p.binned.column(f), small.data(), small_values.data(), small.size(), s.data());
        subtract_histogram(h, s.data(), kHistBins);
        for (const std::uint32_t r : large) want[p.binned.column(f)[r]] += q[r];  // the sibling, directly
        for (int b = 0; b < kHistBins; ++b) ASSERT_EQ(h[b], want[static_cast<std::size_t>(b)]) << "node " << node << " feature " << f << " bin " << b;
        // Negated values: -parent - (-child) is the negated sibling.
        negate_histogram(s.data(), kHistBins);
        std::vector<std::int64_t> neg_parent(kHistBins, 0);
        for (const std::uint32_t r : rows[node]) neg_parent[p.binned.column(f)[r]] -= q[r];
        subtract_histogram(neg_parent.data(), s.data(), kHistBins);
        for (int b = 0; b < kHistBins; ++b) ASSERT_EQ(neg_parent[static_cast<std::size_t>(b)], -want[static_cast<std::size_t>(b)]);
      }
      pool.release(parent_buffer);
      ++checked;
      EXPECT_GE(depth[parent.left], 1);
    }
    // A depth-6 tree with splits at every depth 1..5, so children at depths 2-6 were checked.
    int deepest = 0;
    for (std::size_t i = 0; i < g.tree.nodes.size(); ++i) deepest = std::max(deepest, depth[i]);
    EXPECT_EQ(deepest, 6);
    EXPECT_GE(checked, 20);
  }
}

TEST(HistogramPool, RespectsTheBudgetAndRecyclesBuffers) {
  const std::size_t F = 10;
  const std::size_t bytes = F * kHistBins * sizeof(std::int64_t) * 2;  // Gini: 2 parts
  HistogramPool pool(F, 2, 3 * bytes + 17);
  EXPECT_EQ(pool.stride(), 2u * kHistBins);
  const int a = pool.acquire(), b = pool.acquire(), c = pool.acquire();
  EXPECT_GE(a, 0);
  EXPECT_GE(b, 0);
  EXPECT_GE(c, 0);
  EXPECT_EQ(pool.acquire(), -1);  // the budget holds 3
  pool.release(b);
  EXPECT_EQ(pool.acquire(), b);
  pool.release_all();
  for (int k = 0; k < 3; ++k) EXPECT_GE(pool.acquire(), 0);
  EXPECT_EQ(pool.acquire(), -1);
  // Buffers do not overlap: the last slot of one feature is not the first of the next.
  pool.release_all();
  const int d = pool.acquire();
  EXPECT_EQ(pool.at(d, 1) - pool.at(d, 0), static_cast<std::ptrdiff_t>(pool.stride()));
}

}  // namespace
}  // namespace rebelboost::tree
