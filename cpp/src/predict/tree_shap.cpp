// Path-dependent TreeSHAP (Lundberg, Erion and Lee 2018, "Consistent individualized feature attribution
// for tree ensembles", Algorithm 2), written for +-1 trees whose step vector scales the result
// (docs/guide/explanations.md). The path m holds, for each distinct feature split on above the current
// node, the probability of following the path with the feature out of the coalition (zero fraction) or in
// it (one fraction: 1 if x follows the path, else 0), and the weights of the coalitions of each size.
#include "predict/tree_shap.hpp"

#include <algorithm>
#include <string>

#include "predict/engine.hpp"
#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

namespace rebelboost::predict {

namespace {

// Appends a feature to the path of `depth` + 1 elements (Algorithm 2's EXTEND), updating the weights.
template <typename Element>
void extend(Element* m, std::size_t depth, double zero_fraction, double one_fraction, std::int32_t feature) {
  m[depth] = Element{feature, zero_fraction, one_fraction, depth == 0 ? 1.0 : 0.0};
  const double l1 = static_cast<double>(depth + 1);
  for (std::size_t i = depth; i-- > 0;) {
    m[i + 1].weight += one_fraction * m[i].weight * static_cast<double>(i + 1) / l1;
    m[i].weight = zero_fraction * m[i].weight * static_cast<double>(depth - i) / l1;
  }
}

// Removes element `index` from the path of `depth` + 1 elements (UNWIND): the inverse of its extend.
template <typename Element>
void unwind(Element* m, std::size_t depth, std::size_t index) {
  const double one = m[index].one_fraction, zero = m[index].zero_fraction;
  const double l1 = static_cast<double>(depth + 1);
  double next = m[depth].weight;
  for (std::size_t i = depth; i-- > 0;) {
    if (one != 0.0) {
      const double kept = m[i].weight;
      m[i].weight = next * l1 / (static_cast<double>(i + 1) * one);
      next = kept - m[i].weight * zero * static_cast<double>(depth - i) / l1;
    } else {
      m[i].weight = m[i].weight * l1 / (zero * static_cast<double>(depth - i));
    }
  }
  for (std::size_t i = index; i < depth; ++i) {
    m[i].feature = m[i + 1].feature;
    m[i].zero_fraction = m[i + 1].zero_fraction;
    m[i].one_fraction = m[i + 1].one_fraction;
  }
}

// The total weight the path would have with element `index` unwound (the sum UNWIND would leave), without
// changing it.
template <typename Element>
double unwound_sum(const Element* m, std::size_t depth, std::size_t index) {
  const double one = m[index].one_fraction, zero = m[index].zero_fraction;
  const double l1 = static_cast<double>(depth + 1);
  double next = m[depth].weight, total = 0.0;
  for (std::size_t i = depth; i-- > 0;) {
    if (one != 0.0) {
      const double w = next * l1 / (static_cast<double>(i + 1) * one);
      total += w;
      next = m[i].weight - w * zero * static_cast<double>(depth - i) / l1;
    } else {
      total += m[i].weight * l1 / (zero * static_cast<double>(depth - i));
    }
  }
  return total;
}

}  // namespace

TreeShap::TreeShap(const Model& model, std::size_t n_trees, std::size_t table_budget)
    : K_(model.n_outputs), d_(model.n_features) {
  if (model.learner != LearnerKind::kTree)
    throw InvalidArgument(std::string("per-feature contributions are defined for tree models; this model has ") +
                          learner_name(model.learner) + " learners, and a similarity learner depends on the whole "
                          "distance between a row and its anchors, not on single features");
  if (!model.has_covers())
    throw InvalidArgument("this model has no node covers (it was read from a model file older than format version "
                          "5), so its per-feature contributions cannot be computed; train it again, or continue it "
                          "with warm start on its training data, which records them");
  const std::size_t T = std::min(n_trees, model.trees.size());
  expected_ = model.bias;
  tree_begin_.push_back(0);
  features_begin_.push_back(0);
  leaves_begin_.push_back(0);
  std::vector<double> reach;  // probability of reaching each node of a tree with no feature known
  for (std::size_t t = 0; t < T; ++t) {
    const Tree& tree = model.trees[t];
    reach.assign(tree.nodes.size(), 0.0);
    reach[0] = 1.0;
    double mean = 0.0;  // E[f_t], in node order
    const std::size_t first_feature = tree_features_.size();
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
      const Node& n = tree.nodes[i];
      ShapNode s{n.feature, n.nan_left, n.threshold, n.left, n.right, 0.0, 0.0,
                 tree.leaf_value.empty() ? static_cast<double>(n.value) : tree.leaf_value[i]};
      if (n.feature < 0) {
        mean += reach[i] * s.value;
      } else {
        const double c = tree.cover[i];
        s.left_fraction = c > 0.0 ? tree.cover[n.left] / c : 0.5;
        s.right_fraction = c > 0.0 ? tree.cover[n.right] / c : 0.5;
        reach[n.left] = reach[i] * s.left_fraction;
        reach[n.right] = reach[i] * s.right_fraction;
        const auto begin = tree_features_.begin() + static_cast<std::ptrdiff_t>(first_feature);
        if (std::find(begin, tree_features_.end(), n.feature) == tree_features_.end()) tree_features_.push_back(n.feature);
      }
      nodes_.push_back(s);
    }
    for (std::size_t k = 0; k < K_; ++k) {
      steps_.push_back(tree.step[k]);
      expected_[k] += tree.step[k] * mean;
    }
    max_depth_ = std::max(max_depth_, static_cast<std::size_t>(tree.depth()));
    tree_begin_.push_back(nodes_.size());
    features_begin_.push_back(tree_features_.size());
    build_tables(t, first_feature, table_budget);
    leaves_begin_.push_back(leaves_.size());
  }
}

