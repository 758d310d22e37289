// Batch prediction: OpenMP over blocks of rows, trees evaluated on raw values.
#include "rebelboost/predict.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

namespace rebelboost {

namespace {

constexpr std::size_t kRowBlock = 256;

template <typename T>
void check_columns(const Model& model, const MatrixView<T>& X) {
  if (X.n_cols != model.n_features)
    throw InvalidArgument("X has " + std::to_string(X.n_cols) + " features, but the model expects " +
                          std::to_string(model.n_features));
}

std::ptrdiff_t n_blocks(std::size_t n_rows) { return static_cast<std::ptrdiff_t>((n_rows + kRowBlock - 1) / kRowBlock); }

// Trees as complete binary trees in level order, evaluated without branches: a tree of depth d has
// 2^d - 1 splits and 2^d leaves; the walk is d steps of i = 2 i + 1 + (x goes right), so the data-dependent
// direction never becomes a (mispredicted) branch and the rows of a block overlap in the pipeline. A
// leaf above depth d becomes splits that send everything left (threshold +inf, NaN left) over copies of
// the leaf, so every row reaches a leaf with the value the node walk gives. Only the trees for which this
// is cheap are flattened (plan()); the others keep the node walk, so the memory a prediction allocates
// stays within kFlatBlowup times the model's own nodes whatever shape of trees a file holds.
class FlatForest {
 public:
  // depths[i]: Tree::depth() of tree first + i if it is flattened, kWalk if it keeps the node walk.
  FlatForest(const Model& model, std::size_t first, const std::vector<int>& depths) : trees_(depths.size()) {
    std::size_t n_splits = 0, n_leaves = 0;
    for (std::size_t i = 0; i < depths.size(); ++i) {
      const int d = depths[i];
      trees_[i] = {d, n_splits, n_leaves};
      if (d == kWalk) continue;
      n_splits += (std::size_t{1} << d) - 1;
      n_leaves += std::size_t{1} << d;
    }
    feature_.assign(n_splits, 0);
    threshold_.assign(n_splits, std::numeric_limits<double>::infinity());
    nan_left_.assign(n_splits, 1);
    leaf_.assign(n_leaves, 0);
    for (std::size_t i = 0; i < depths.size(); ++i)
      if (depths[i] != kWalk) fill(model.trees[first + i], trees_[i], 0, 0, 0);
  }

  // One tree's arrays: f_t(x) in {+1, -1} for the row whose feature j is at row[j * stride].
  struct View {
    int depth;
    const std::int32_t* feature;
    const double* threshold;
    const std::uint8_t* nan_left;
    const std::int8_t* leaf;
    std::size_t first_leaf;  // 2^depth - 1: the level-order position of leaf 0

    // One level down from split i: 2 i + 1 (left) or 2 i + 2 (right), without a branch.
    template <typename T>
    std::size_t next(std::size_t i, const T* row, std::ptrdiff_t stride) const {
      const T v = row[static_cast<std::ptrdiff_t>(feature[i]) * stride];
      const unsigned left =
          static_cast<unsigned>(static_cast<double>(v) <= threshold[i]) | (static_cast<unsigned>(v != v) & nan_left[i]);
      return 2 * i + 2 - left;
    }

    template <typename T>
    int output(const T* row, std::ptrdiff_t stride) const {
      std::size_t i = 0;
      for (int level = 0; level < depth; ++level) i = next(i, row, stride);
      return leaf[i - first_leaf];
    }

    // The same for kLanes rows at once, level by level: the rows' independent walks interleave.
    template <typename T>
    void outputs(const T* const* rows, std::ptrdiff_t stride, int* out) const {
      std::size_t i[kLanes] = {};
      for (int level = 0; level < depth; ++level)
        for (std::size_t j = 0; j < kLanes; ++j) i[j] = next(i[j], rows[j], stride);
      for (std::size_t j = 0; j < kLanes; ++j) out[j] = leaf[i[j] - first_leaf];
    }
  };
  static constexpr std::size_t kLanes = 8;
  static constexpr int kWalk = -1;

