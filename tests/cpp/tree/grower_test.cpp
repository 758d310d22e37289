// Tests of layer-wise tree growth: global best root split, leaf values, exhaustiveness, depth, threads.
#include "tree/grower.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "boosted_problem.hpp"
#include "loss/loss.hpp"
#include "tree/histogram.hpp"
#include "tree/split.hpp"
#include "test_util.hpp"

namespace rebelboost::tree {
namespace {

using testing::Dense;

// The same split values q for every layer (a loss whose per-sample gain does not depend on the step).
class FixedObjective : public SplitObjective {
 public:
  explicit FixedObjective(std::vector<std::int64_t> q) : q_(std::move(q)) {}
  const std::int64_t* split_values(int, const std::int8_t*) override {
    ++calls;
    return q_.data();
  }
  int calls = 0;

 private:
  std::vector<std::int64_t> q_;
};

struct Problem {
  Dense<double> X;
  data::BinMapper bins{64, 1000000};
  data::BinnedMatrix binned;
  std::vector<std::int64_t> q;
};

Problem make_problem(std::size_t n, std::size_t n_features, std::uint64_t seed, int n_bins = 64) {
  Problem p;
  p.X = testing::random_matrix(n, n_features, seed, 0.1);
  p.bins = data::BinMapper(n_bins, 1000000);
  p.bins.fit(p.X.c_view(), 1);
  p.binned = p.bins.transform(p.X.c_view(), 1);
  const auto y = testing::noisy_labels(p.X, seed + 1, 0.15);
  std::mt19937_64 rng(seed + 2);
  std::uniform_int_distribution<std::int64_t> mag(1, std::int64_t{1} << 40);
  p.q.resize(n);
  for (std::size_t i = 0; i < n; ++i) p.q[i] = (y[i] == 1 ? 1 : -1) * mag(rng);
  return p;
}

// Index of the leaf a training row reaches, following raw thresholds like Tree::output does.
std::uint32_t leaf_of(const Tree& tree, const Dense<double>& X, std::size_t row) {
  std::uint32_t i = 0;
  while (tree.nodes[i].feature >= 0) {
    const Node& n = tree.nodes[i];
    const double v = X.at(row, static_cast<std::size_t>(n.feature));
    i = (std::isnan(v) ? n.nan_left != 0 : v <= n.threshold) ? n.left : n.right;
  }
  return i;
}

// Best split over all features of the given samples, from naively built histograms.
SplitInfo best_over_features(const Problem& p, const std::vector<std::size_t>& rows) {
  SplitInfo winner;
  for (std::size_t f = 0; f < p.binned.n_features; ++f) {
    std::vector<std::int64_t> hist(kHistBins, 0);
    for (std::size_t r : rows) hist[p.binned.column(f)[r]] += p.q[r];
    const SplitInfo s = best_split(hist.data(), p.bins.n_value_bins(f), p.bins.missing_bin(), static_cast<std::int32_t>(f));
    if (s.found() && (!winner.found() || better(s, winner))) winner = s;
  }
  return winner;
}

TEST(TreeGrower, RootIsTheGlobalBestSplit) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Problem p = make_problem(300 + 37 * seed, 6, seed, seed % 2 ? 256 : 17);
    std::vector<std::size_t> all(p.X.n_rows);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    const SplitInfo want = best_over_features(p, all);
    ASSERT_TRUE(want.found());
    TreeGrower grower(p.binned, p.bins, 2);
    FixedObjective obj(p.q);
    const GrowResult g = grower.grow(obj, 1);
    ASSERT_EQ(g.tree.nodes.size(), 3u);
    const Node& root = g.tree.nodes[0];
    EXPECT_EQ(root.feature, want.feature) << "seed " << seed;
    EXPECT_EQ(root.threshold, p.bins.threshold(static_cast<std::size_t>(want.feature), want.bin)) << "seed " << seed;
    EXPECT_EQ(root.nan_left != 0, want.nan_left) << "seed " << seed;
    std::int64_t total = 0;
    for (std::int64_t v : p.q) total += v;
    EXPECT_EQ(root.gain, static_cast<double>(want.score - abs64(total)) / (2.0 * kFixedPointScale)) << "seed " << seed;
    EXPECT_EQ(g.bin_accumulations, static_cast<std::int64_t>(p.X.n_rows * 6));
  }
}