bool TreeShap::build_tables(std::size_t t, std::size_t first_feature, std::size_t& budget) {
  const ShapNode* tree = nodes_.data() + tree_begin_[t];
  const std::size_t n = tree_begin_[t + 1] - tree_begin_[t];
  if (tree[0].feature < 0) return true;  // a single leaf contributes nothing
  std::vector<std::uint32_t> parent(n, 0);
  for (std::uint32_t i = 0; i < n; ++i)
    if (tree[i].feature >= 0) parent[tree[i].left] = parent[tree[i].right] = i;
  // Each leaf's path from the root, and the entries its table needs: 2^u x u for u distinct features.
  std::vector<std::vector<std::uint32_t>> paths;
  std::size_t size = 0;
  for (std::uint32_t leaf = 1; leaf < n; ++leaf) {
    if (tree[leaf].feature >= 0) continue;
    std::vector<std::uint32_t> path{leaf};
    for (std::uint32_t i = leaf; i != 0;) path.push_back(i = parent[i]);
    std::reverse(path.begin(), path.end());
    std::vector<std::int32_t> distinct;
    for (std::size_t p = 0; p + 1 < path.size(); ++p)
      if (std::find(distinct.begin(), distinct.end(), tree[path[p]].feature) == distinct.end())
        distinct.push_back(tree[path[p]].feature);
    if (distinct.size() > 16) return false;
    size += (std::size_t{1} << distinct.size()) * distinct.size();
    if (size > kTreeTableLimit || size > budget) return false;
    paths.push_back(std::move(path));
  }
  budget -= size;
  for (const std::vector<std::uint32_t>& path : paths) build_leaf_table(tree, path, first_feature);
  return true;
}

