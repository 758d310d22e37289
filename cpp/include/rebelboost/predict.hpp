// Prediction on raw feature values (no binning needed): scores, classes, per-learner outputs, one row at a
// time; for tree models and similarity models alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>

#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"

namespace rebelboost {

inline constexpr std::size_t kAllLearners = std::numeric_limits<std::size_t>::max();

// How predict() evaluates the model.
struct PredictOptions {
  std::size_t n_trees = kAllLearners;  // use the first n_trees learners (all by default)
  int n_threads = 0;                   // <= 0: all cores; results never depend on it
  // Exact early exit: a row stops once its leading class beats every other class by more than the
  // remaining learners can still add (a bound from their |a_t|, with a margin for rounding), so the class
  // is always the one full evaluation gives; the scores left in scratch space are partial.
  bool early_exit = false;
  // Rows are checked every check_every learners (0: a default of 32; rounded up to a multiple of 4). Exact
  // exit without a cascade checks only while at least a quarter of the learners remain.
  std::size_t check_every = 0;
  // The model's soft cascade (Model::cascade, which must be set): at each of its checkpoints a row whose
  // class the exact bound decides leaves with it, and else one whose margin reaches the threshold leaves
  // with its leader; labels may then differ from full evaluation (as calibrated).
  bool cascade = false;
  // Refuse +-inf in X (InvalidArgument), as scikit-learn's validation does. Tree models' batches check a
  // block of rows at a time, in the read that brings the block into cache before it is used, so wide rows
  // are read from memory once (docs/guide/cascades.md); other paths check all of X first. No labels are
  // then defined.
  bool reject_inf = false;
};

// What a soft cascade must keep on new rows, with a stated confidence (calibrate_cascade). "Harm" is a row
// leaving early with a class that costs against the target; the harm rate is its share of the rows it is
// counted over. The calibration certifies, with probability at least `confidence` over the draw of the
// calibration rows (independent of, and distributed like, the new rows), that the harm rate of the chosen
// cascade on new rows is at most `value` (1 - value for recall): see predict/cascade.hpp.
struct CascadeTarget {
  enum class Kind {
    kAccuracyLoss,  // harm: a row full evaluation gets right leaves wrong; over all rows
    kDisagreement,  // harm: a row leaves with another class than full evaluation's; over all rows
    kRecall,        // binary, rows only leave as class 0 (rejected); harm: a positive (class 1) that full
                    // evaluation finds is rejected; over such positives; the target is 1 - value
  };
  Kind kind = Kind::kAccuracyLoss;
  double value = 0.0;           // in [0, 1]; a harm target of 0 cannot be certified (exact early exit has none)
  std::uint32_t every = 0;      // learners between checkpoints; 0: the calibration chooses among 4, 8 and 16
  double confidence = 0.95;     // in (0, 1)
};

// The one check of a checkpoint spacing asked for (CascadeTarget::every when not 0): in [1, n_learners - 1]
// (1 for a model of one learner), so the cascade has a checkpoint before the end; InvalidArgument otherwise.
void check_cascade_every(std::int64_t every, std::size_t n_learners);

// What calibrate_cascade found on the calibration rows for the cascade it chose.
struct CascadeReport {
  std::size_t n_rows = 0;        // rows the harm is counted over
  std::size_t min_rows = 0;      // fewest such rows that can certify the target at the confidence
  std::size_t harmful = 0;       // harmful rows among them
  double target = 0.0;           // the certified harm rate (CascadeTarget, 1 - value for recall)
  double confidence = 0.0;
  double harm = 0.0;             // harmful / n_rows
  double harm_low = 0.0, harm_high = 0.0;  // Clopper-Pearson two-sided interval at `confidence`
  double harm_bound = 0.0;       // one-sided Clopper-Pearson upper bound the test used (at most target)
  double mean_learners = 0.0;    // learners per calibration row
  double learners_low = 0.0, learners_high = 0.0;  // normal-approximation interval at `confidence`
  std::size_t n_learners = 0;    // learners of full evaluation
  std::size_t every = 0;         // the chosen family member: checkpoints every `every` learners,
  double shape = 0.0;            // threshold = scale x (remaining weight)^shape
  double scale = 0.0;
  std::size_t tested = 0;        // configurations tested in sequence (all shapes)
};

// A model compiled for prediction: its trees flattened into arrays once, so every call (a batch or one row)
// starts evaluating at once. Holds its own copy of the model. Thread safe: any number of threads may
// call its const methods at the same time.
//
// Every method gives the same bits as the definition H(x) = a_0 + sum_{t < n_trees} f_t(x) a_t summed in
// learner order, whatever the path (batch, one row), the instruction set or the thread count.
class Predictor {
 public:
  explicit Predictor(Model model);
  ~Predictor();
  Predictor(Predictor&&) noexcept;
  Predictor& operator=(Predictor&&) noexcept;

  const Model& model() const;

  // Scores of every row: out[row * K + k] (K = model().n_outputs). Throws InvalidArgument if X does not
  // have model().n_features columns, or with reject_inf if X holds +-inf (as PredictOptions::reject_inf:
  // a tree model's batch checks each block of rows in the read that brings it into cache; out is then
  // undefined).
  template <typename T>
  void decision_function(MatrixView<T> X, double* out, std::size_t n_trees = kAllLearners, int n_threads = 0,
                         bool reject_inf = false) const;