  // Whether the i-th tree of the range (first + i) was flattened.
  bool flat(std::size_t i) const { return i < trees_.size() && trees_[i].depth != kWalk; }

  View tree(std::size_t i) const {
    const Entry& e = trees_[i];
    const std::size_t first_leaf = (std::size_t{1} << e.depth) - 1;
    return {e.depth, feature_.data() + e.split_offset, threshold_.data() + e.split_offset,
            nan_left_.data() + e.split_offset, leaf_.data() + e.leaf_offset, first_leaf};
  }

  // Per tree of [first, first + n_trees): its depth if flattening it pays for n_rows rows and costs at
  // most kFlatBlowup times its own node count, else kWalk; empty when no tree is flattened. Building
  // writes ~2^(d+1) entries per tree, the walk it replaces costs a few ns per level and row, so deep or
  // lopsided trees (a depth-12 chain of 25 nodes would take 8 191 entries) keep the walk, and so does a
  // handful of rows (not even the depths are worth computing for them).
  static std::vector<int> plan(const Model& model, std::size_t first, std::size_t n_trees, std::size_t n_rows) {
    if (n_rows < kMinFlatRows || n_trees == 0) return {};
    std::vector<int> depths(n_trees, kWalk);
    bool any = false;
    for (std::size_t i = 0; i < n_trees; ++i) {
      const Tree& tree = model.trees[first + i];
      const int d = tree.depth();
      const std::size_t complete = (std::size_t{2} << std::min(d, kMaxFlatDepth)) - 1;
      const bool cheap = d <= kMaxFlatDepth && complete <= kFlatBlowup * tree.nodes.size();
      const bool pays = n_rows * 4 * static_cast<std::size_t>(std::max(d, 1)) >= complete + 1;
      if (cheap && pays) {
        depths[i] = d;
        any = true;
      }
    }
    if (!any) return {};
    return depths;
  }

  static constexpr int kMaxFlatDepth = 12;
  static constexpr std::size_t kFlatBlowup = 8;
  static constexpr std::size_t kMinFlatRows = 16;

 private:
  struct Entry {
    int depth = kWalk;
    std::size_t split_offset = 0;
    std::size_t leaf_offset = 0;
  };

  // Copies node `n` of `tree` to level-order position `pos` at `level`.
  void fill(const Tree& tree, const Entry& e, std::uint32_t n, std::size_t pos, int level) {
    const Node& node = tree.nodes[n];
    if (level == e.depth) {
      leaf_[e.leaf_offset + pos - ((std::size_t{1} << e.depth) - 1)] = node.value;
      return;
    }
    if (node.feature >= 0) {
      feature_[e.split_offset + pos] = node.feature;
      threshold_[e.split_offset + pos] = node.threshold;
      nan_left_[e.split_offset + pos] = node.nan_left;
      fill(tree, e, node.left, 2 * pos + 1, level + 1);
      fill(tree, e, node.right, 2 * pos + 2, level + 1);
    } else {  // a leaf above the bottom: an always-left split (the defaults) over two copies of it
      fill(tree, e, n, 2 * pos + 1, level + 1);
      fill(tree, e, n, 2 * pos + 2, level + 1);
    }
  }

