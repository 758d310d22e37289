// Greedy layer-wise growth of a depth-D tree with +-1 leaves (thesis §4.4; docs/methods/rebel.md "Trees").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/train.hpp"
#include "tree/multiclass_split.hpp"
#include "tree/node_histograms.hpp"
#include "tree/node_search.hpp"
#include "tree/partition.hpp"
#include "tree/quick_prune.hpp"
#include "tree/reduced_search.hpp"
#include "tree/split.hpp"
#include "util/stage_clock.hpp"

namespace rebelboost::tree {

// What the grower asks of a loss: per-sample split values for one layer.
class SplitObjective {
 public:
  virtual ~SplitObjective() = default;
  // Returns q[n] = fixed-point g_n = l_n(-1) - l_n(+1) for layer `layer` (0 = the root split, where the
  // step is free; deeper layers hold the step of the current tree `f` (f[n] in {+1,-1}) fixed). The
  // array belongs to the objective and stays valid until its next non-const call.
  virtual const std::int64_t* split_values(int layer, const std::int8_t* f) = 0;

  // Whether the tree about to be grown searches every row (true) or a sample of them (the grower zeroes the
  // values of inactive rows): the caller of grow() says so first. Default: a sample.
  virtual void set_every_row_searched(bool /*every_row*/) {}

  // How the values split_values(layer, .) last returned relate to those it returned for layer - 1 of the
  // same tree: +1 equal, -1 negated, 0 unrelated (the default; always 0 for layer 0). Equal or negated
  // values let the grower reuse the previous layer's histograms: a sibling is parent - child, exactly.
  virtual int relation_to_previous_layer() const { return 0; }

  // Multi-class objectives (REBEL) search the root split jointly over the K-vector step: K > 1 here,
  // and root_vectors() returns per-sample fixed-point K-vectors v_n (w+_nk for k != y_n, w-_n in slot
  // y_n) for rows sorted by class. 0 (the default) means the root uses split_values(0, .).
  virtual std::size_t root_width() const { return 0; }
  virtual const std::int64_t* root_vectors() { return nullptr; }
  // Surrogates without a closed-form step (newton_root.hpp): root_vectors() then holds per-sample gradients
  // G_nk (fixed point, any rows) and this the per-sample curvatures h_nk (n x K, fixed point); the root
  // maximises the Newton gain, by a full scan. root_is_newton() says which root an objective wants.
  virtual bool root_is_newton() const { return false; }
  virtual const std::int64_t* root_curvatures() { return nullptr; }
};

struct GrowResult {
  Tree tree;                         // nodes only; the caller sets the step
  std::vector<std::int8_t> outputs;  // f(x_n) on the training samples
  std::int64_t bin_accumulations = 0;
  std::int32_t quick_nodes = 0;      // nodes searched with QuickBoost pruning
  std::int32_t full_nodes = 0;       // nodes searched by the full scan
  std::int32_t subtracted_nodes = 0; // of those, nodes whose histograms were parent - sibling
  std::int32_t features_pruned = 0;
  double mass90_fraction = -1.0;     // root: fraction of its rows holding 90 % of the split-value mass
  std::int32_t heavy_rebuilds = 0;   // times the pruned pass's cached heavy rows were rebuilt
  // When every row was searched with one set of values q (every layer's values those of the root: binary
  // losses), the fixed-point sums a binary step needs, over every participant: value_mass = sum_n |q_n| and
  // leaf_abs_sum = sum over the tree's leaves of |sum of q in the leaf|. The weight f gets right is then
  // (value_mass + leaf_abs_sum) / 2, with no pass over the rows (docs/distributed.md). -1: not known.
  std::int64_t value_mass = -1;
  std::int64_t leaf_abs_sum = 0;
  // This participant's rows reaching each node of the tree (a node's covers without sample weights).
  std::vector<std::int64_t> node_rows;
};

// Grows trees on one binned matrix; reuses its buffers across calls. Not thread-safe itself (it runs
// OpenMP inside), and its result does not depend on n_threads, on the quick mode, or on whether
// histograms are subtracted (`subtraction`, on by default; off only to check that it changes nothing).
class TreeGrower {
 public:
  // class_begin (K + 1 row offsets of the class blocks) is needed only by multi-class objectives.
  // reducer (null: a local fit): X holds one participant's rows of a distributed fit; every layer's
  // histograms, row counts and totals are summed over the participants before the search (one reduction
  // per layer; the pruned pass: three smaller ones, reduced_search.hpp), so every participant grows the
  // tree a local fit of all rows grows. Subtraction works on each participant's own histograms, so which
  // sibling is built stays a local choice.
  TreeGrower(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads,
             std::vector<std::size_t> class_begin = {}, QuickMode quick = QuickMode::kOff,
             QuickParams quick_params = {}, Criterion criterion = Criterion::kLoss, bool subtraction = true,
             Reducer* reducer = nullptr);

