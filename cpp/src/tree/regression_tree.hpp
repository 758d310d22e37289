// Regression trees grown by the variance criterion (docs/quickboost.md), layer by layer to a depth, with
// real-valued leaves: the building block of a gradient-boosting regressor. Each row n carries s_n = w_n r_n
// and t_n = w_n in fixed point (r_n the target or residual, w_n its weight); a leaf's value is S / W, the
// weighted mean of its rows. Every node's split is the full scan's (best_split_variance over features by
// the one tie rule), found by the full scan or by QuickBoost's pruned pass: the same tree either way, for
// any thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "tree/quick_prune.hpp"

namespace rebelboost::tree {

struct RegressionNode {
  std::int32_t feature = -1;  // -1: a leaf
  std::int32_t bin = -1;      // value bins 0..bin go left
  bool nan_left = false;
  std::uint32_t left = 0, right = 0;
  double value = 0.0;         // leaves: S / W (0 for a leaf without weight)
  double gain = 0.0;          // splits: half the decrease of the weighted squared error (fixed-point units)
  std::int64_t weight = 0;    // W of the node's rows (VarianceGrower only)
};

struct RegressionTree {
  std::vector<RegressionNode> nodes;  // nodes[0] is the root
  QuickWork work;                     // histogram adds and features pruned
  std::int32_t quick_nodes = 0;       // VarianceGrower only: nodes searched by the pruned pass
  std::int32_t full_nodes = 0;        // and nodes searched by the full scan
  std::uint8_t missing_bin = 0;       // the bin code of NaN
  // The leaf value of a row of the binned training matrix.
  double output(const data::BinnedMatrix& X, std::size_t row) const;
};

// Grows a tree of depth at most max_depth on rows with s, t (t >= 0; s = 0 where t = 0). A node splits
// when some split strictly lowers the weighted squared error and it holds at least 2 rows. quick: search
// every node with the pruned pass (true) or the full scan (false).
RegressionTree grow_regression_tree(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* s,
                                    const std::int64_t* t, int max_depth, bool quick, int n_threads,
                                    const QuickParams& params = {});

}  // namespace rebelboost::tree
