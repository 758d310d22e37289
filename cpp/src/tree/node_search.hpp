// Finding one node's best split: from its histograms (the full scan) or by the pruned pass
// (QuickBoost), and the policy that picks between the two per layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "tree/multiclass_split.hpp"
#include "tree/quick_impurity.hpp"
#include "tree/quick_prune.hpp"
#include "tree/split.hpp"

namespace rebelboost::tree {

// Split criterion of the scalar layers: the loss itself (|L| + |R|, i.e. weighted error for the binary
// losses), or the weighted Gini impurity or entropy of the split values (as scikit-learn's trees). The
// impurities need rows sorted by class with class_begin = {0, n_0, n} and one sign of q per class (the
// binary losses): the two classes' histograms then give the signed sum S and the weight T = |S_0| + |S_1|
// per bin.
enum class Criterion { kLoss, kGini, kEntropy };

inline bool is_impurity(Criterion c) { return c != Criterion::kLoss; }

// Whether node searches prune features (QuickBoost). Every mode gives the same tree bit for bit.
enum class QuickMode { kOff, kOn, kAuto };

// TrainParams::quick (checked: 0 off, 1 on, 2 auto) as a mode.
inline QuickMode quick_mode_of(int quick) {
  return quick == 0 ? QuickMode::kOff : quick == 1 ? QuickMode::kOn : QuickMode::kAuto;
}

// Histogram parts per feature a criterion needs: 1 (q) or 2 (impurities: class 0's q, class 1's q).
inline int histogram_parts(Criterion c) { return is_impurity(c) ? 2 : 1; }

// Best split of `feature` from its histogram parts (see histogram_parts). found() is false unless a split
// strictly improves the node.
SplitInfo feature_split(const std::int64_t* parts, Criterion criterion, int n_value_bins, int missing_bin,
                        std::int32_t feature);

// Sum of the split values of a node from one feature's histogram parts.
std::int64_t histogram_total(const std::int64_t* parts, Criterion criterion);

// Picks the full scan or the pruned pass per layer from measured cost per node row of each (kAuto). Probes
// the pass it is not using with a backoff, and re-probes a losing pruned pass only while such probes have
// cost under 1 % of the time spent so far, so auto stays within about 1 % of the better pass. Which pass
// runs never changes the tree.
class QuickChooser {
 public:
  // `most_spread`: above this share of the rows holding 90 % of the mass, pruning is not even probed.
  bool use_quick(double mass90_fraction, double most_spread = 0.5);
  // A layer's time. `invested`: the part of it spent on state that later layers reuse (the heavy-row
  // cache), counted in the time spent but not in the pass's cost per row: a pruned probe that builds the
  // cache would otherwise look several times dearer than the pass it measures.
  void record(bool quick, double seconds, std::size_t node_rows, double invested = 0.0);

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

// The pruned pass and its policy for one training matrix, kept across trees: the per-layer choice
// (QuickMode), the chooser's measurements (root and deeper layers apart: contiguous and gathered rows cost
// differently) and the cache of heavy rows that serves as the first subset.
class PrunedSearch {
 public:
  PrunedSearch(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads, QuickMode mode,
               QuickParams params, Criterion criterion = Criterion::kLoss);

  QuickMode mode() const { return mode_; }
  const QuickParams& params() const { return params_; }

  // Whether the open leaves of `layer` (all of them: one decision per layer) take the pruned pass, from the
  // mass concentration of the largest one (its rows and values q). Also returns that concentration.
  bool choose(int layer, const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* q,
              const std::uint8_t* active_features, double& mass90_fraction);
  // The time the full scan took for `node_rows` rows of `layer` (auto mode learns from it).
  void record(int layer, bool quick, double seconds, std::size_t node_rows);

  // Before searching a layer's leaves with the pruned pass: refreshes the heavy-row cache for values q.
  // leaf_of_row (null at the root, where every row is in the one leaf) names each row's leaf.
  void prepare_layer(const std::int64_t* q, double mass90_fraction, const std::uint32_t* leaf_of_row,
                     std::int32_t& heavy_rebuilds);

  // The best split of leaf `leaf` (rows, values q by row): identical to the best over features of
  // feature_split() on its full histograms. Also returns the leaf's value sum.
  SplitInfo search(std::uint32_t leaf, const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* q,
                   const std::uint8_t* active_features, QuickWork& work, std::int64_t& total);

  // REBEL's joint root split, pruned or full by the same policy (v: root vectors, see multiclass_split.hpp).
  RootSplit root(const std::int64_t* v, std::size_t K, const std::vector<std::size_t>& class_begin,
                 const std::uint8_t* active_features, QuickWork& work, bool& quick, double& mass90_fraction);

 private:
  // search() for the impurity criteria (`cached`: the heavy rows serve as subset 0).
  SplitInfo search_impurity(const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* q,
                            const std::uint8_t* active_features, QuickWork& work, std::int64_t& total, bool cached);
  // Whether auto may consider pruning a node of this size at all.
  bool worth_pruning(std::size_t node_rows, const std::uint8_t* active_features) const;

  const data::BinnedMatrix& X_;
  const data::BinMapper& bins_;
  int n_threads_;
  QuickMode mode_;
  QuickParams params_;
  Criterion criterion_;
  QuickChooser chooser_[2];
  QuickScratch scratch_;
  ImpurityScratch impurity_scratch_;  // Gini's and entropy's pruned pass
  HeavyRows heavy_;
  double build_seconds_ = 0.0;  // spent building heavy_ since the last record()
  const std::uint32_t* leaf_of_row_ = nullptr;
  std::vector<std::uint32_t> identity_rows_;   // 0..n-1
  std::vector<std::int64_t> heavy_q_;          // a leaf's values on the cached rows (0 outside the leaf)
  std::vector<std::uint32_t> heavy_rows_;      // a leaf's rows heaviest first
  std::vector<std::int64_t> heavy_values_;
  std::vector<std::int64_t> root_mass_;        // REBEL root: each row's mass
  std::vector<std::int64_t> abs_q_;            // impurity criteria: |q| by row (the weights t)
  std::vector<std::int64_t> heavy_abs_;        // |heavy_q_|
};

}  // namespace rebelboost::tree
