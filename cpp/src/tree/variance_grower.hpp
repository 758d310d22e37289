// The regressor's tree grower (docs/guide/regression.md): layer-wise regression trees by the variance
// criterion on histograms, with the histogram subtraction trick (a pair of siblings builds the smaller one's
// histograms from its rows; the larger one's are its parent's minus those, exactly, in integers).
//
// Every row n carries s_n = w_n r_n and t_n = w_n in fixed point (r_n the residual, w_n its weight). A leaf
// splits when it holds at least 2 rows, above max_depth, and some split strictly lowers the weighted squared
// error while leaving each side at least min_leaf_weight; among those, the split of best_split_variance
// (split.hpp) wins by the one tie rule. So the tree is grow_regression_tree's full-scan tree for
// min_leaf_weight = 0 (the slow reference, tested bit for bit), for any thread count. QuickBoost
// (variance_quick.hpp) may search a layer instead, by the pruned pass: the same tree in every quick mode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "tree/partition.hpp"
#include "tree/regression_tree.hpp"
#include "tree/split.hpp"
#include "tree/variance_quick.hpp"
#include "util/stage_clock.hpp"

namespace rebelboost::tree {

class VarianceGrower {
 public:
  VarianceGrower(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads,
                 QuickMode quick = QuickMode::kOff, QuickParams quick_params = {});

  // A leaf of the last grown tree: its node and its rows rows()[begin, end) (ascending).
  struct Leaf {
    std::uint32_t node = 0;
    std::size_t begin = 0, end = 0;
    std::int64_t S = 0, W = 0;  // sums of s and t over its rows
    int hist = -1;              // buffer holding its histograms (-1: none)
    bool direct = false;        // with its sibling: both built from their rows (the parent was pruned)
  };

  // Grows a tree of depth at most max_depth (0: a single leaf) on s, t (t >= 0; s = 0 where t = 0).
  // active_features (optional, 1 = searched): LazyBoost's feature sample. Leaves' values are S / W (0 when
  // W = 0); each node's `weight` is its W and split nodes' `gain` best_split_variance's gain. The tree's
  // `work` counts the histogram adds and pruned features, `quick_nodes` and `full_nodes` the leaves each
  // pass searched.
  // `uniform` (optional) says what the caller knows of s and t already, and saves grow() its pass over the
  // rows for the root's sums and the packing: the tree is the same.
  struct UniformRows {
    std::int64_t t0 = 0;              // every t equals t0 (> 0)
    std::int64_t S = 0, abs_S = 0;    // sum s, sum |s|
  };
  RegressionTree grow(const std::int64_t* s, const std::int64_t* t, int max_depth, std::int64_t min_leaf_weight,
                      const std::uint8_t* active_features = nullptr, const UniformRows* uniform = nullptr);

  // The last tree's leaves, their rows grouped by leaf (the last layer's partition, which outputs() does not
  // need, is made on the first call of either).
  const std::vector<Leaf>& leaves() {
    complete();
    return leaves_;
  }
  const std::uint32_t* rows() {
    complete();
    return partition_.rows(0);
  }

  // f[row] = the value of the last tree's leaf that holds the row, for every row; the last layer's rows
  // from their parent's range and split rule (no partition needed).
  void outputs(const RegressionTree& tree, double* f) const;

  // grow() charges histograms (with the split scans) and partitions to `clock` (null: nothing measured).
  void set_stage_clock(util::StageClock* clock) { clock_ = clock; }

