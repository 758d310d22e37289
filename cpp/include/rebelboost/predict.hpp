// Batch prediction on raw feature values (no binning needed): scores, per-tree outputs, classes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"

namespace rebelboost {

// Writes H(x) = a_0 + sum_{t < n_trees} f_t(x) a_t for every row into out[row * K + k].
// Rows are processed in parallel with n_threads (<= 0: all cores; at most 4 per core); the result does not
// depend on it. Extra memory: at most a few times the model's own nodes (deep or lopsided trees are walked
// node by node rather than flattened).
// Throws InvalidArgument if X has the wrong number of columns.
template <typename T>
void decision_function(const Model& model, MatrixView<T> X, double* out, int n_threads,
                       std::size_t n_trees = std::numeric_limits<std::size_t>::max());

// Writes f_t(x) in {+1, -1} for the trees t in [first_tree, first_tree + n_trees) (clipped to the model)
// into out[row * n + t - first_tree], n the number of trees in that range (for staged prediction and
// cascades; a range bounds the memory of the output for models with many trees).
template <typename T>
void tree_outputs(const Model& model, MatrixView<T> X, std::int8_t* out, int n_threads, std::size_t first_tree = 0,
                  std::size_t n_trees = std::numeric_limits<std::size_t>::max());

// Class index per row: H > 0 for binary losses (K = 1), argmax_k H_k (first on ties) for REBEL.
void scores_to_classes(const Model& model, const double* scores, std::size_t n_rows, std::int32_t* out);

}  // namespace rebelboost
