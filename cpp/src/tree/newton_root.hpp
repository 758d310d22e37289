// The joint root split of REBEL with a surrogate that has no closed-form step (logistic, squared): the
// Newton gain of the K-vector step (docs/guide/rebel.md "The loss family", Trees).
//
// With per-sample gradients G_nk and curvatures h_nk of the loss at the current scores, a split with
// f = -1 on the left and +1 on the right moves class k's loss by D_k a_k + h_k a_k^2 / 2 to second order
// (D_k = sum_n f_n G_nk = T_k - 2 L_k with T the node's total and L the left side's; h_k = sum_n h_nk,
// the same for every split since f^2 = 1), so the best step lowers it by D_k^2 / (2 h_k). The split
// maximises sum_k D_k^2 / h_k: the exact decrease for the squared g (its loss is quadratic in a), the
// second-order one for the logistic g. With 2 classes it picks the split of largest |sum_n f_n G_n|, the
// binary gradient boosting choice. The gain of a fixed split is not monotone in the rows, so QuickBoost's
// bound does not hold here: the root is always a full scan (the layers below still prune).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "rebelboost/train.hpp"
#include "tree/multiclass_split.hpp"

namespace rebelboost::tree {

// G: n x K fixed-point gradients (rows with zero entries contribute nothing), curvature: the K totals
// h_k over the searched rows (fixed point, any common scale). Winner: the largest gain strictly above the
// unsplit node's (sum_k T_k^2 / h_k), ties to the lowest (feature, bin, NaN right first). loss and
// loss_unsplit hold minus the gains (lower is better), in fixed-point units. reducer (null: a local fit):
// the histograms are summed over the participants first. The result does not depend on n_threads.
RootSplit best_newton_root(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* G,
                           const std::vector<std::int64_t>& curvature, std::size_t K, int n_threads,
                           const std::uint8_t* active_features, Reducer* reducer);

}  // namespace rebelboost::tree