 private:
  std::int64_t* hist(int buffer) { return pool_.data() + static_cast<std::size_t>(buffer) * hist_size_; }
  int take_buffer();
  void release(std::size_t leaf);  // its buffer back to the pool
  void build(const std::vector<std::size_t>& which, const std::int64_t* s, const std::int64_t* t,
             const std::uint8_t* active_features);
  std::vector<SplitInfo> search(const std::vector<std::size_t>& open, std::int64_t min_leaf_weight,
                                const std::uint8_t* active_features);
  // A pruned layer's search (variance_quick.hpp): large leaves by the pruned pass, the others as search().
  std::vector<SplitInfo> search_pruned(const std::vector<std::size_t>& open, std::int64_t min_leaf_weight,
                                       const std::uint8_t* active_features);
  // Whether the next layer, whose leaves are the children of `leaves` split by `splits`, is pruned.
  bool choose_next(const std::vector<std::size_t>& leaves, const std::vector<SplitInfo>& splits,
                   const std::vector<Leaf>& lefts, const std::uint8_t* active_features);
  void left_sums(const std::int64_t* h, const SplitInfo& split, Leaf& left) const;
  void rows_left_sums(const RowPartition::Split& part, Leaf& left) const;
  RowPartition::Rule rule(const SplitInfo& split) const;
  void choose_packing(const std::int64_t* s, const std::int64_t* t, Leaf& root);
  void pack_uniform(const std::int64_t* s, const UniformRows& uniform, Leaf& root);
  void bin_sums(const std::int64_t* h, int b, std::int64_t& S, std::int64_t& W) const;
  SplitInfo feature_best(const std::int64_t* h, std::size_t f, std::int64_t min_weight) const;
  static constexpr int kCountShift = 40;
  void subtract_siblings(const std::vector<std::size_t>& next, const std::int64_t* s, const std::int64_t* t,
                         const std::uint8_t* active_features);
  void finish(RegressionTree& tree, const std::vector<std::size_t>& finished);
  void start(const std::int64_t* s, const std::int64_t* t, int max_depth, const std::uint8_t* active_features,
             const UniformRows* uniform, RegressionTree& tree);
  std::vector<std::size_t> split_layer(const std::vector<std::size_t>& open, bool last, std::int64_t min_leaf_weight,
                                       const std::uint8_t* active_features, RegressionTree& tree,
                                       std::vector<std::size_t>& finished);
  std::vector<Leaf> partition_all(const std::vector<std::size_t>& leaves, const std::vector<SplitInfo>& splits, bool defer);
  void complete();
  void sort_leaves();

  // A split of the last layer whose partition waits (complete()): its parent's rows and rule, and its
  // children's indices in leaves_ (their ranges empty until then).
  struct Deferred {
    RowPartition::Split part;
    std::size_t left = 0, right = 0;
  };
  void add_children(std::size_t l, const SplitInfo& split, Leaf left, bool subtract, RegressionTree& tree,
                    std::vector<std::size_t>& next);

  const data::BinnedMatrix& X_;
  const data::BinMapper& bins_;
  int n_threads_;
  std::size_t hist_size_;                // int64 per leaf: n_features x kHistBins x (s, t)
  std::vector<std::int64_t> pool_;       // histogram buffers
  std::vector<int> free_;                // free buffer indices
  RowPartition partition_;               // rows grouped by leaf
  // s and t (or packed values) of the rows of the leaves built next, in the order (carried by the partition)
  std::vector<std::int64_t> ordered_s_, ordered_t_;
  bool packed_ = false;                      // histograms hold count * 2^40 + S per bin (choose_packing)
  std::int64_t t0_ = 0;                      // the one nonzero t when packed
  std::vector<std::int64_t> packed_values_;  // per row: t != 0 ? 2^40 + s : 0
  // When packed: row r's packed value is packed_source_[r] + pack_offset_ (packed_values_ and 0, or, with
  // every t nonzero, s itself and 2^40: then no packed copy is written).
  const std::int64_t* packed_source_ = nullptr;
  std::int64_t pack_offset_ = 0;
  std::vector<Leaf> leaves_;             // while growing: every node's leaf record; after: the final leaves
  std::vector<Deferred> deferred_;       // the last layer's splits not yet partitioned
  util::StageClock* clock_ = nullptr;
  const std::int64_t* search_s_ = nullptr;  // the values of the tree being grown
  const std::int64_t* search_t_ = nullptr;
  VarianceQuick quick_;
  int layer_ = 0;               // the layer being searched
  bool quick_layer_ = false;    // it takes the pruned pass
  std::size_t n_active_ = 0;    // features searched in this tree
  QuickWork work_;              // this tree's histogram adds and pruned features
  std::int32_t quick_nodes_ = 0, full_nodes_ = 0;
};

}  // namespace rebelboost::tree
