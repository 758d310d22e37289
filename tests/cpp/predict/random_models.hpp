// Hand-made models for the prediction tests: random trees of uneven shape, one or several outputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "rebelboost/model.hpp"

namespace rebelboost::testing {

// Random trees of uneven shape (leaves at every level, up to depth 9), NaN sides both ways, thresholds
// that rows hit exactly, and +-inf / NaN values: batch prediction (the branch-free complete-tree form for
// many rows, the node walk for a row at a time) must equal Tree::output on every row.
inline Model uneven_model(std::uint64_t seed, std::size_t n_features, std::size_t n_outputs = 1, int n_trees = 40) {
  std::mt19937_64 rng(seed);
  Model m;
  m.loss = n_outputs == 1 ? LossKind::kAdaBoost : LossKind::kRebel;
  m.n_features = static_cast<std::uint32_t>(n_features);
  m.n_outputs = static_cast<std::uint32_t>(n_outputs);
  m.bias.assign(n_outputs, 0.25);
  for (int t = 0; t < n_trees; ++t) {
    Tree tree;
    for (std::size_t k = 0; k < n_outputs; ++k) tree.step.push_back(std::ldexp(k % 2 ? -1.0 : 1.0, -static_cast<int>((static_cast<std::size_t>(t) + k) % 7)));
    const int max_depth = t % 10;
    // Breadth-first: children always get larger indices.
    std::vector<int> level_of{0};
    tree.nodes.emplace_back();
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
      const bool split = level_of[i] < max_depth && (i == 0 || rng() % 3 != 0);
      if (!split) {
        tree.nodes[i].value = rng() % 2 ? 1 : -1;
        continue;
      }
      tree.nodes[i].feature = static_cast<std::int32_t>(rng() % n_features);
      tree.nodes[i].threshold = static_cast<double>(static_cast<int>(rng() % 9) - 4) * 0.5;
      tree.nodes[i].nan_left = static_cast<std::uint8_t>(rng() % 2);
      tree.nodes[i].left = static_cast<std::uint32_t>(tree.nodes.size());
      tree.nodes[i].right = static_cast<std::uint32_t>(tree.nodes.size() + 1);
      tree.nodes.emplace_back();
      tree.nodes.emplace_back();
      level_of.push_back(level_of[i] + 1);
      level_of.push_back(level_of[i] + 1);
    }
    m.trees.push_back(tree);
  }
  return m;
}

}  // namespace rebelboost::testing