// Different split values per layer, as with a loss whose step changes the per-sample gains: layer l
// gets q with a random subset of signs flipped. Remembers the layer of the last call.
class LayeredObjective : public SplitObjective {
 public:
  LayeredObjective(std::vector<std::int64_t> q, std::uint64_t seed) : base_(std::move(q)), seed_(seed) {}
  const std::int64_t* split_values(int layer, const std::int8_t*) override {
    last_ = values(layer);
    ++calls;
    return last_.data();
  }
  std::vector<std::int64_t> values(int layer) const {
    std::vector<std::int64_t> q = base_;
    std::mt19937_64 rng(seed_ + static_cast<std::uint64_t>(layer));
    if (layer > 0)
      for (auto& v : q)
        if (rng() % 4 == 0) v = -v;
    return q;
  }
  const std::vector<std::int64_t>& last() const { return last_; }
  int calls = 0;

 private:
  std::vector<std::int64_t> base_;
  std::uint64_t seed_;
  std::vector<std::int64_t> last_;
};

TEST(TreeGrower, LeavesAreSignsOfTheirSumsAndCannotBeImproved) {
  for (int max_depth = 1; max_depth <= 5; ++max_depth) {
    for (const bool layered : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "max_depth " << max_depth << " layered " << layered);
      // 256 bins: the missing bin is the last histogram slot.
      Problem p = make_problem(800, 5, 100 + max_depth, layered ? 256 : 64);
      TreeGrower grower(p.binned, p.bins, 3);
      LayeredObjective obj(p.q, layered ? 1000u + max_depth : 0u);
      GrowResult g;
      // Nodes are appended layer by layer, so the nodes of a replay with one layer less are exactly the
      // nodes that existed before the last layer; only those leaves were searched by the last layer.
      std::size_t before_last_layer = 1;
      if (layered) {
        if (max_depth > 1) {
          LayeredObjective replay(p.q, 1000u + max_depth);
          before_last_layer = grower.grow(replay, max_depth - 1).tree.nodes.size();
        }
        g = grower.grow(obj, max_depth);
        ASSERT_LE(obj.calls, max_depth);
        p.q = obj.last();  // leaf values and the "no further split" promise refer to the last layer's values
      } else {
        if (max_depth > 1) {
          FixedObjective replay(p.q);
          before_last_layer = grower.grow(replay, max_depth - 1).tree.nodes.size();
        }
        FixedObjective fixed(p.q);
        g = grower.grow(fixed, max_depth);
        ASSERT_LE(fixed.calls, max_depth);
      }
      const Tree& t = g.tree;
      ASSERT_LE(t.depth(), max_depth);
      ASSERT_LE(before_last_layer, t.nodes.size());

      std::vector<std::vector<std::size_t>> rows_of(t.nodes.size());
      for (std::size_t r = 0; r < p.X.n_rows; ++r) {
        const std::uint32_t leaf = leaf_of(t, p.X, r);
        rows_of[leaf].push_back(r);
        // The outputs reported on the training rows are the raw-threshold predictions.
        ASSERT_EQ(g.outputs[r], t.output(&p.X.c_order[r * p.X.n_cols], 1)) << "row " << r;
      }
      // Node depth by a forward pass (children follow parents).
      std::vector<int> depth(t.nodes.size(), 0);
      for (std::size_t i = 0; i < t.nodes.size(); ++i) {
        const Node& n = t.nodes[i];
        if (n.feature < 0) continue;
        ASSERT_GT(n.left, i);
        ASSERT_GT(n.right, i);
        EXPECT_GT(n.gain, 0.0) << "node " << i;
        depth[n.left] = depth[n.right] = depth[i] + 1;
      }
      int n_leaves = 0;
      for (std::size_t i = 0; i < t.nodes.size(); ++i) {
        if (t.nodes[i].feature >= 0) continue;
        ++n_leaves;
        // A strict split has L != 0 and R != 0, so no leaf is left without training rows.
        ASSERT_FALSE(rows_of[i].empty()) << "empty leaf " << i;
        std::int64_t sum = 0;
        for (std::size_t r : rows_of[i]) sum += p.q[r];
        if (sum != 0) {
          EXPECT_EQ(t.nodes[i].value, sum > 0 ? 1 : -1) << "leaf " << i;
        }
        if (i < before_last_layer && rows_of[i].size() >= 2) {
          EXPECT_FALSE(best_over_features(p, rows_of[i]).found())
              << "leaf " << i << " at depth " << depth[i] << " was searched by the last layer but could still be split";
        }
      }
      EXPECT_GE(n_leaves, 2);
    }
  }
}

