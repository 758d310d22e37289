// The plan of one layer of TreeGrower (how each open leaf obtains its histograms) and where the leaves it
// builds read their rows: shared by the local searches (grower.cpp) and the distributed ones
// (reduced_search.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tree/grower.hpp"
#include "tree/histogram.hpp"

namespace rebelboost::tree {

// One histogram job of a layer: leaf `leaf` is built from its rows; for a pair of siblings, `large` (the
// other one, with at least as many rows) is then the parent's histograms (relation x parent) minus it.
struct TreeGrower::LayerPlan {
  struct Job {
    std::size_t leaf;
    std::size_t large = kNoLeaf;
    int buffer = -1;        // pool buffer for `leaf`, or -1: per-thread scratch (not kept)
    int large_buffer = -1;  // the parent's buffer, which becomes `large`'s
  };
  std::vector<Job> jobs;
  std::vector<std::uint8_t> searched;  // per leaf: searched in this layer
  std::vector<SplitInfo> best;         // per leaf x feature (full scan) or per leaf x 1 (pruned pass)
  std::vector<std::int64_t> total;     // per leaf: sum of this layer's values
  bool totals_complete = false;        // total holds every leaf's sum (a distributed layer's reduction)
  int relation = 0;
  bool quick = false;
  std::size_t built_rows = 0;          // rows read by histogram builds
};

// Where a layer's built leaves read their rows: the values in partition order (or q itself while the
// order is the identity), and for Gini where each leaf's class-1 rows start.
struct TreeGrower::LayerRows {
  const std::int64_t* values;
  const std::uint32_t* order;  // null: the identity
  std::vector<std::size_t> class_split;

  void add(const data::BinnedMatrix& X, std::size_t f, std::size_t begin, std::size_t end, std::int64_t* h) const {
    if (begin >= end) return;
    if (order) accumulate_gather(X.column(f), order + begin, values + begin, end - begin, h);
    else accumulate(X.column(f) + begin, values + begin, end - begin, h);
  }
  // Part `part` of `parts` equal blocks of leaf l's rows added into h (Gini: class 0, then class 1).
  void add_part(const data::BinnedMatrix& X, std::size_t f, const Leaf& leaf, std::size_t l, bool gini,
                std::size_t part, std::size_t parts, std::int64_t* h) const {
    const std::size_t b0 = leaf.begin + leaf.rows() * part / parts, b1 = leaf.begin + leaf.rows() * (part + 1) / parts;
    if (!gini) return add(X, f, b0, b1, h);
    const std::size_t split = class_split[l];
    add(X, f, b0, std::min(b1, split), h);
    add(X, f, std::max(b0, split), b1, h + kHistBins);
  }
};

}  // namespace rebelboost::tree
