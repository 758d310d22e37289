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

// Thresholds for `target` from calibration rows X with classes y (indices into the model's classes) that
// hold on new rows with the target's confidence: Learn then Test (Angelopoulos, Bates, Candes, Jordan and
// Lei 2021) with Clopper-Pearson binomial tests (Clopper and Pearson 1934).
//
// The candidates are fixed before any row is seen, from the model alone: shapes p in kShapes, and for each
// a decreasing sequence of scales lambda_0 > lambda_1 > ...; candidate (p, i) puts the threshold
// lambda_i W(s)^p on every class at checkpoint s, W(s) the remaining weight sum_{t >= s} w_t (w_t = a_t^2
// binary, (max_k a_tk - min_k a_tk)^2 otherwise; p = 0: one threshold for all checkpoints). lambda_0 is so
// large that only the exact bound decides (no harm). Per shape the candidates are tested in order with
// the null hypothesis "harm rate on new rows > target", rejected when P(Binomial(n, target) <= harmful) is
// at most (1 - confidence) / |kShapes|; the shape's pick is the last candidate before the first one that
// is not rejected (fixed-sequence testing: no multiplicity cost along the sequence, Bonferroni across
// shapes). Every pick is then, with probability >= confidence jointly, within the target on new rows,
// so the cascade taken, the pick of least estimated cost on the calibration rows (below), is too.
//
// The estimated cost is learners x (1 + 2 / every) (a check of a 16-row group costs about two depth-2
// trees). With CascadeTarget::every = 0 the family is built for checkpoints every 4, 8 and 16 learners too
// (Bonferroni over all shape x spacing sequences; every 4 alone when the rows are too few for that level).
//
// Throws InvalidArgument when the rows cannot certify the target (fewer than CascadeReport::min_rows: even
// no harm at all would not reject), or the target is 0. `report` (optional) receives the figures.
// Engine: the tree Engine or the SimilarityEngine (similarity and hybrid models; instantiated for each).
template <typename Engine, typename T>
Cascade calibrate_cascade(const Engine& engine, MatrixView<T> X, const std::int32_t* y, const CascadeTarget& target,
                          int n_threads, CascadeReport* report = nullptr);

// P(Binomial(n, p) <= k), summed in log space (exact to rounding for the sizes of calibration sets).
double binomial_cdf(std::size_t k, std::size_t n, double p);
// The Clopper-Pearson upper bound: the p with P(Binomial(n, p) <= k) = tail (1 for k >= n).
double clopper_pearson_upper(std::size_t k, std::size_t n, double tail);
// The lower bound: the p with P(Binomial(n, p) >= k) = tail (0 for k = 0).
double clopper_pearson_lower(std::size_t k, std::size_t n, double tail);
// Fewest rows n for which no harm at all rejects "harm rate > target" at level `tail`: (1 - target)^n <= tail.
std::size_t min_certifying_rows(double target, double tail);

}  // namespace rebelboost::predict