TEST(TreeGrower, LeafThatCouldNotSplitIsReconsideredInLaterLayers) {
  // Layer 1 gives the root's left child values of one sign (no split can improve it) while the right
  // child splits; layer 2 restores mixed signs, so the left child (depth 1 < max_depth 3) must split then.
  Problem p = make_problem(1000, 4, 55);
  std::vector<bool> goes_left(p.X.n_rows);
  {
    TreeGrower stump(p.binned, p.bins, 1);
    FixedObjective fixed(p.q);
    const GrowResult g = stump.grow(fixed, 1);
    const Tree& t = g.tree;
    for (std::size_t r = 0; r < p.X.n_rows; ++r) goes_left[r] = leaf_of(t, p.X, r) == t.nodes[0].left;
  }
  class Scripted : public SplitObjective {
   public:
    Scripted(const std::vector<std::int64_t>& q, const std::vector<bool>& left) : q_(q), left_(left) {}
    const std::int64_t* split_values(int layer, const std::int8_t*) override {
      buffer_.resize(q_.size());
      for (std::size_t i = 0; i < q_.size(); ++i)
        buffer_[i] = (layer == 1 && left_[i]) ? (q_[i] < 0 ? -q_[i] : q_[i]) : q_[i];
      layers.push_back(layer);
      return buffer_.data();
    }
    std::vector<int> layers;

   private:
    std::vector<std::int64_t> buffer_;
    const std::vector<std::int64_t>& q_;
    const std::vector<bool>& left_;
  };
  Scripted obj(p.q, goes_left);
  TreeGrower grower(p.binned, p.bins, 2);
  const GrowResult g = grower.grow(obj, 3);
  ASSERT_EQ(obj.layers, (std::vector<int>{0, 1, 2}));
  const Tree& t = g.tree;
  const Node& left_child = t.nodes[t.nodes[0].left];
  EXPECT_GE(left_child.feature, 0) << "the root's left child was never split in layer 2";
  EXPECT_LE(t.depth(), 3);
  // The right child split in layer 1, the left one only in layer 2, so its children are depth-2 leaves.
  const Node& right_child = t.nodes[t.nodes[0].right];
  EXPECT_GE(right_child.feature, 0);
  EXPECT_EQ(t.nodes[0].left, 1u);
  EXPECT_EQ(t.nodes[0].right, 2u);
  EXPECT_GT(left_child.left, right_child.left) << "the left child's split should come from a later layer";
  EXPECT_LT(t.nodes[left_child.left].feature, 0);
  EXPECT_LT(t.nodes[left_child.right].feature, 0);
}

TEST(TreeGrower, ThreadCountDoesNotChangeTheTree) {
  Problem p = make_problem(3000, 9, 77, 256);
  std::vector<Tree> trees;
  for (int threads : {1, 2, 3, 4}) {
    TreeGrower grower(p.binned, p.bins, threads);
    FixedObjective obj(p.q);
    trees.push_back(grower.grow(obj, 4).tree);
  }
  for (std::size_t k = 1; k < trees.size(); ++k) {
    ASSERT_EQ(trees[k].nodes.size(), trees[0].nodes.size());
    for (std::size_t i = 0; i < trees[0].nodes.size(); ++i) {
      const Node& a = trees[0].nodes[i];
      const Node& b = trees[k].nodes[i];
      EXPECT_EQ(a.feature, b.feature);
      EXPECT_EQ(a.threshold, b.threshold);
      EXPECT_EQ(a.nan_left, b.nan_left);
      EXPECT_EQ(a.value, b.value);
      EXPECT_EQ(a.left, b.left);
      EXPECT_EQ(a.gain, b.gain);
    }
  }
}

TEST(TreeGrower, NothingToSplitGivesOneLeaf) {
  Problem p = make_problem(200, 3, 5);
  for (auto& v : p.q) v = v < 0 ? -v : v;  // all positive: no split strictly improves
  TreeGrower grower(p.binned, p.bins, 1);
  FixedObjective obj(p.q);
  const GrowResult g = grower.grow(obj, 3);
  ASSERT_EQ(g.tree.nodes.size(), 1u);
  EXPECT_EQ(g.tree.nodes[0].value, 1);
  for (std::int8_t o : g.outputs) ASSERT_EQ(o, 1);
}

