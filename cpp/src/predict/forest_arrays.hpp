// The compiled forest as raw pointers: plain data, so the instruction-set-specific kernels need no std types.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rebelboost::predict {

// Raw pointers into a FlatForest (plain data, so the instruction-set-specific kernels need no std types).
//
// Tree t of depth d (d = depth[t]) owns the 2^d - 1 splits first_split[t] + i, i in level order: split i has
// children 2i + 1 (left) and 2i + 2 (right); leaf j (level-order position 2^d - 1 + j) is f = -1 iff bit
// j % 64 of leaf_neg[leaf_word[t] + j / 64] is set. Split i sends x left when x[feature] <= threshold, or
// when x[feature] is NaN and nan_left; slot[i] is the feature's index in `features` (the features some
// split reads), so a kernel can work on a copy of just those columns.
// A tree whose complete form would be much larger than its nodes (walk[t] != 0) is not flattened: its
// splits are the model's nodes in their own order (children given by `left`/`right`, leaves by
// `node_value`), walked one node at a time.
struct ForestArrays {
  std::size_t n_trees = 0;
  std::size_t n_outputs = 1;           // K
  const std::uint8_t* depth = nullptr;
  const std::uint8_t* walk = nullptr;  // 1: node walk (arrays below indexed by the model's node numbers)
  const std::uint32_t* first_split = nullptr;
  const std::uint32_t* run_end = nullptr;  // first tree after t of another depth or kind (kernels loop per run)
  const std::uint32_t* leaf_word = nullptr;
  const std::int32_t* feature = nullptr;  // per split: the feature it reads (features[slot[i]])
  const std::uint32_t* slot = nullptr;
  const double* threshold = nullptr;
  const float* threshold_f32 = nullptr;  // largest float <= threshold: float x <= it iff double(x) <= threshold
  const std::uint8_t* nan_left = nullptr;
  const std::uint64_t* leaf_neg = nullptr;
  const std::uint32_t* left = nullptr;      // node-walk trees only
  const std::uint32_t* right = nullptr;     // node-walk trees only
  const std::int8_t* node_value = nullptr;  // node-walk trees only: 0 for a split, else the leaf's f
  const std::int32_t* features = nullptr;   // slot -> feature, slots numbered in order of first use
  std::size_t n_slots = 0;
  // [t], t <= n_trees: the trees before t read only the slots before slots_before[t] (rows that stop early
  // gather their columns as far as they get).
  const std::uint32_t* slots_before = nullptr;
  const double* steps = nullptr;  // steps[t * K + k] = a_tk
  // Regression models (real leaves; null otherwise): f * a_t0 of every leaf, already multiplied (the product
  // training added to H): complete trees' leaf j at leaf_value[leaf_first[t] + j], node-walk trees' node i at
  // leaf_value[leaf_first[t] + i].
  const double* leaf_value = nullptr;
  const std::uint32_t* leaf_first = nullptr;
};

// The thresholds to compare values of x's type with: float rows use the thresholds rounded down to float
// (exact: see threshold_f32), double rows the stored ones. (Trivial, so safe in every kernel file.)
inline const float* thresholds_for(const ForestArrays& f, const float*) { return f.threshold_f32; }
inline const double* thresholds_for(const ForestArrays& f, const double*) { return f.threshold; }

}  // namespace rebelboost::predict