  std::vector<Entry> trees_;
  std::vector<std::int32_t> feature_;
  std::vector<double> threshold_;
  std::vector<std::uint8_t> nan_left_;
  std::vector<std::int8_t> leaf_;
};

// Calls visit(t, r, f_t(x_r)) for every tree t in [first, first + n_trees) and row, block of rows by block
// of rows, each row seeing the trees in order; tree-outer within a block, so one tree stays hot in cache
// while it sees the block's rows; through the flat arrays for the trees that have them.
template <typename T, typename Start, typename Visit>
void for_each_output(const Model& model, const MatrixView<T>& X, std::size_t first, std::size_t n_trees,
                     int n_threads, Start&& start, Visit&& visit) {
  const FlatForest forest(model, first, FlatForest::plan(model, first, n_trees, X.n_rows));
  util::parallel_for(n_blocks(X.n_rows), n_threads, [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * kRowBlock;
    const std::size_t end = std::min(X.n_rows, begin + kRowBlock);
    start(begin, end);
    constexpr std::size_t L = FlatForest::kLanes;
    const std::size_t lanes_end = begin + (end - begin) / L * L;
    for (std::size_t i = 0; i < n_trees; ++i) {
      const std::size_t t = first + i;
      if (!forest.flat(i)) {  // the node walk
        const Tree& tree = model.trees[t];
        for (std::size_t r = begin; r < end; ++r)
          visit(t, r, tree.output(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride));
        continue;
      }
      const FlatForest::View tree = forest.tree(i);
      for (std::size_t r = begin; r < lanes_end; r += L) {
        const T* rows[L];
        int f[L];
        for (std::size_t j = 0; j < L; ++j) rows[j] = X.data + static_cast<std::ptrdiff_t>(r + j) * X.row_stride;
        tree.outputs(rows, X.col_stride, f);
        for (std::size_t j = 0; j < L; ++j) visit(t, r + j, f[j]);
      }
      for (std::size_t r = lanes_end; r < end; ++r)
        visit(t, r, tree.output(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride));
    }
  });
}

}  // namespace

template <typename T>
void decision_function(const Model& model, MatrixView<T> X, double* out, int n_threads, std::size_t n_trees) {
  check_columns(model, X);
  const std::size_t K = model.n_outputs;
  const std::size_t T_used = std::min(n_trees, model.trees.size());
  for_each_output(
      model, X, 0, T_used, n_threads,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r)
          for (std::size_t k = 0; k < K; ++k) out[r * K + k] = model.bias[k];
      },
      [&](std::size_t t, std::size_t r, int f) {
        const double* step = model.trees[t].step.data();
        double* o = out + r * K;
        for (std::size_t k = 0; k < K; ++k) o[k] += f * step[k];
      });
}

template <typename T>
void tree_outputs(const Model& model, MatrixView<T> X, std::int8_t* out, int n_threads, std::size_t first_tree,
                  std::size_t n_trees) {
  check_columns(model, X);
  const std::size_t first = std::min(first_tree, model.trees.size());
  const std::size_t n_used = std::min(n_trees, model.trees.size() - first);
  for_each_output(
      model, X, first, n_used, n_threads, [](std::size_t, std::size_t) {},
      [&](std::size_t t, std::size_t r, int f) { out[r * n_used + (t - first)] = static_cast<std::int8_t>(f); });
}

void scores_to_classes(const Model& model, const double* scores, std::size_t n_rows, std::int32_t* out) {
  const std::size_t K = model.n_outputs;
  for (std::size_t r = 0; r < n_rows; ++r) {
    if (K == 1) {
      out[r] = scores[r] > 0.0 ? 1 : 0;
      continue;
    }
    const double* s = scores + r * K;
    std::size_t best = 0;
    for (std::size_t k = 1; k < K; ++k)
      if (s[k] > s[best]) best = k;
    out[r] = static_cast<std::int32_t>(best);
  }
}

template void decision_function<float>(const Model&, MatrixView<float>, double*, int, std::size_t);
template void decision_function<double>(const Model&, MatrixView<double>, double*, int, std::size_t);
template void tree_outputs<float>(const Model&, MatrixView<float>, std::int8_t*, int, std::size_t, std::size_t);
template void tree_outputs<double>(const Model&, MatrixView<double>, std::int8_t*, int, std::size_t, std::size_t);

}  // namespace rebelboost
