// Node covers of a grown tree (Tree::cover): the training sample weight reaching each node, for
// path-dependent TreeSHAP (docs/guide/explanations.md).
#pragma once

#include <cstddef>
#include <vector>

#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/train.hpp"

namespace rebelboost::learner {

// cover[i] = sum of sample_weight[r] (1 per row when null) over the rows r of X that reach node i of
// `tree` (routed by raw values, as prediction routes them), summed exactly (util::ExactSum) and rounded
// once, then totalled over the participants of a distributed fit (reducer non-null; every participant
// calls it for every tree). The result depends neither on n_threads nor on how rows are split between
// participants; a child's cover never exceeds its parent's (rounding is monotone). O(rows x depth).
template <typename T>
std::vector<double> tree_covers(const Tree& tree, const MatrixView<T>& X, const double* sample_weight, int n_threads,
                                Reducer* reducer);

}  // namespace rebelboost::learner
