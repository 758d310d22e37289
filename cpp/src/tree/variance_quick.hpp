// QuickBoost inside the regressor's layer-wise grower (docs/quickboost.md, "The regressor's layers"): which
// layers take the pruned pass (quick False / True / "auto"), and the pruned search of one leaf by the
// variance bound of quick_impurity.hpp, whose split is the full scan's bit for bit.
//
// A layer is one decision, as in TreeGrower: its leaves are searched either from full histograms (built,
// or the parent's minus the sibling's) or by the pruned pass, which completes only the features that can
// still win. A pruned leaf therefore leaves no histograms to subtract from: after a pruned layer, a full
// layer builds both children of each pair from their rows, and subtraction resumes below them.
// quick=True prunes every layer. quick="auto" decides once per tree, for the root only: below it the full
// scan with subtraction reads at most half the rows per layer, which the pruned pass rarely beats (measured:
// bench/quick_criteria.py), and a pruned layer costs the next one its subtraction. Auto compares whole trees
// (the root's search and the direct build of its children included), so a probe's full cost is counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "tree/node_search.hpp"
#include "tree/quick_impurity.hpp"
#include "tree/quick_prune.hpp"
#include "tree/split.hpp"

namespace rebelboost::tree {

class VarianceQuick {
 public:
  VarianceQuick(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads, QuickMode mode,
                QuickParams params);

  QuickMode mode() const { return mode_; }

  // Whether `layer`'s leaves take the pruned pass. kOn: always; kOff: never; kAuto: the root only, from its
  // mass concentration (share of its rows, listed in rows or 0..n_rows-1 when rows is null, holding 90 % of
  // sum s^2 / t) and the tree times measured so far (QuickChooser).
  bool choose(int layer, const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* s, const std::int64_t* t,
              const std::uint8_t* active_features);
  // A grown tree's time, with its root pruned or not (auto learns from it).
  void record(bool quick_root, double seconds);

  // Whether a leaf of n_rows rows is worth the pruned pass in a pruned layer (else its histograms are built
  // in scratch space and scanned: the same split, cheaper for small leaves).
  bool worth_pruning(std::size_t n_rows, const std::uint8_t* active_features) const;

  // The best split of the leaf whose rows are listed (any order), as best_split_variance over its full
  // histograms with min_side_weight gives it by the one tie rule (found() false when no split strictly
  // lowers its weighted squared error). OpenMP inside; the split does not depend on n_threads.
  SplitInfo search(const std::uint32_t* rows, std::size_t n_rows, const std::int64_t* s, const std::int64_t* t,
                   std::int64_t min_side_weight, const std::uint8_t* active_features, QuickWork& work);

 private:
  const data::BinnedMatrix& X_;
  const data::BinMapper& bins_;
  int n_threads_;
  QuickMode mode_;
  QuickParams params_;
  QuickChooser chooser_;
  std::vector<double> quotients_;         // s^2 / t of a searched leaf's rows, by position
  std::vector<std::int64_t> mass_;        // per row (only a searched leaf's rows are set)
  std::vector<std::int64_t> sample_;      // choose(): masses of a strided sample of rows
  std::vector<std::uint32_t> sample_rows_;
  ImpurityScratch scratch_;               // the pruned pass's working memory, kept across leaves
};

}  // namespace rebelboost::tree