void TreeShap::build_leaf_table(const ShapNode* tree, const std::vector<std::uint32_t>& path,
                                std::size_t first_feature) {
  TableLeaf leaf{static_cast<std::uint32_t>(checks_.size()), 0, static_cast<std::uint32_t>(slot_features_.size()), 0,
                 tables_.size()};
  std::vector<std::int32_t> features;  // the path's distinct features, in order of first split
  std::vector<double> zero;            // per feature: the probability of the path with the feature unknown
  for (std::size_t p = 0; p + 1 < path.size(); ++p) {
    const ShapNode& n = tree[path[p]];
    const bool left = path[p + 1] == n.left;
    const auto slot = static_cast<std::size_t>(std::find(features.begin(), features.end(), n.feature) - features.begin());
    if (slot == features.size()) {
      features.push_back(n.feature);
      zero.push_back(1.0);
    }
    zero[slot] *= left ? n.left_fraction : n.right_fraction;
    checks_.push_back(LeafCheck{path[p], static_cast<std::uint8_t>(left), static_cast<std::uint8_t>(slot)});
  }
  const std::size_t u = features.size();
  const auto local_begin = tree_features_.begin() + static_cast<std::ptrdiff_t>(first_feature);
  for (std::int32_t f : features)
    slot_features_.push_back(static_cast<std::uint16_t>(std::find(local_begin, tree_features_.end(), f) - local_begin));
  leaf.checks_end = static_cast<std::uint32_t>(checks_.size());
  leaf.n_slots = static_cast<std::uint32_t>(u);
  tables_.resize(tables_.size() + (std::size_t{1} << u) * u, 0.0);
  std::vector<PathElement> m(u + 1);
  const double value = tree[path.back()].value;
  for (std::size_t mask = 0; mask < (std::size_t{1} << u); ++mask) {
    extend(m.data(), 0, 1.0, 1.0, -1);
    bool reachable = true;  // a feature x does not follow and no training weight follows: every share is 0
    for (std::size_t i = 0; i < u; ++i) {
      const double one = static_cast<double>(mask >> i & 1u);
      reachable = reachable && (one != 0.0 || zero[i] != 0.0);
      extend(m.data(), i + 1, zero[i], one, features[i]);
    }
    if (!reachable) continue;
    for (std::size_t i = 0; i < u; ++i)
      tables_[leaf.table + mask * u + i] = unwound_sum(m.data(), u, i + 1) * (m[i + 1].one_fraction - zero[i]) * value;
  }
  leaves_.push_back(leaf);
}

template <typename T>
void TreeShap::recurse(const ShapNode* tree, std::uint32_t node, const T* x, std::ptrdiff_t stride, PathElement* path,
                       std::size_t depth, double zero_fraction, double one_fraction, std::int32_t feature,
                       double* phi) const {
  // The parent's path has `depth` elements at `path`; this call's copy lives right after them (levels
  // p = 0, 1, ... start at p (p + 1) / 2), extended by this node's element.
  PathElement* m = path + depth;
  std::copy(path, path + depth, m);
  extend(m, depth, zero_fraction, one_fraction, feature);
  const ShapNode& n = tree[node];
  if (n.feature < 0) {
    for (std::size_t i = 1; i <= depth; ++i)
      phi[m[i].feature] += unwound_sum(m, depth, i) * (m[i].one_fraction - m[i].zero_fraction) * n.value;
    return;
  }
  const T v = x[static_cast<std::ptrdiff_t>(n.feature) * stride];
  const bool left = (v != v) ? (n.nan_left != 0) : (static_cast<double>(v) <= n.threshold);
  const std::uint32_t hot = left ? n.left : n.right, cold = left ? n.right : n.left;
  const double hot_fraction = left ? n.left_fraction : n.right_fraction;
  const double cold_fraction = left ? n.right_fraction : n.left_fraction;
  // A feature met again: undo its earlier element and redo it with both conditions.
  double incoming_zero = 1.0, incoming_one = 1.0;
  std::size_t k = 1;
  while (k <= depth && m[k].feature != n.feature) ++k;
  if (k <= depth) {
    incoming_zero = m[k].zero_fraction;
    incoming_one = m[k].one_fraction;
    unwind(m, depth, k);
    --depth;
  }
  // A branch that neither x nor the covers can reach adds exactly 0 (and its unwinding would divide 0 by 0).
  if (hot_fraction * incoming_zero != 0.0 || incoming_one != 0.0)
    recurse(tree, hot, x, stride, m, depth + 1, hot_fraction * incoming_zero, incoming_one, n.feature, phi);
  if (cold_fraction * incoming_zero != 0.0)
    recurse(tree, cold, x, stride, m, depth + 1, cold_fraction * incoming_zero, 0.0, n.feature, phi);
}

struct TreeShap::Scratch {
  std::vector<PathElement> path;    // (max depth + 1)(max depth + 2) / 2 elements: every level's copy
  std::vector<double> phi;          // d: one tree's contributions of a +-1 output (the recursion)
  std::vector<std::uint8_t> left;   // per node of a tree: whether x goes left (the tables)
  std::vector<double> local;        // per distinct feature of a tree: its contribution (the tables)
};

