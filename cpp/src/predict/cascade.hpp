// Soft cascades (thesis §2.2, Bourdev and Brandt): the check at prediction time, and the calibration of the
// per-checkpoint thresholds on validation data for a target (accuracy loss, disagreement, recall).
#pragma once

#include <cstddef>
#include <cstdint>

#include "predict/exit_bounds.hpp"
#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"

namespace rebelboost::predict {


// The class a row leaves with at checkpoint c of `cascade` (Model::Cascade describes the margins), or -1.
// K = 1: P is the row's score; K >= 2: l holds its leader, runner-up and their scores.
inline std::int32_t cascade_decision(const Cascade& cascade, std::size_t c, std::size_t K, double P,
                                     const ExitBounds::Leaders& l) {
  if (K == 1) {
    const double* theta = cascade.thresholds.data() + 2 * c;
    if (P >= theta[1]) return 1;
    if (-P >= theta[0]) return 0;
    return -1;
  }
  return l.top - l.runner >= cascade.thresholds[c * K + l.lead] ? static_cast<std::int32_t>(l.lead) : -1;
}

// Thresholds for `target` on validation rows X with classes y (indices into the model's classes), found
// checkpoint by checkpoint in learner order (the procedure prediction follows): rows whose class the
// exact bound already decides leave for free; then, per class, the threshold lets the most rows leave
// while the harm (CascadeTarget) spent so far stays within the budget's share for this checkpoint
// (budget x ((c + 1) / C)^target.spend), the budget split between classes greedily by rows gained per
// unit of harm. Rows that leave are not seen again. On X itself the harm never exceeds the budget.
// Engine: the tree Engine or the SimilarityEngine (instantiated for both).
template <typename Engine, typename T>
Cascade calibrate_cascade(const Engine& engine, MatrixView<T> X, const std::int32_t* y, const CascadeTarget& target,
                          int n_threads);

}  // namespace rebelboost::predict
