// Builds the flat arrays of FlatForest from the model's trees (see flat_forest.hpp for the layout).
#include "predict/flat_forest.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rebelboost::predict {

float round_down_to_float(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) > v) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}

FlatForest::FlatForest(const Model& model) {
  // Slots in order of first use, so the trees before t read exactly the slots before slots_before_[t].
  slot_map_.assign(model.n_features, kNoSlot);
  slots_before_.reserve(model.trees.size() + 1);
  slots_before_.push_back(0);
  for (const Tree& tree : model.trees) {
    for (const Node& node : tree.nodes) {
      if (node.feature < 0) continue;
      const auto feature = static_cast<std::size_t>(node.feature);
      if (feature >= slot_map_.size()) slot_map_.resize(feature + 1, kNoSlot);
      if (slot_map_[feature] == kNoSlot) {
        slot_map_[feature] = static_cast<std::uint32_t>(features_.size());
        features_.push_back(node.feature);
      }
    }
    slots_before_.push_back(static_cast<std::uint32_t>(features_.size()));
  }

  for (const Tree& tree : model.trees) {
    const int d = tree.depth();
    const std::size_t complete = (std::size_t{2} << d) - 1;
    if (d <= kMaxMaskDepth || (d <= kMaxFlatDepth && complete <= kMaxGrowth * tree.nodes.size()))
      add_complete(tree, d);
    else
      add_nodes(tree);
  }
  finish(model);
}

std::uint32_t FlatForest::slot_of(std::int32_t feature) {
  return slot_map_[static_cast<std::size_t>(feature)];
}

void FlatForest::set_split(std::size_t i, const Node& node) {
  feature_[i] = node.feature;
  slot_[i] = slot_of(node.feature);
  threshold_[i] = node.threshold;
  threshold_f32_[i] = round_down_to_float(node.threshold);
  nan_left_[i] = node.nan_left;
}

std::size_t FlatForest::open_tree(int depth, bool walk, std::size_t n_splits, std::int32_t feature, double threshold,
                                  std::uint8_t nan_left) {
  const std::size_t split0 = slot_.size(), end = split0 + n_splits;
  depth_.push_back(static_cast<std::uint8_t>(std::min(depth, 255)));
  walk_.push_back(walk ? 1 : 0);
  first_split_.push_back(static_cast<std::uint32_t>(split0));
  leaf_word_.push_back(static_cast<std::uint32_t>(leaf_neg_.size()));
  feature_.resize(end, feature);
  slot_.resize(end, 0);
  threshold_.resize(end, threshold);
  threshold_f32_.resize(end, static_cast<float>(threshold));
  nan_left_.resize(end, nan_left);
  left_.resize(end, 0);
  right_.resize(end, 0);
  node_value_.resize(end, 0);
  return split0;
}

void FlatForest::add_complete(const Tree& tree, int depth) {
  const std::size_t n_splits = (std::size_t{1} << depth) - 1;
  const std::size_t n_words = ((std::size_t{1} << depth) + 63) / 64;
  const std::size_t leaf0 = leaf_neg_.size();
  // Defaults: an always-left split (threshold +inf, NaN left) on the first used feature.
  const std::size_t split0 = open_tree(depth, false, n_splits, features_.empty() ? 0 : features_[0],
                                       std::numeric_limits<double>::infinity(), 1);
  leaf_neg_.resize(leaf0 + n_words, 0);
  if (!tree.leaf_value.empty()) {
    leaf_first_.push_back(static_cast<std::uint32_t>(leaf_out_.size()));
    leaf_out_.resize(leaf_out_.size() + (std::size_t{1} << depth), 0.0);
  }
  fill(tree, 0, split0, leaf0, depth, 0, 0);
}

// Copies node `node` to level-order position `pos`; a leaf above the bottom becomes always-left splits over
// copies of itself, so every row reaches a leaf with the value the node walk gives.
void FlatForest::fill(const Tree& tree, std::uint32_t node, std::size_t split0, std::size_t leaf0, int depth,
                      std::size_t pos, int level) {
  const Node& n = tree.nodes[node];
  if (level == depth) {
    const std::size_t j = pos - ((std::size_t{1} << depth) - 1);
    if (n.value < 0) leaf_neg_[leaf0 + j / 64] |= std::uint64_t{1} << (j % 64);
    if (!tree.leaf_value.empty()) leaf_out_[leaf_first_.back() + j] = tree.leaf_value[node] * tree.step[0];
    return;
  }
  if (n.feature >= 0) {
    set_split(split0 + pos, n);
    fill(tree, n.left, split0, leaf0, depth, 2 * pos + 1, level + 1);
    fill(tree, n.right, split0, leaf0, depth, 2 * pos + 2, level + 1);
  } else {
    fill(tree, node, split0, leaf0, depth, 2 * pos + 1, level + 1);
    fill(tree, node, split0, leaf0, depth, 2 * pos + 2, level + 1);
  }
}

void FlatForest::add_nodes(const Tree& tree) {
  const std::size_t n = tree.nodes.size();
  const std::size_t split0 = open_tree(tree.depth(), true, n, 0, 0.0, 0);
  if (!tree.leaf_value.empty()) {
    leaf_first_.push_back(static_cast<std::uint32_t>(leaf_out_.size()));
    for (std::size_t i = 0; i < n; ++i) leaf_out_.push_back(tree.leaf_value[i] * tree.step[0]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = tree.nodes[i];
    if (node.feature < 0) {
      node_value_[split0 + i] = node.value;
      continue;
    }
    set_split(split0 + i, node);
    left_[split0 + i] = node.left;
    right_[split0 + i] = node.right;
  }
}

void FlatForest::finish(const Model& model) {
  const std::size_t K = model.n_outputs;
  run_end_.assign(depth_.size(), static_cast<std::uint32_t>(depth_.size()));
  for (std::size_t t = depth_.size(); t-- > 1;)
    run_end_[t - 1] = (depth_[t] == depth_[t - 1] && walk_[t] == walk_[t - 1]) ? run_end_[t] : static_cast<std::uint32_t>(t);
  steps_.reserve(model.trees.size() * K);
  for (const Tree& tree : model.trees) steps_.insert(steps_.end(), tree.step.begin(), tree.step.end());
  arrays_.n_trees = depth_.size();
  arrays_.n_outputs = K;
  arrays_.depth = depth_.data();
  arrays_.walk = walk_.data();
  arrays_.first_split = first_split_.data();
  arrays_.run_end = run_end_.data();
  arrays_.leaf_word = leaf_word_.data();
  arrays_.feature = feature_.data();
  arrays_.slot = slot_.data();
  arrays_.threshold = threshold_.data();
  arrays_.threshold_f32 = threshold_f32_.data();
  arrays_.nan_left = nan_left_.data();
  arrays_.leaf_neg = leaf_neg_.data();
  arrays_.left = left_.data();
  arrays_.right = right_.data();
  arrays_.node_value = node_value_.data();
  arrays_.features = features_.data();
  arrays_.n_slots = features_.size();
  arrays_.slots_before = slots_before_.data();
  arrays_.steps = steps_.data();
  if (model.is_regression()) {
    arrays_.leaf_value = leaf_out_.data();
    arrays_.leaf_first = leaf_first_.data();
  }
}

}  // namespace rebelboost::predict
