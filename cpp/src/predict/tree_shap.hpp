// Exact per-feature contributions of a tree model: path-dependent TreeSHAP (Lundberg, Erion and Lee 2018,
// Algorithm 2; docs/guide/explanations.md), one pass per tree whatever K.
//
// A tree outputs f(x) a with f in {+1, -1} and a its step vector, and Shapley values are linear, so the
// contribution of feature j to class k is a_k phi_j(f): TreeSHAP runs once on the +-1 tree and the step
// scales its K copies. The conditional expectations are the path-dependent ones: at a split on a feature
// outside the coalition the row goes left with probability cover[left] / cover[node] (Tree::cover; 1/2
// each when the node's cover is 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"

namespace rebelboost::predict {

class TreeShap {
 public:
  // Leaf tables (below) of at most this many entries per tree, and of at most kTableBudget in all; the
  // other trees are walked by Algorithm 2's recursion.
  static constexpr std::size_t kTreeTableLimit = std::size_t{1} << 13;  // depth-5 trees: 5 120
  static constexpr std::size_t kTableBudget = std::size_t{1} << 23;     // 64 MiB

  // The first n_trees trees of `model` (all if fewer). Throws InvalidArgument for a similarity model or a
  // tree model without covers (read from a file older than format version 5). table_budget: entries the
  // leaf tables may take (0: every tree walked by the recursion; the tests compare both).
  TreeShap(const Model& model, std::size_t n_trees, std::size_t table_budget = kTableBudget);

  // Values per row: K x (n_features + 1).
  std::size_t width() const { return K_ * (d_ + 1); }

  // out[row * width() + k * (d + 1) + j]: the contribution of feature j to score k for j < d, and at j = d
  // the expected value bias_k + sum_t a_tk E[f_t] (the score of a row whose features are all unknown);
  // each row's d + 1 values of class k sum to its score H_k (to rounding). Rows run in parallel on
  // n_threads; every row's values are computed alone, in tree order, so they do not depend on n_threads.
  // Memory: per thread, one row's path buffers and d doubles.
  template <typename T>
  void contributions(MatrixView<T> X, double* out, int n_threads) const;

 private:
  struct ShapNode {  // a node with its children's probabilities precomputed
    std::int32_t feature;
    std::uint8_t nan_left;
    double threshold;
    std::uint32_t left, right;
    double left_fraction, right_fraction;  // cover[child] / cover[node]
    double value;                           // leaves: +1 or -1
  };
  struct PathElement {  // one feature on the current path (Algorithm 2's m)
    std::int32_t feature;
    double zero_fraction;  // probability of following the path when the feature is not in the coalition
    double one_fraction;   // 1 if x follows the path, else 0 (when the feature is in the coalition)
    double weight;         // proportion of coalitions of each size (the permutation weights)
  };
  // Leaf tables. A leaf's share of the contributions depends on x only through which of the u distinct
  // features split on along its path x follows (every split on the feature sends x towards the leaf), so
  // its 2^u cases are computed once: table[mask * u + i] is the share of the path's i-th distinct feature
  // when x follows exactly the features of `mask`. A row then costs one lookup per leaf.
  struct LeafCheck {  // x follows slot `slot` only if it goes `left` at `node`
    std::uint32_t node;
    std::uint8_t left;
    std::uint8_t slot;
  };
  struct TableLeaf {
    std::uint32_t checks_begin, checks_end;  // into checks_
    std::uint32_t slots_begin, n_slots;      // into slot_features_: the tree's local feature index per slot
    std::size_t table;                       // into tables_: 2^n_slots x n_slots entries
  };
  struct Scratch;

  bool build_tables(std::size_t t, std::size_t first_feature, std::size_t& budget);
  void build_leaf_table(const ShapNode* tree, const std::vector<std::uint32_t>& path, std::size_t first_feature);
  template <typename T>
  void recurse(const ShapNode* tree, std::uint32_t node, const T* x, std::ptrdiff_t stride, PathElement* path,
               std::size_t depth, double zero_fraction, double one_fraction, std::int32_t feature,
               double* phi) const;
  template <typename T>
  void tabled(std::size_t t, const T* x, std::ptrdiff_t stride, Scratch& scratch) const;
  template <typename T>
  void row(const T* x, std::ptrdiff_t stride, Scratch& scratch, double* out) const;

  std::size_t K_ = 1, d_ = 0;
  std::vector<ShapNode> nodes_;                // every tree's nodes, one block per tree
  std::vector<std::size_t> tree_begin_;        // tree t: nodes_[tree_begin_[t], tree_begin_[t + 1])
  std::vector<std::int32_t> tree_features_;    // distinct split features per tree, one block per tree
  std::vector<std::size_t> features_begin_;    // idem for tree_features_
  std::vector<double> steps_;                  // n_trees x K
  std::vector<double> expected_;               // K: bias + sum_t a_t E[f_t]
  std::size_t max_depth_ = 0;
  std::vector<std::size_t> leaves_begin_;      // tree t's table leaves: [leaves_begin_[t], leaves_begin_[t + 1])
  std::vector<TableLeaf> leaves_;              // (empty range: the tree is walked by the recursion)
  std::vector<LeafCheck> checks_;
  std::vector<std::uint16_t> slot_features_;
  std::vector<double> tables_;
};

}  // namespace rebelboost::predict