  // Class index of every row: H > 0 for binary models (K = 1), else argmax_k H_k (the first on ties).
  // n_learners (may be null) receives, per row, how many learners were evaluated.
  template <typename T>
  void predict(MatrixView<T> X, std::int32_t* classes, const PredictOptions& options = {},
               std::uint32_t* n_learners = nullptr) const;

  // f_t(x) in {+1, -1} for the trees t in [first_tree, first_tree + n_trees) (clipped to the model) into
  // out[row * n + t - first_tree], n the number of trees in that range (for staged prediction). Tree
  // models only (InvalidArgument otherwise).
  template <typename T>
  void tree_outputs(MatrixView<T> X, std::int8_t* out, int n_threads = 0, std::size_t first_tree = 0,
                    std::size_t n_trees = kAllLearners) const;

  // f_t(x) for the learners t in [first, first + n) (clipped) into out[row * n' + t - first], n' the number
  // in that range, for either family: +-1 for trees, in [-1, 1] for similarities.
  template <typename T>
  void learner_outputs(MatrixView<T> X, double* out, int n_threads = 0, std::size_t first = 0,
                       std::size_t n = kAllLearners) const;

  // Exact per-feature contributions of the first n_trees trees (path-dependent TreeSHAP with the trees'
  // covers; docs/guide/explanations.md): out[row * K * (d + 1) + k * (d + 1) + j] is feature j's share of
  // score k for j < d (d = model().n_features), and j = d holds the expected value (bias_k plus each
  // tree's step times its cover-weighted mean output), so each row's d + 1 values of class k sum to
  // decision_function's H_k up to rounding. A feature no tree splits on gets exactly 0; NaN is routed as
  // the trees route it. The values do not depend on n_threads. Throws InvalidArgument for a similarity
  // model, a tree model without covers (read from a model file older than format version 5), or X with
  // the wrong number of columns. Cost per row: about leaves x depth^2 steps per tree, whatever K.
  template <typename T>
  void contributions(MatrixView<T> X, double* out, std::size_t n_trees = kAllLearners, int n_threads = 0) const;

  // One row, its feature j at x[j * stride], on the calling thread: scores[0..K) receives H(x). Tree models
  // allocate nothing; similarity models use two small scratch arrays. The caller checks that the row has
  // model().n_features values.
  template <typename T>
  void decision_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t n_trees = kAllLearners) const;

  // Soft-cascade thresholds for `target` (CascadeTarget) from validation rows X with class indices y (see
  // predict/cascade.hpp for the procedure). Set them as Model::cascade of a new Predictor to use them.
  template <typename T>
  Cascade calibrate_cascade(MatrixView<T> X, const std::int32_t* y, const CascadeTarget& target, int n_threads = 0,
                            CascadeReport* report = nullptr) const;

  // One row's class, without allocating; scores[0..K) is scratch space (it holds H(x) afterwards).
  template <typename T>
  std::int32_t predict_row(const T* x, std::ptrdiff_t stride, double* scores, const PredictOptions& options = {},
                           std::uint32_t* n_learners = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes H(x) = a_0 + sum_{t < n_trees} f_t(x) a_t for every row into out[row * K + k], like
// Predictor::decision_function (compiles the model for this call; keep a Predictor to predict repeatedly);
// n_trees counts the model's learners, trees or similarities alike.
// Rows are processed in parallel with n_threads (<= 0: all cores; at most 4 per core); the result does not
// depend on it, nor on the rows predicted beside a row. Extra memory: at most a few times the model's own
// nodes (deep or lopsided trees are walked node by node rather than flattened).
// Throws InvalidArgument if X has the wrong number of columns, or holds NaN for a similarity model
// (similarities compare whole rows; a tree model routes NaN as learned).
template <typename T>
void decision_function(const Model& model, MatrixView<T> X, double* out, int n_threads,
                       std::size_t n_trees = kAllLearners);

// Writes f_t(x) in {+1, -1} for the trees t in [first_tree, first_tree + n_trees) (clipped to the model)
// into out[row * n + t - first_tree], n the number of trees in that range (for staged prediction and
// cascades; a range bounds the memory of the output for models with many trees). Tree models only.
template <typename T>
void tree_outputs(const Model& model, MatrixView<T> X, std::int8_t* out, int n_threads, std::size_t first_tree = 0,
                  std::size_t n_trees = std::numeric_limits<std::size_t>::max());

// Writes f_t(x) for the learners t in [first, first + n) (clipped) into out[row * n' + t - first], n' the
// number in that range: +-1 for trees, in [-1, 1] for similarities. H(x) = a_0 + sum_t f_t(x) a_t, summed
// in t order, is decision_function's.
template <typename T>
void learner_outputs(const Model& model, MatrixView<T> X, double* out, int n_threads, std::size_t first = 0,
                     std::size_t n = std::numeric_limits<std::size_t>::max());

// Per-feature contributions as Predictor::contributions describes (out: n_rows x K x (n_features + 1)).
template <typename T>
void contributions(const Model& model, MatrixView<T> X, double* out, int n_threads, std::size_t n_trees = kAllLearners);

// Class index per row: H > 0 for binary losses (K = 1), argmax_k H_k (first on ties) for REBEL.
void scores_to_classes(const Model& model, const double* scores, std::size_t n_rows, std::int32_t* out);

}  // namespace rebelboost
