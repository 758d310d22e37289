// Training entry point: raw X, class indices, optional sample weights and parameters in; a Model out.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"

namespace rebelboost {

// How the step vector of a real-valued learner (a Localized Similarity) is chosen, and how candidate
// learners are compared.
enum class StepRule : std::int32_t {
  // Per class, the exact minimiser of REBEL's loss along f (1-D convex: safeguarded Newton), smoothed like
  // the closed form; candidates ranked by sum_k sqrt(S_k^2 - r_k^2) (r_k = sum_n s_nk f_n), the loss the
  // exact step is guaranteed to reach. The training loss falls every iteration.
  kExact = 0,
  // The thesis's Eq. 5.3 as written: candidates ranked and the step taken in closed form on sign(f),
  // then the real f applied. No guarantee that the loss falls.
  kSign = 1,
};

// Localized Similarities (thesis Ch. 5), used when TrainParams::learner is kSimilarity (REBEL only).
struct SimilarityParams {
  StepRule step_rule = StepRule::kExact;
  // One-point learners: tau = tau_ratio * (squared distance from the anchor to its nearest distinct
  // training point), in (0, 1): below it, the anchor is isolated (f > 0 there only).
  double tau_ratio = 0.5;
  // Two-point candidates visited per iteration (steps 4-6 of §5.4), nearest to the anchor first; 0: until
  // every point of the other binarized class has been removed, the thesis's procedure. At 256, sets with up
  // to a few hundred candidates per learner are unchanged (wine, breast cancer, Sonar, Ionosphere, Pima: at
  // most 144), and on 5 000 x 30 (about 1 700 per learner) a learner costs a quarter at the same error per
  // learner (docs/guide/similarity.md "Candidates").
  int max_candidates = 256;
  // How features are scaled before distances: 0 = each by its own standard deviation (features in
  // different units); 1 = all by one scale, the root mean square of the standard deviations (features in
  // the same unit, e.g. pixels: rare pixels are not blown up). Each feature is centred on its mean.
  int scaling = 0;
  // Memory, in MiB, for the squared-distance columns (N doubles each) the selection keeps across
  // iterations (a visited anchor's or candidate's column is then not computed again: O(N K) instead of
  // O(N d) per candidate). Never more than N columns are kept: the default holds all of them up to
  // N = 11 585. Least recently used columns give way when full; the model never depends on it. >= 0 (0: no
  // cache; infinity: every column).
  double distance_cache_mb = 1024.0;
};

struct TrainParams {
  LossKind loss = LossKind::kAdaBoost;
  // REBEL's surrogate g (thesis §4.3, docs/guide/rebel.md "The loss family"): the exponential (closed-form steps), the
  // logistic or the squared one (steps by safeguarded Newton; root split by its Newton gain, full scan).
  // Must stay kExponential for the binary losses and for similarities.
  RebelG rebel_g = RebelG::kExponential;
  // kSimilarity and kHybrid need the REBEL loss; the tree options below are unused by kSimilarity
  LearnerKind learner = LearnerKind::kTree;
  SimilarityParams similarity;
  int n_estimators = 200;
  int max_depth = 1;              // 1..8
  int n_bins = 256;               // value bins + 1 missing bin, 3..256
  double learning_rate = 1.0;     // shrinkage multiplying every step a_t (0 < lr)
  int n_threads = 0;              // <= 0: all cores; at most 4 per core; the model never depends on it
  std::size_t bin_subsample = 200000;  // rows used to find bin edges when there are more
  std::int64_t bin_seed = -1;          // < 0: evenly spaced rows; >= 0: seeded random rows
  // QuickBoost (thesis Ch. 3): prune features whose preliminary error on the heaviest rows already
  // loses. 0 = off (full scan), 1 = on, 2 = auto (per node, from measured costs). Same model in every mode.
  int quick = 2;
  double quick_eta = 0.9;   // mass of the first subset
  int quick_chunks = 20;    // further subsets
  // Split criterion of the tree layers searched with scalar values (all layers of the binary losses, the
  // layers below the root for REBEL): 0 = the loss itself (weighted error for AdaBoost), 1 = weighted Gini
  // impurity, 2 = weighted entropy (information gain), as scikit-learn's trees. QuickBoost pruning applies
  // to each (its bound per criterion: docs/quickboost.md); a distributed fit prunes with 0 only.
  int criterion = 0;
  // Subsampling heuristics the thesis compares QuickBoost with (they change the model; QuickBoost composes
  // with each). Per iteration, only some rows / features are searched; the step uses every row.
  double weight_trim = 1.0;       // keep the heaviest rows holding this fraction of the weight (Friedman et al.)
  double subsample = 1.0;         // StochasticBoost: each row searched with this probability
  double feature_fraction = 1.0;  // LazyBoost: this fraction of the features searched
  std::int64_t seed = 0;          // for subsample and feature_fraction (same seed -> same model)
  // VEB-Boost: weight of the sample-variance penalty, in [0, 1] (0.5 in the paper's experiments).
  double veb_lambda = 0.5;
  // REBEL: cost matrix C (n_classes x n_classes, row-major; C[y][k] = cost of predicting k for class y):
  // zero diagonal, finite, >= 0, no all-zero row. Empty: uniform costs (1 off the diagonal).
  std::vector<double> cost_matrix;
  // Smoothing added to both weight sums of the closed-form step, as a fraction of the total weight;
  // < 0 selects the default 1 / (K' max(n_samples, sum of sample weights)), K' = 1 for the binary losses
  // and n_classes for REBEL (Schapire & Singer's 1/(N K) for weights over (sample, class) pairs; sample
  // weights count as frequencies). It caps |a| near ln(N K') / 2, and REBEL with K = 2 and uniform
  // costs gets exactly AdaBoost's smoothing.
  double smoothing = -1.0;
  // Regression trees (LossKind::kSquaredError): a split must leave each side at least this much sample
  // weight, in units of the mean sample weight (without sample weights: this many rows). >= 1.
  int min_samples_leaf = 20;
  // Hybrids (LearnerKind::kHybrid): the tree candidate must cut the training loss (1 + tree_penalty) times
  // as much as the similarity candidate to be kept (docs/guide/similarity.md "Hybrid"). 0: the lower loss
  // wins; large: similarities only (a tree is kept when the similarity cuts nothing). >= 0, finite; other
  // learners need 0.
  double tree_penalty = 0.0;
};

// What one boosting iteration did; passed to the callback and kept in TrainResult::history.
struct IterationInfo {
  int iteration = 0;        // 0-based
  double train_loss = 0.0;  // normalised surrogate loss after this iteration (1 at the start)
  double weighted_error = 0.0;  // binary losses: weighted error of f_t before the step
  int tree_depth = 0;
  std::int64_t bin_accumulations = 0;  // histogram adds performed (sample x feature)
  int quick_nodes = 0;                 // nodes searched with QuickBoost pruning
  int full_nodes = 0;                  // nodes searched by the full scan
  int features_pruned = 0;             // features pruned over all quick nodes
  int heavy_rebuilds = 0;              // times the pruned pass's cached heavy rows were (re)built
  double mass90_fraction = -1.0;       // root: estimated fraction of rows holding 90 % of the mass (-1: not computed)
  bool replayed = false;               // a tree of TrainOptions::init_model replayed (warm start): no search ran
  std::vector<double> eval_loss;       // per eval set: the loss on it, normalised like train_loss (1 at H = 0)
  // Per eval set: its scores H after this iteration (n_rows x K, row-major). Valid during the callback
  // only; empty in TrainResult::history.
  std::vector<const double*> eval_scores;
  int candidates = 0;                  // similarities: two-point candidates visited (steps 4-6 of §5.4)
  LearnerKind learner = LearnerKind::kTree;  // the kind of the learner kept (a hybrid fit: the family that won)
};

// Called after every iteration; return false to stop training early (the iteration is kept).
using IterationCallback = std::function<bool(const IterationInfo&)>;

// Labelled data watched during training (validation data for early stopping and progress): the booster
// keeps its scores and its loss up to date after every tree, at the cost of evaluating one tree on it.
template <typename T>
struct EvalSet {
  MatrixView<T> X;                        // the training data's features, in the same order
  const std::int32_t* y = nullptr;        // class indices in [0, n_classes) (classifiers)
  const double* sample_weight = nullptr;  // null: all ones; otherwise finite, >= 0, positive sum
  const double* target = nullptr;         // real targets, finite (regression: train_regressor); last, so that
                                          // {X, y, sample_weight} initialises a classifier's set
};

// Distributed training (docs/distributed.md): every participant calls train() with the same parameters on
// its own rows. Each call below is made by all participants in the same order with arrays of the same
// length, and must leave in `data` the element-wise sum (or maximum) over all of them. Every total of the
// fit is an integer (histograms, counts) or the digits of an exact sum (util/exact_sum.hpp), so the model
// is the same, bit for bit, for any split of the rows between participants: a local fit's model.
class Reducer {
 public:
  virtual ~Reducer() = default;
  virtual void sum(std::int64_t* data, std::size_t n) = 0;
  virtual void max(std::int64_t* data, std::size_t n) = 0;
};

// One participant's part of a distributed fit (trees only: AdaBoost, VEB-Boost, REBEL).
struct DistributedPart {
  Reducer* reducer = nullptr;                  // required
  // Per feature, the bin edges every participant uses: those a local fit finds on its bin sample
  // (data::subsample_rows of the global rows, rows with zero weight dropped), found once for all.
  std::vector<std::vector<double>> bin_edges;
  // The global index of each local row (X's rows), for the per-row random draws of `subsample`.
  const std::uint64_t* global_rows = nullptr;
};

// What a training run may do besides fitting: where it starts, what it watches, when it stops.
template <typename T>
struct TrainOptions {
  // Warm start: the trees of this model (trained with the same parameters on the same data) are replayed
  // through the loss first (their outputs on X and their stored steps restore the loss's state exactly),
  // then training continues up to params.n_estimators trees; iteration t draws the random streams of
  // iteration t. The result equals training params.n_estimators trees at once, bit for bit.
  const Model* init_model = nullptr;
  std::vector<EvalSet<T>> eval_sets;
  IterationCallback callback;
  // Polled between iterations and between tree layers: once true, training ends within about one layer's
  // work with stop_reason "interrupted", keeping the finished iterations. Any thread may set it.
  const std::atomic<bool>* stop = nullptr;
  // Set for one participant of a distributed fit (X holds its rows only; it may hold none).
  const DistributedPart* distributed = nullptr;
};

struct TrainResult {
  Model model;
  std::vector<IterationInfo> history;
  // "n_estimators", "no_edge", "perfect_fit", "callback", "interrupted" (TrainOptions::stop), or "diverged":
  // the next tree's step was not finite, would have let a score exceed kMaxAbsScore, or made the training
  // loss non-finite or rise (a learning_rate of 2 or more overshoots); that tree is not kept and
  // stop_message says what happened.
  std::string stop_reason;
  std::string stop_message;  // empty unless stop_reason is "diverged"
  // Seconds of the whole fit per stage, in a fixed order of stage names ("other", "setup", "binning",
  // ... "evaluation"; util/stage_clock.hpp): the stages partition the fit, so each clock's seconds sum to
  // its total. Read on the training thread between stages, never inside parallel loops.
  struct StageSeconds {
    std::string stage;
    double wall = 0.0;
    double thread_cpu = 0.0;   // CPU of the training thread
    double process_cpu = 0.0;  // CPU of the process: every thread (OpenMP threads spinning at a barrier too)
  };
  std::vector<StageSeconds> stage_seconds;
};

// y[n] is a class index in [0, n_classes); binary losses need n_classes == 2 (class 1 is y = +1).
// sample_weight may be null (all ones); weights must be finite and >= 0 with a positive sum.
// Throws InvalidArgument on any violated precondition (shapes, inf in X, bad labels, bad weights).
template <typename T>
TrainResult train(MatrixView<T> X, const std::int32_t* y, const double* sample_weight,
                  std::size_t n_classes, const TrainParams& params, const TrainOptions<T>& options);

// Regression (docs/guide/regression.md): gradient boosting of regression trees on the squared error;
// params.loss must be LossKind::kSquaredError. y[n] is a finite real target with |y| <= 1e150; eval sets
// carry EvalSet::target. Weights and every other rule as train(); TrainResult::history's train_loss and
// eval_loss are weighted mean squared errors.
template <typename T>
TrainResult train_regressor(MatrixView<T> X, const double* y, const double* sample_weight, const TrainParams& params,
                            const TrainOptions<T>& options);

// The same without options beyond a callback.
template <typename T>
TrainResult train(MatrixView<T> X, const std::int32_t* y, const double* sample_weight,
                  std::size_t n_classes, const TrainParams& params,
                  const IterationCallback& callback = {}) {
  TrainOptions<T> options;
  options.callback = callback;
  return train(X, y, sample_weight, n_classes, params, options);
}

}  // namespace rebelboost
