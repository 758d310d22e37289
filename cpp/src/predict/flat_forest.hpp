// The model's trees compiled once for prediction: complete level-order trees in flat arrays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "predict/forest_arrays.hpp"
#include "rebelboost/model.hpp"

namespace rebelboost::predict {

class FlatForest {
 public:
  // Trees up to this depth are evaluated by comparing all their splits at once (2^d - 1 comparisons of 16
  // lanes, no data-dependent load: cheaper than d dependent steps per lane up to depth 6, measured);
  // deeper ones are walked level by level. Such trees are always stored complete.
  static constexpr int kMaxMaskDepth = 6;
  // Deepest tree stored in complete form; deeper trees, and trees whose complete form would hold more than
  // kMaxGrowth times their node count, keep their own nodes (bounded memory for hostile models).
  static constexpr int kMaxFlatDepth = 8;
  static constexpr std::size_t kMaxGrowth = 8;

  explicit FlatForest(const Model& model);

  FlatForest(const FlatForest&) = delete;
  FlatForest& operator=(const FlatForest&) = delete;

  const ForestArrays& arrays() const { return arrays_; }
  std::size_t n_trees() const { return depth_.size(); }

 private:
  // Starts a tree in the arrays (its depth, layout and first split) with n_splits split slots, each a split
  // on `feature` at `threshold` sending NaN left when nan_left; returns the first slot.
  std::size_t open_tree(int depth, bool walk, std::size_t n_splits, std::int32_t feature, double threshold,
                        std::uint8_t nan_left);
  void add_complete(const Tree& tree, int depth);
  void add_nodes(const Tree& tree);
  void fill(const Tree& tree, std::uint32_t node, std::size_t split0, std::size_t leaf0, int depth, std::size_t pos,
            int level);
  std::uint32_t slot_of(std::int32_t feature);
  void set_split(std::size_t i, const Node& node);
  void finish(const Model& model);

  std::vector<std::uint8_t> depth_, walk_;
  std::vector<std::uint32_t> first_split_, run_end_, leaf_word_, slot_, left_, right_;
  std::vector<std::int32_t> feature_;
  std::vector<double> threshold_;
  std::vector<float> threshold_f32_;
  std::vector<std::uint8_t> nan_left_;
  std::vector<std::int8_t> node_value_;
  std::vector<std::uint64_t> leaf_neg_;
  std::vector<std::int32_t> features_;       // slot -> feature, in order of first use by the trees
  std::vector<std::uint32_t> slot_map_;      // feature -> slot (kNoSlot: unused)
  std::vector<std::uint32_t> slots_before_;  // [t]: slots the trees before t use (n_trees + 1 entries)
  static constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;
  std::vector<double> steps_;
  std::vector<double> leaf_out_;         // regression: f * a per leaf (ForestArrays::leaf_value)
  std::vector<std::uint32_t> leaf_first_;
  ForestArrays arrays_;
};

// Largest float <= v (v not NaN): for a float x, x <= result exactly when double(x) <= v.
float round_down_to_float(double v);

}  // namespace rebelboost::predict