  // Layer 0 picks the best root split; each further layer splits every leaf (depth < max_depth)
  // whose best split strictly improves the loss at the current step, and re-chooses unsplit leaves'
  // values. Stops early when a layer splits nothing.
  // rows / features (optional, 1 = active): the subsampling heuristics (weight trimming, StochasticBoost,
  // LazyBoost). Inactive rows contribute nothing to the search; inactive features are not searched.
  GrowResult grow(SplitObjective& objective, int max_depth, const std::uint8_t* active_rows = nullptr,
                  const std::uint8_t* active_features = nullptr);

  // Once *stop is true (any thread may set it), grow() returns before its next layer: an unfinished tree
  // that the caller must drop. Null (the default): never.
  void set_stop_flag(const std::atomic<bool>* stop) { stop_ = stop; }

  // grow() charges its stages (split values, histograms, QuickBoost, leaf values, partition) to `clock`
  // (null, the default: nothing measured). Measuring never changes the tree.
  void set_stage_clock(util::StageClock* clock) { clock_ = clock; }

 private:
  // A leaf of the growing tree: its rows partition_[begin, end) and what is known of its histograms.
  struct Leaf {
    std::uint32_t node;
    std::size_t begin;
    std::size_t end;
    int hist = -1;         // pool buffer holding this leaf's histograms for the previous layer's values
    int parent_hist = -1;  // for a pair of new siblings (on the left one): the parent's buffer
    bool settled = false;  // searched without a split, values since then equal or negated: none to find
    // For a pair of new siblings (on the left one): the parent's index among the previous layer's leaves,
    // whose reduced histograms a distributed fit keeps (reduced_prev_), so only the left one is reduced.
    std::int32_t parent_slot = -1;
    std::int64_t sum = 0;  // sum of the previous layer's values in the leaf
    std::size_t rows() const { return end - begin; }
  };

  static constexpr std::size_t kNoLeaf = std::numeric_limits<std::size_t>::max();

  // How one layer obtains each open leaf's histograms and searches it (layer_plan.hpp).
  struct LayerPlan;

