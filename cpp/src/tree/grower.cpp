// Layer-wise tree growth: histograms per (leaf, feature), exact integer split search, partition.
#include "tree/grower.hpp"

#include <algorithm>
#include <numeric>

#include "tree/histogram.hpp"
#include "tree/split.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

namespace {

std::int8_t sign_or(std::int64_t v, std::int8_t fallback) {
  return v > 0 ? std::int8_t{1} : (v < 0 ? std::int8_t{-1} : fallback);
}

}  // namespace

TreeGrower::TreeGrower(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads)
    : X_(X), bins_(bins), n_threads_(n_threads) {
  order_.resize(X.n_samples);
  scratch_.resize(X.n_samples);
  q_.resize(X.n_samples);
  q_ordered_.resize(X.n_samples);
}

GrowResult TreeGrower::grow(SplitObjective& objective, int max_depth) {
  const std::size_t n = X_.n_samples;
  const std::size_t n_features = X_.n_features;
  const int missing = bins_.missing_bin();

  GrowResult result;
  result.outputs.assign(n, 1);
  Node root;
  root.value = 1;
  result.tree.nodes.push_back(root);
  std::iota(order_.begin(), order_.end(), 0u);
  std::vector<Leaf> leaves{{0, 0, n, 0}};

  for (int layer = 0; layer < max_depth; ++layer) {
    objective.split_values(layer, result.outputs.data(), q_.data());

    std::vector<std::size_t> open;  // leaves that may split in this layer
    for (std::size_t l = 0; l < leaves.size(); ++l)
      if (leaves[l].depth < max_depth && leaves[l].end - leaves[l].begin >= 2) open.push_back(l);

    // Node sums decide the value of leaves that do not split.
    std::vector<std::int64_t> leaf_sum(leaves.size(), 0);
    for (std::size_t l = 0; l < leaves.size(); ++l)
      for (std::size_t i = leaves[l].begin; i < leaves[l].end; ++i) leaf_sum[l] += q_[order_[i]];

    const bool identity_order = layer == 0;
    if (!identity_order)
      for (std::size_t i = 0; i < n; ++i) q_ordered_[i] = q_[order_[i]];

    // best[o * n_features + f]: best split of open leaf o on feature f.
    std::vector<SplitInfo> best(open.size() * n_features);
    util::parallel_for(static_cast<std::ptrdiff_t>(n_features), n_threads_, [&](std::ptrdiff_t fi) {
      const std::size_t f = static_cast<std::size_t>(fi);
      const std::uint8_t* column = X_.column(f);
      const int n_value_bins = bins_.n_value_bins(f);
      alignas(64) std::int64_t hist[kHistBins];
      for (std::size_t o = 0; o < open.size(); ++o) {
        const Leaf& leaf = leaves[open[o]];
        std::fill(hist, hist + kHistBins, 0);
        if (identity_order) {
          accumulate(column + leaf.begin, q_.data() + leaf.begin, leaf.end - leaf.begin, hist);
        } else {
          accumulate_gather(column, order_.data() + leaf.begin, q_ordered_.data() + leaf.begin,
                            leaf.end - leaf.begin, hist);
        }
        best[o * n_features + f] = best_split(hist, n_value_bins, missing, static_cast<std::int32_t>(f));
      }
    });
    for (std::size_t o = 0; o < open.size(); ++o)
      result.bin_accumulations += static_cast<std::int64_t>((leaves[open[o]].end - leaves[open[o]].begin) * n_features);

    // Re-choose every leaf's value for the current step, then apply the winning splits.
    for (std::size_t l = 0; l < leaves.size(); ++l) {
      Node& node = result.tree.nodes[leaves[l].node];
      node.value = sign_or(leaf_sum[l], node.value);
    }
    std::vector<Leaf> next;
    bool any_split = false;
    std::vector<bool> splits(leaves.size(), false);
    std::vector<SplitInfo> chosen(leaves.size());
    for (std::size_t o = 0; o < open.size(); ++o) {
      SplitInfo winner;
      for (std::size_t f = 0; f < n_features; ++f) {
        const SplitInfo& s = best[o * n_features + f];
        if (s.found() && (!winner.found() || better(s, winner))) winner = s;
      }
      if (winner.found()) {
        splits[open[o]] = true;
        chosen[open[o]] = winner;
        any_split = true;
      }
    }
    if (!any_split) {
      for (const Leaf& leaf : leaves) {
        const std::int8_t v = result.tree.nodes[leaf.node].value;
        for (std::size_t i = leaf.begin; i < leaf.end; ++i) result.outputs[order_[i]] = v;
      }
      break;
    }
    for (std::size_t l = 0; l < leaves.size(); ++l) {
      const Leaf leaf = leaves[l];
      if (!splits[l]) {
        next.push_back(leaf);
        const std::int8_t v = result.tree.nodes[leaf.node].value;
        for (std::size_t i = leaf.begin; i < leaf.end; ++i) result.outputs[order_[i]] = v;
        continue;
      }
      const SplitInfo& s = chosen[l];
      const auto left_id = static_cast<std::uint32_t>(result.tree.nodes.size());
      Node left_node, right_node;
      left_node.value = sign_or(s.left_sum, 1);
      right_node.value = sign_or(s.right_sum, -1);
      result.tree.nodes.push_back(left_node);
      result.tree.nodes.push_back(right_node);
      Node& node = result.tree.nodes[leaf.node];
      node.feature = s.feature;
      node.threshold = bins_.threshold(static_cast<std::size_t>(s.feature), s.bin);
      node.nan_left = s.nan_left ? 1 : 0;
      node.left = left_id;
      node.right = left_id + 1;
      node.gain = static_cast<double>(s.score - abs64(leaf_sum[l])) / (2.0 * kFixedPointScale);
      node.value = 0;

      // Stable partition of the leaf's samples: left block, then right block.
      const std::uint8_t* column = X_.column(static_cast<std::size_t>(s.feature));
      const auto bin = static_cast<std::uint8_t>(s.bin);
      std::size_t n_left = 0, n_right = 0;
      const std::size_t len = leaf.end - leaf.begin;
      for (std::size_t i = leaf.begin; i < leaf.end; ++i) {
        const std::uint32_t row = order_[i];
        const std::uint8_t code = column[row];
        const bool go_left = code == missing ? s.nan_left : code <= bin;
        if (go_left) {
          order_[leaf.begin + n_left++] = row;
        } else {
          scratch_[n_right++] = row;
        }
      }
      std::copy(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(n_right),
                order_.begin() + static_cast<std::ptrdiff_t>(leaf.begin + n_left));
      (void)len;
      const std::size_t mid = leaf.begin + n_left;
      for (std::size_t i = leaf.begin; i < mid; ++i) result.outputs[order_[i]] = left_node.value;
      for (std::size_t i = mid; i < leaf.end; ++i) result.outputs[order_[i]] = right_node.value;
      next.push_back({left_id, leaf.begin, mid, leaf.depth + 1});
      next.push_back({left_id + 1, mid, leaf.end, leaf.depth + 1});
    }
    leaves = std::move(next);
  }
  return result;
}

}  // namespace rebelboost::tree