template <typename T>
void TreeShap::tabled(std::size_t t, const T* x, std::ptrdiff_t stride, Scratch& s) const {
  const ShapNode* tree = nodes_.data() + tree_begin_[t];
  const std::size_t n = tree_begin_[t + 1] - tree_begin_[t];
  // Every node's direction, leaves included (they read feature 0 and are never checked): no branch on the
  // tree's shape, which varies from tree to tree.
  for (std::size_t i = 0; i < n; ++i) {
    const ShapNode& node = tree[i];
    const T v = x[static_cast<std::ptrdiff_t>(node.feature < 0 ? 0 : node.feature) * stride];
    s.left[i] = (v != v) ? node.nan_left : static_cast<std::uint8_t>(static_cast<double>(v) <= node.threshold);
  }
  for (std::size_t l = leaves_begin_[t]; l < leaves_begin_[t + 1]; ++l) {
    const TableLeaf& leaf = leaves_[l];
    std::uint32_t mask = (1u << leaf.n_slots) - 1u;
    for (std::uint32_t c = leaf.checks_begin; c < leaf.checks_end; ++c)  // a wrong turn clears the slot's bit
      mask &= ~(static_cast<std::uint32_t>(s.left[checks_[c].node] ^ checks_[c].left) << checks_[c].slot);
    const double* shares = tables_.data() + leaf.table + static_cast<std::size_t>(mask) * leaf.n_slots;
    const std::uint16_t* slots = slot_features_.data() + leaf.slots_begin;
    for (std::uint32_t i = 0; i < leaf.n_slots; ++i) s.local[slots[i]] += shares[i];
  }
}

template <typename T>
void TreeShap::row(const T* x, std::ptrdiff_t stride, Scratch& s, double* out) const {
  const std::size_t d1 = d_ + 1;
  for (std::size_t k = 0; k < K_; ++k) {
    std::fill(out + k * d1, out + k * d1 + d_, 0.0);
    out[k * d1 + d_] = expected_[k];
  }
  for (std::size_t t = 0; t + 1 < tree_begin_.size(); ++t) {
    const ShapNode* tree = nodes_.data() + tree_begin_[t];
    if (tree[0].feature < 0) continue;  // a single leaf: f is constant, every contribution 0
    const bool table = leaves_begin_[t] != leaves_begin_[t + 1];
    if (table)
      tabled(t, x, stride, s);
    else
      recurse(tree, 0, x, stride, s.path.data(), 0, 1.0, 1.0, -1, s.phi.data());
    const double* a = steps_.data() + t * K_;
    for (std::size_t f = features_begin_[t]; f < features_begin_[t + 1]; ++f) {
      const auto j = static_cast<std::size_t>(tree_features_[f]);
      double& phi = table ? s.local[f - features_begin_[t]] : s.phi[j];
      for (std::size_t k = 0; k < K_; ++k) out[k * d1 + j] += a[k] * phi;
      phi = 0.0;
    }
  }
}

template <typename T>
void TreeShap::contributions(MatrixView<T> X, double* out, int n_threads) const {
  check_columns(X.n_cols, d_);
  constexpr std::size_t kBlock = 64;
  const std::size_t n_blocks = (X.n_rows + kBlock - 1) / kBlock;
  const std::size_t path_size = (max_depth_ + 1) * (max_depth_ + 2) / 2;
  // Work per row: about (depth + 1)^2 steps per node of every tree.
  const std::size_t work = X.n_rows * nodes_.size() * (max_depth_ + 1) * (max_depth_ + 1);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_blocks), util::threads_for(work, n_threads), [&](std::ptrdiff_t b) {
    Scratch s{std::vector<PathElement>(path_size), std::vector<double>(d_, 0.0), std::vector<std::uint8_t>(kMaxTreeNodes),
              std::vector<double>(kMaxTreeNodes, 0.0)};
    const std::size_t begin = static_cast<std::size_t>(b) * kBlock, end = std::min(X.n_rows, begin + kBlock);
    for (std::size_t r = begin; r < end; ++r)
      row(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride, s, out + r * width());
  });
}

template void TreeShap::contributions<float>(MatrixView<float>, double*, int) const;
template void TreeShap::contributions<double>(MatrixView<double>, double*, int) const;

}  // namespace rebelboost::predict
