// Greedy layer-wise growth of a depth-D tree with +-1 leaves (thesis §4.4, DESIGN "Trees").
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "rebelboost/model.hpp"
#include "tree/quick_prune.hpp"
#include "tree/split.hpp"

namespace rebelboost::tree {

// What the grower asks of a loss: per-sample split values for one layer.
class SplitObjective {
 public:
  virtual ~SplitObjective() = default;
  // Returns q[n] = fixed-point g_n = l_n(-1) - l_n(+1) for layer `layer` (0 = the root split, where the
  // step is free; deeper layers hold the step of the current tree `f` (f[n] in {+1,-1}) fixed). The
  // array belongs to the objective and stays valid until its next non-const call.
  virtual const std::int64_t* split_values(int layer, const std::int8_t* f) = 0;

  // Multi-class objectives (REBEL) search the root split jointly over the K-vector step: K > 1 here,
  // and root_vectors() returns per-sample fixed-point K-vectors v_n (w+_nk for k != y_n, w-_n in slot
  // y_n) for rows sorted by class. 0 (the default) means the root uses split_values(0, .).
  virtual std::size_t root_width() const { return 0; }
  virtual const std::int64_t* root_vectors() { return nullptr; }
};

struct GrowResult {
  Tree tree;                         // nodes only; the caller sets the step
  std::vector<std::int8_t> outputs;  // f(x_n) on the training samples
  std::int64_t bin_accumulations = 0;
  std::int32_t quick_nodes = 0;      // nodes searched with QuickBoost pruning
  std::int32_t full_nodes = 0;       // nodes searched by the full scan
  std::int32_t features_pruned = 0;
  double mass90_fraction = -1.0;     // root: fraction of its rows holding 90 % of the split-value mass
  std::int32_t heavy_rebuilds = 0;   // times the pruned pass's cached heavy rows were rebuilt
};

// Split criterion of the scalar layers: the loss itself (|L| + |R|, i.e. weighted error for the binary
// losses) or the weighted Gini impurity of the split values (as scikit-learn's trees). Gini needs rows
// sorted by class with class_begin = {0, n_0, n} and one sign of q per class (the binary losses): the
// two classes' histograms then give the signed sum S and the weight T = |S_0| + |S_1| per bin at the cost
// of one histogram.
enum class Criterion { kLoss, kGini };

// Whether node searches prune features (QuickBoost). Every mode gives the same tree bit for bit.
enum class QuickMode { kOff, kOn, kAuto };

// Picks the full scan or the pruned pass per node from measured cost per node row of each (kAuto). Probes
// the pass it is not using with a backoff, and re-probes a losing pruned pass only while such probes have
// cost under 1 % of the time spent so far, so auto stays within about 1 % of the better pass.
class QuickChooser {
 public:
  bool use_quick(double mass90_fraction);
  void record(bool quick, double seconds, std::size_t node_rows);

 private:
  double full_cost_ = -1.0;   // seconds per node row
  double quick_cost_ = -1.0;
  int since_quick_probe_ = 0;
  int quick_probe_interval_ = 8;
  int since_full_probe_ = 0;
  double mass_at_quick_probe_ = 1.0;
  double total_seconds_ = 0.0;  // time recorded in these layers, either pass
  double probe_excess_ = 0.0;   // time the pruned pass took beyond the full scan's estimate
};

// Grows trees on one binned matrix; reuses its buffers across calls. Not thread-safe itself (it runs
// OpenMP over features inside), and its result does not depend on n_threads.
class TreeGrower {
 public:
  // class_begin (K + 1 row offsets of the class blocks) is needed only by multi-class objectives.
  TreeGrower(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads,
             std::vector<std::size_t> class_begin = {}, QuickMode quick = QuickMode::kOff,
             QuickParams quick_params = {}, Criterion criterion = Criterion::kLoss);

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

 private:
  struct Leaf {
    std::uint32_t node;
    std::size_t begin;
    std::size_t end;
    int depth;
  };

  // Turns `leaf` into a split node with children valued sign(left_sum) / sign(right_sum); writes the
  // children's values into result.outputs and, unless last_layer, partitions the leaf's rows and
  // returns the two child leaves.
  std::vector<Leaf> split_leaf(GrowResult& result, const Leaf& leaf, const SplitInfo& s, double gain,
                               bool identity, bool last_layer);

  // Keeps heavy_ holding most of the |q| mass of the layer: rebuilds it (the heaviest rows up to 95 % of
  // the mass) when it holds less than 85 %, or is far larger than the rows holding 90 %.
  void refresh_heavy(const std::int64_t* q, double mass90_fraction);

  // Whether auto may consider pruning a node of this size at all (see grower.cpp).
  bool worth_pruning(std::size_t node_rows, const std::uint8_t* active_features) const;

  const data::BinnedMatrix& X_;
  const data::BinMapper& bins_;
  const std::atomic<bool>* stop_ = nullptr;
  int n_threads_;
  std::vector<std::size_t> class_begin_;
  Criterion criterion_;
  QuickMode quick_;
  QuickParams quick_params_;
  QuickChooser chooser_[2];  // root (contiguous rows) and deeper nodes (gathered rows) cost differently
  QuickScratch quick_scratch_;
  HeavyRows heavy_;                           // cached first subset of the pruned pass, kept across calls
  std::vector<std::int64_t> heavy_q_;         // a node's values on the cached rows (0 outside the node)
  std::vector<std::uint32_t> leaf_of_row_;    // layer >= 1: which leaf each row is in
  std::int64_t heavy_rebuilds_ = 0;
  std::vector<std::uint32_t> identity_rows_;  // 0..n-1, the root's rows for the pruned pass
  std::vector<std::uint32_t> heavy_rows_;     // a node's rows heaviest first
  std::vector<std::int64_t> heavy_values_;
  std::vector<std::uint32_t> order_;    // sample indices grouped by leaf
  std::vector<std::uint32_t> scratch_;  // partition buffer
  std::vector<std::int64_t> q_ordered_; // split values in order_ order (layers >= 1)
  std::vector<std::int64_t> q_masked_;  // split values with inactive rows zeroed
  std::vector<std::int64_t> v_masked_;  // root vectors with inactive rows zeroed
};

}  // namespace rebelboost::tree
