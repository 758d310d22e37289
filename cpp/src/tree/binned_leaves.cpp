// A regression tree's leaf values by runs of rows (see binned_leaves.hpp).
#include "tree/binned_leaves.hpp"

#include <algorithm>

namespace rebelboost::tree {

namespace {

// Splits at most (so at most 32 leaves, depth 5): the cost per row grows with the splits. At depth 6 (63
// splits) it measured slower than scattering the leaves' values through the grower's partition.
constexpr std::size_t kMostSplits = 31;
// Rows per select() step: each split's leaf indices for the step stay in the first-level cache.
constexpr std::size_t kStep = 256;

// out[j] = the leaf index row j reaches from a split: its left child's (a) where the rule sends the row left,
// else its right child's (b). A child that is a leaf has one index for every row (a_leaf, b_leaf), a split
// one per row. Byte arithmetic without branches, so the loop vectorises.
template <bool kLeftLeaf, bool kRightLeaf>
void select_step(const std::uint8_t* codes, std::size_t n, std::uint8_t bin, std::uint8_t missing, bool nan_left,
                 const std::uint8_t* a, std::uint8_t a_leaf, const std::uint8_t* b, std::uint8_t b_leaf,
                 std::uint8_t* out) {
  const auto nan_mask = static_cast<std::uint8_t>(nan_left ? 0xFF : 0);
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint8_t c = codes[j];
    const auto is_missing = static_cast<std::uint8_t>(c == missing ? 0xFF : 0);
    const auto below = static_cast<std::uint8_t>(c <= bin ? 0xFF : 0);
    const auto left = static_cast<std::uint8_t>((below & ~is_missing) | (is_missing & nan_mask));  // Rule::left
    const std::uint8_t l = kLeftLeaf ? a_leaf : a[j], r = kRightLeaf ? b_leaf : b[j];
    out[j] = static_cast<std::uint8_t>((l & left) | (r & ~left));
  }
}

}  // namespace

BinnedLeaves::BinnedLeaves(const RegressionTree& tree, const data::BinnedMatrix& X)
    : missing_(tree.missing_bin) {
  // Slots in node order: a split's children come after it (the growers append them).
  std::vector<std::uint32_t> slot(tree.nodes.size());
  for (std::size_t k = 0; k < tree.nodes.size(); ++k) {
    const RegressionNode& n = tree.nodes[k];
    slot[k] = n.feature < 0 ? kLeaf | static_cast<std::uint32_t>(values_.size()) : static_cast<std::uint32_t>(splits_.size());
    if (n.feature < 0) values_.push_back(n.value);
    else splits_.push_back({X.column(static_cast<std::size_t>(n.feature)), static_cast<std::uint8_t>(n.bin), n.nan_left, n.left, n.right});
  }
  for (Split& s : splits_) {
    s.left = slot[s.left];
    s.right = slot[s.right];
  }
}

bool BinnedLeaves::fits(const RegressionTree& tree) {
  std::size_t splits = 0;
  for (const RegressionNode& n : tree.nodes) splits += n.feature >= 0 ? 1 : 0;
  return splits <= kMostSplits;
}

void BinnedLeaves::values(std::size_t begin, std::size_t end, double* f) const {
  if (splits_.empty()) {
    std::fill(f, f + (end - begin), values_.empty() ? 0.0 : values_[0]);
    return;
  }
  for (std::size_t b = begin; b < end; b += kStep) select(b, std::min(end, b + kStep), f + (b - begin));
}

// Each split's leaf index for every row of the step, from the last split up to the root.
void BinnedLeaves::select(std::size_t begin, std::size_t end, double* f) const {
  std::uint8_t ids[kMostSplits][kStep];
  const std::size_t n = end - begin;
  for (std::size_t k = splits_.size(); k-- > 0;) {
    const Split& s = splits_[k];
    const bool left_leaf = (s.left & kLeaf) != 0, right_leaf = (s.right & kLeaf) != 0;
    const auto a_leaf = static_cast<std::uint8_t>(s.left), b_leaf = static_cast<std::uint8_t>(s.right);
    const std::uint8_t* a = left_leaf ? nullptr : ids[s.left];
    const std::uint8_t* b = right_leaf ? nullptr : ids[s.right];
    const std::uint8_t* codes = s.column + begin;
    if (left_leaf && right_leaf) select_step<true, true>(codes, n, s.bin, missing_, s.nan_left, a, a_leaf, b, b_leaf, ids[k]);
    else if (left_leaf) select_step<true, false>(codes, n, s.bin, missing_, s.nan_left, a, a_leaf, b, b_leaf, ids[k]);
    else if (right_leaf) select_step<false, true>(codes, n, s.bin, missing_, s.nan_left, a, a_leaf, b, b_leaf, ids[k]);
    else select_step<false, false>(codes, n, s.bin, missing_, s.nan_left, a, a_leaf, b, b_leaf, ids[k]);
  }
  for (std::size_t j = 0; j < n; ++j) f[j] = values_[ids[0][j]];
}

}  // namespace rebelboost::tree