  void reset(GrowResult& result);
  bool grow_multiclass_root(SplitObjective& objective, GrowResult& result, const std::uint8_t* active_rows,
                            const std::uint8_t* active_features, bool last_layer);
  // The Newton root's split (newton_root.hpp) on the masked gradients v.
  RootSplit newton_root(SplitObjective& objective, const std::int64_t* v, std::size_t K,
                        const std::uint8_t* active_rows, const std::uint8_t* active_features);
  const std::int64_t* layer_values(SplitObjective& objective, int layer, const GrowResult& result,
                                   const std::uint8_t* active_rows, int& relation);
  LayerPlan plan_layer(int relation, bool last_layer, bool quick);
  struct LayerRows;
  // The values and row order a layer's jobs read (gathered when the partition is no longer the identity).
  LayerRows layer_rows(LayerPlan& plan, const std::int64_t* q);
  // Each job's leaves keep the pool buffers their histograms are in, for the next layer's subtraction.
  void keep_histograms(const LayerPlan& plan, GrowResult& result);
  void search_full(LayerPlan& plan, const std::int64_t* q, const std::uint8_t* active_features, GrowResult& result);
  // Parts each built leaf's rows are cut into when features alone leave threads idle (1: none).
  std::size_t row_parts(std::size_t n_active, int threads, std::size_t built_rows, std::size_t n_jobs) const;
  void build_parts(const LayerPlan& plan, const LayerRows& rows, std::size_t parts, int threads,
                   const std::uint8_t* active_features);
  // The distributed searches (reduced_search.cpp).
  std::vector<std::size_t> active_list(const std::uint8_t* active_features) const;
  void local_leaf_totals(const std::int64_t* q, std::int64_t* block, bool with_mass) const;
  void histogram_leaf_totals(const LayerPlan& plan, int layer, const std::int64_t* q, std::size_t per_leaf,
                             std::int64_t* block) const;
  // Layer 0's sum_n |q_n| over every participant (GrowResult::value_mass): a pass over the rows, or (a
  // distributed layer) read from the root's reduced mass.
  std::int64_t root_mass(const std::int64_t* q) const;
  void finish_step_sums(GrowResult& result, bool same_values) const;
  void count_node_rows(GrowResult& result) const;
  void read_leaf_totals(LayerPlan& plan, const std::int64_t* block, GrowResult& result, bool quick);
  void search_reduced(LayerPlan& plan, int layer, const std::int64_t* q, const std::uint8_t* active_features,
                      GrowResult& result);
  void build_local_histograms(LayerPlan& plan, const LayerRows& rows, const std::vector<std::size_t>& active,
                              std::int64_t* out, GrowResult& result);
  std::vector<std::size_t> reduced_leaves(const LayerPlan& plan) const;
  void complete_reduced(const LayerPlan& plan, const std::vector<std::size_t>& sent, const std::int64_t* message,
                        std::size_t per_leaf);
  std::int64_t heavy_subset(const Leaf& leaf, const std::int64_t* q, double share, std::vector<std::uint32_t>& rows,
                            std::vector<std::int64_t>& values) const;
  void local_bounds(const LayerPlan& plan, const std::int64_t* q, const std::vector<std::size_t>& active,
                    const std::int64_t* local, const std::int64_t* masses, std::int64_t* bounds, GrowResult& result);
  std::vector<std::int64_t> reduced_histograms(const LayerRows& rows, const std::vector<std::size_t>& active,
                                               const std::int64_t* local,
                                               const std::vector<std::pair<std::size_t, std::size_t>>& pairs,
                                               GrowResult& result);
  void search_reduced_pruned(LayerPlan& plan, int layer, const std::int64_t* q, const std::uint8_t* active_features,
                             GrowResult& result);
  RootSplit reduced_multiclass_root(const std::int64_t* v, std::size_t K, const std::uint8_t* active_features);
  void search_pruned(LayerPlan& plan, const std::int64_t* q, double mass90, const std::uint8_t* active_features,
                     GrowResult& result);
  bool apply_layer(LayerPlan& plan, const std::int64_t* q, GrowResult& result, bool last_layer);
  // Turns `leaf`'s node into a split node with children valued sign(left_sum) / sign(right_sum); returns the
  // partition step that sends its rows to them.
  RowPartition::Split split_node(GrowResult& result, const Leaf& leaf, const SplitInfo& s, double gain);

  // Rows [begin, end) of the partition and their values in that order (the identity needs no copy).
  std::size_t class_split(const Leaf& leaf) const;

  const data::BinnedMatrix& X_;
  const data::BinMapper& bins_;
  const std::atomic<bool>* stop_ = nullptr;
  util::StageClock* clock_ = nullptr;
  int n_threads_;
  std::vector<std::size_t> class_begin_;
  Criterion criterion_;
  bool subtraction_;
  Reducer* reducer_;
  PrunedSearch pruned_;
  ReducedQuickPolicy reduced_quick_;  // distributed fits: which pass each layer takes
  HistogramPool pool_;
  RowPartition partition_;
  std::vector<Leaf> leaves_;
  std::vector<std::int64_t> q_ordered_;  // split values in partition order (leaves built by gathering)
  std::vector<std::int64_t> q_masked_;   // split values with inactive rows zeroed
  std::vector<std::int64_t> v_masked_;   // root vectors with inactive rows zeroed
  std::vector<std::uint32_t> leaf_of_row_;  // pruned pass below the root: which leaf each row is in
  std::vector<std::int64_t> scratch_;    // per thread: one feature's histogram parts of an unstored leaf
  std::vector<std::int64_t> partial_;    // row parts x built leaves x features histograms (row_parts > 1)
  // Distributed fits: the last full-scan layer's reduced histograms, [leaf][active feature][stride] (empty
  // when the previous layer took another pass or the values changed), for search_reduced's siblings.
  std::vector<std::int64_t> reduced_prev_;
  std::vector<std::int64_t> reduced_;
  std::int64_t reduced_root_mass_ = -1;  // the root's mass from a distributed layer 0's reduction
};

}  // namespace rebelboost::tree
