// A family of weak learners as the booster sees it (docs/design/contracts.md "Family"): per iteration it fits one
// learner on the loss's current weights (the pending learner) and returns its step; the booster shrinks
// the step, the family applies the pending learner to the loss and appends it to the model. Trees and
// Localized Similarities each implement it in their own file.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "loss/loss.hpp"
#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/train.hpp"
#include "util/stage_clock.hpp"

namespace rebelboost::learner {

template <typename T>
class Family {
 public:
  virtual ~Family() = default;

  // Writes the family's model-wide members (learner kind; the standardisation for similarities).
  virtual void init_model(Model& model) const = 0;

  // Polled during fit() (between tree layers, between batches of similarity candidates): once true,
  // fit() returns early and the booster drops its learner.
  virtual void set_stop_flag(const std::atomic<bool>* stop) = 0;

  // The training thread's stage clock (null: nothing measured): fit() charges its stages to it.
  virtual void set_stage_clock(util::StageClock* clock) = 0;

  // Fits one learner on the loss's current weights, makes it the pending learner and returns its step
  // before shrinkage (has_edge false when no learner of the family lowers the loss). Writes the family's
  // fields of `info` only, and only reads the loss: the hybrid family runs its two families' fit at the
  // same time on two threads (hybrid_family.cpp).
  virtual loss::Loss::Step fit(loss::Loss& loss, int iteration, IterationInfo& info) = 0;

  // The pending learner's outputs f_n on the training rows (|f_n| <= 1), in training row order: what the
  // hybrid family ranks the families' candidates with.
  virtual void pending_outputs(std::vector<double>& f) const = 0;

  // Warm start: makes learner t of `init` of this family's kind (trees[t] or similarities[t]; a model of
  // this family trained on the same data) the pending learner, with the outputs on the training rows that fit() gave it, and returns the loss's step sums
  // for them (weighted error, perfect fit). Throws InvalidArgument if `init` does not fit this data.
  virtual loss::Loss::Step replay(loss::Loss& loss, const Model& init, std::size_t t) = 0;

  // H_n += f_n a on the training rows for the pending learner (a after shrinkage); `step` is what fit()
  // or replay() returned.
  virtual void apply(loss::Loss& loss, const std::vector<double>& a, const loss::Loss::Step& step) = 0;

  // Appends the pending learner with step `a` to the model (after apply); writes info's learner fields.
  virtual void append(Model& model, const std::vector<double>& a, IterationInfo& info) = 0;

  // Once, when training ends (on every path, on every participant of a distributed fit): completes what
  // the learners appended left pending (a distributed fit's node covers, reduced in one go).
  virtual void finish_model(Model& /*model*/) {}

  // Other data (eval sets): scores (n_rows x K) += f_t(x) a_t and loss updated, for learner t of `model`
  // (an index into its trees or similarities, as for replay).
  virtual void advance(const Model& model, std::size_t t, const MatrixView<T>& X, loss::Loss& loss,
                       double* scores) = 0;

  // Throws InvalidArgument (naming `what`) if the family cannot use X's rows, e.g. NaN for similarities.
  virtual void check_rows(const MatrixView<T>& X, const std::string& what) const = 0;
};

// The training rows: rows[r] is the row of X that training row r is (empty: the identity), class_begin
// the class blocks when rows are sorted by class (empty otherwise); sample_weight in X's row order.
struct TrainingRows {
  const std::vector<std::size_t>& rows;
  const std::vector<std::size_t>& class_begin;
  const double* sample_weight;
};

// Trees (thesis §4.4): bins X, then grows one tree per iteration (QuickBoost, subsampling heuristics).
// `distributed` (null for a local fit): this participant's rows only, the global bin edges and reductions.
template <typename T>
std::unique_ptr<Family<T>> make_tree_family(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows,
                                            int n_threads, const DistributedPart* distributed = nullptr);

// Localized Similarities (thesis Ch. 5): standardises X (no NaN or inf allowed), then selects one
// similarity per iteration (similarity_select.hpp). Needs a loss with real-valued steps (REBEL).
template <typename T>
std::unique_ptr<Family<T>> make_similarity_family(MatrixView<T> X, const TrainParams& params,
                                                  const TrainingRows& rows, std::size_t n_classes, int n_threads);

// Regression trees (docs/guide/regression.md): bins X, then grows one regression tree per iteration on the
// squared-error loss's residuals (tree/variance_grower.hpp); leaves are real.
template <typename T>
std::unique_ptr<Family<T>> make_regression_family(MatrixView<T> X, const TrainParams& params,
                                                  const TrainingRows& rows, int n_threads);

// Trees and similarities (docs/guide/similarity.md "Hybrid"): per iteration both families fit a
// candidate and the one whose step reaches the lower REBEL training loss is kept.
template <typename T>
std::unique_ptr<Family<T>> make_hybrid_family(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows,
                                              std::size_t n_classes, int n_threads);

// The family params.learner names.
template <typename T>
std::unique_ptr<Family<T>> make_family(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows,
                                       std::size_t n_classes, int n_threads, const DistributedPart* distributed);

}  // namespace rebelboost::learner