// docs/methods/rebel.md "Trees": the training loss never increases with depth (AdaBoost, one iteration from the bias).
TEST(TreeGrower, AdaBoostLossNeverIncreasesWithDepth) {
  for (double smoothing : {0.0, 1.0 / 1500}) {
    for (std::uint64_t seed : {3u, 4u, 5u}) {
      auto X = testing::random_matrix(1500, 6, seed, 0.05);
      const auto y = testing::noisy_labels(X, seed, 0.2);
      data::BinMapper bins(256, 1000000);
      bins.fit(X.c_view(), 1);
      const data::BinnedMatrix binned = bins.transform(X.c_view(), 1);
      double previous = 2.0;
      for (int depth = 1; depth <= 6; ++depth) {
        auto loss = loss::make_adaboost(y.data(), nullptr, y.size(), smoothing, 1);
        loss->init_bias();
        TreeGrower grower(binned, bins, 2);
        const GrowResult g = grower.grow(*loss, depth);
        const loss::Loss::Step step = loss->step(g.outputs.data());
        ASSERT_TRUE(step.has_edge);
        EXPECT_LT(step.weighted_error, 0.5);
        loss->update(g.outputs.data(), step.step, step);
        const double v = loss->value();
        EXPECT_LE(v, previous) << "seed " << seed << " depth " << depth << " smoothing " << smoothing;
        previous = v;
      }
    }
  }
}

void expect_same_tree(const GrowResult& a, const GrowResult& b) {
  ASSERT_EQ(a.tree.nodes.size(), b.tree.nodes.size());
  for (std::size_t i = 0; i < a.tree.nodes.size(); ++i) {
    const Node& x = a.tree.nodes[i];
    const Node& y = b.tree.nodes[i];
    EXPECT_EQ(x.feature, y.feature) << "node " << i;
    EXPECT_EQ(x.threshold, y.threshold) << "node " << i;
    EXPECT_EQ(x.nan_left, y.nan_left) << "node " << i;
    EXPECT_EQ(x.value, y.value) << "node " << i;
    EXPECT_EQ(x.left, y.left) << "node " << i;
    EXPECT_EQ(x.gain, y.gain) << "node " << i;
  }
  EXPECT_EQ(a.outputs, b.outputs);
}

// Histograms taken as parent - sibling give the tree that direct builds give, for every loss (weights,
// NaN), depths 2-6, thread counts and quick modes; and the binary losses do subtract.
TEST(TreeGrower, SubtractionChangesNothing) {
  for (const std::string kind : {"adaboost", "veb", "rebel"}) {
    testing::BoostedProblem p = testing::boosted_problem(kind, 4000, 6, 21);
    for (int depth = 2; depth <= 6; ++depth) {
      for (const int threads : {1, 3}) {
        for (const QuickMode quick : {QuickMode::kOff, QuickMode::kAuto, QuickMode::kOn}) {
          SCOPED_TRACE(::testing::Message() << kind << " depth " << depth << " threads " << threads << " quick "
                                            << static_cast<int>(quick));
          TreeGrower direct(p.binned, p.bins, threads, p.class_begin, quick, {}, Criterion::kLoss, false);
          TreeGrower subtracting(p.binned, p.bins, threads, p.class_begin, quick, {}, Criterion::kLoss, true);
          const GrowResult want = direct.grow(*p.loss, depth);
          const GrowResult got = subtracting.grow(*p.loss, depth);
          expect_same_tree(want, got);
          EXPECT_EQ(want.subtracted_nodes, 0);
          if (kind != "rebel" && quick == QuickMode::kOff) {
            EXPECT_GT(got.subtracted_nodes, 0);
            EXPECT_LT(got.bin_accumulations, want.bin_accumulations);
          }
        }
      }
    }
  }
}

// The same with the Gini criterion (two class histograms per leaf) and with subsampled rows and features.
TEST(TreeGrower, SubtractionChangesNothingWithGiniAndSampling) {
  testing::BoostedProblem p = testing::boosted_problem("adaboost", 5000, 7, 31);
  std::mt19937_64 rng(5);
  std::vector<std::uint8_t> rows(p.X.n_rows), features(p.X.n_cols, 1);
  for (auto& r : rows) r = rng() % 3 != 0;
  features[1] = features[4] = 0;
  for (const Criterion criterion : {Criterion::kLoss, Criterion::kGini}) {
    for (const bool sampled : {false, true}) {
      TreeGrower direct(p.binned, p.bins, 2, p.class_begin, QuickMode::kOff, {}, criterion, false);
      TreeGrower subtracting(p.binned, p.bins, 2, p.class_begin, QuickMode::kOff, {}, criterion, true);
      const std::uint8_t* r = sampled ? rows.data() : nullptr;
      const std::uint8_t* f = sampled ? features.data() : nullptr;
      const GrowResult want = direct.grow(*p.loss, 5, r, f);
      const GrowResult got = subtracting.grow(*p.loss, 5, r, f);
      expect_same_tree(want, got);
      EXPECT_GT(got.subtracted_nodes, 0);
    }
  }
}

// Few features and many rows: each leaf's rows are cut into parts built by different threads (row-blocked
// histograms); the tree is the one-thread tree, with and without subtraction, for both criteria.
TEST(TreeGrower, RowBlockedHistogramsChangeNothing) {
  testing::BoostedProblem p = testing::boosted_problem("adaboost", 300000, 3, 51, 1);
  for (const Criterion criterion : {Criterion::kLoss, Criterion::kGini}) {
    TreeGrower one(p.binned, p.bins, 1, p.class_begin, QuickMode::kOff, {}, criterion, false);
    const GrowResult want = one.grow(*p.loss, 4);
    for (const int threads : {2, 4}) {
      for (const bool subtraction : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "threads " << threads << " subtraction " << subtraction);
        TreeGrower many(p.binned, p.bins, threads, p.class_begin, QuickMode::kOff, {}, criterion, subtraction);
        expect_same_tree(want, many.grow(*p.loss, 4));
      }
    }
  }
}

// A binary loss takes its step from the grown tree's totals (GrowResult::value_mass, the leaves' |sums|)
// instead of a pass over the rows: the step, its sums and the weighted error equal the pass's, bit for bit,
// whatever the depth, the quick mode or the thread count. A tree searched on a sample of the rows has no
// such totals (its leaves' sums are of the sample): the loss takes the pass.
TEST(TreeGrower, TreeTotalsGiveTheStepOfAPassOverTheRows) {
  for (const auto& [kind, n] : std::vector<std::pair<std::string, std::size_t>>{
           {"adaboost", 3000}, {"veb", 3000}, {"adaboost", 40}, {"veb", 40}}) {
    testing::BoostedProblem p = testing::boosted_problem(kind, n, 5, 41, 4);
    p.loss->set_every_row_searched(true);
    for (int depth = 1; depth <= 6; ++depth) {
      for (const QuickMode quick : {QuickMode::kOff, QuickMode::kOn}) {
        for (const int threads : {1, 2}) {
          SCOPED_TRACE(::testing::Message() << kind << " rows " << n << " depth " << depth << " quick "
                                            << static_cast<int>(quick) << " threads " << threads);
          TreeGrower grower(p.binned, p.bins, threads, p.class_begin, quick);
          const GrowResult g = grower.grow(*p.loss, depth);
          ASSERT_GE(g.value_mass, 0);
          EXPECT_GT(g.leaf_abs_sum, 0);
          EXPECT_LE(g.leaf_abs_sum, g.value_mass);
          const loss::Loss::Step pass = p.loss->step(g.outputs.data());
          const loss::Loss::Step totals = p.loss->tree_step(g);
          EXPECT_EQ(pass.step, totals.step);
          EXPECT_EQ(pass.sum_pos, totals.sum_pos);
          EXPECT_EQ(pass.sum_neg, totals.sum_neg);
          EXPECT_EQ(pass.weighted_error, totals.weighted_error);
          EXPECT_EQ(pass.has_edge, totals.has_edge);
        }
      }
    }
  }
  testing::BoostedProblem p = testing::boosted_problem("adaboost", 3000, 5, 42, 2);
  std::vector<std::uint8_t> half(3000, 0);
  for (std::size_t i = 0; i < half.size(); i += 2) half[i] = 1;
  p.loss->set_every_row_searched(false);
  TreeGrower grower(p.binned, p.bins, 1, p.class_begin);
  EXPECT_EQ(grower.grow(*p.loss, 3, half.data()).value_mass, -1);
}

}  // namespace
}  // namespace rebelboost::tree
