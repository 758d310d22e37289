// The boosting loop: per iteration, the learner family fits one weak learner on the loss's weights, the
// step is shrunk and checked, and the family applies the learner to the loss and appends it to the model.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <string>

#include <unistd.h>

#include "boost/eval_watch.hpp"
#include "learner/family.hpp"
#include "loss/cost_matrix.hpp"
#include "loss/loss.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/param_bounds.hpp"
#include "rebelboost/train.hpp"
#include "util/format.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"
#include "util/stage_clock.hpp"

namespace rebelboost {

namespace {

// Checks shapes, labels and weights; returns (the number of rows, the exact sum of sample weights) over every
// participant (a distributed part may hold no rows; the whole fit needs one).
std::pair<std::size_t, double> check_data(std::size_t n_rows, std::size_t n_cols, const std::int32_t* y,
                                          const double* target, const double* sample_weight, std::size_t n_classes,
                                          Reducer* reducer) {
  if (n_rows == 0 && reducer == nullptr) throw InvalidArgument("X has 0 samples; at least 1 is required");
  if (n_cols == 0) throw InvalidArgument("X has 0 features; at least 1 is required");
  if (n_cols > kMaxFeatures)
    throw InvalidArgument("X has " + std::to_string(n_cols) + " features, more than the limit kMaxFeatures = " +
                          std::to_string(kMaxFeatures));
  if (n_classes > kMaxClasses)
    throw InvalidArgument(std::to_string(n_classes) + " classes, more than the limit kMaxClasses = " +
                          std::to_string(kMaxClasses));
  if (n_rows > static_cast<std::size_t>(UINT32_MAX)) throw InvalidArgument("X has too many samples (max 2^32 - 1)");
  if (target != nullptr) boost::check_targets(target, n_rows, "");
  for (std::size_t i = 0; y != nullptr && i < n_rows; ++i)
    if (y[i] < 0 || static_cast<std::size_t>(y[i]) >= n_classes)
      throw InvalidArgument("label index " + std::to_string(y[i]) + " at row " + std::to_string(i) +
                            " is outside [0, " + std::to_string(n_classes) + ")");
  std::int64_t n_total = static_cast<std::int64_t>(n_rows);
  util::reduce_counts(&n_total, 1, reducer);
  if (n_total == 0) throw InvalidArgument("X has 0 samples; at least 1 is required");
  util::ExactSum weights;
  for (std::size_t i = 0; i < n_rows; ++i) {
    const double v = sample_weight ? sample_weight[i] : 1.0;
    if (!std::isfinite(v)) throw InvalidArgument("sample_weight contains a non-finite value at row " + std::to_string(i));
    if (v < 0.0) throw InvalidArgument("sample_weight contains a negative value at row " + std::to_string(i));
    weights.add(v);
  }
  const double total = util::reduced_value(weights, reducer);
  if (!(total > 0.0)) throw InvalidArgument("sample_weight sums to zero; at least one weight must be positive");
  if (!std::isfinite(total))
    throw InvalidArgument("sample_weight sums to more than the largest double; divide the weights by a constant");
  return {static_cast<std::size_t>(n_total), total};
}

// Sample weights multiplied by the power of two that brings the largest into [0.5, 1): exact for normal
// numbers (the model does not change), and weights as small as 5e-324 or near 1e308 neither vanish nor
// overflow inside any loss, so all three treat them alike. Weights are finite, >= 0, with a positive sum.
std::vector<double> scaled_weights(const double* sample_weight, std::size_t n, Reducer* reducer) {
  std::vector<double> w(sample_weight, sample_weight + n);
  int exponent = 0;
  if (n > 0) std::frexp(*std::max_element(w.begin(), w.end()), &exponent);
  std::int64_t largest = n > 0 ? exponent : std::numeric_limits<std::int32_t>::min();  // of the largest weight, everywhere
  util::reduce_max(&largest, 1, reducer);
  exponent = static_cast<int>(largest);
  for (double& v : w) v = std::ldexp(v, -exponent);
  return w;
}

// REBEL keeps K weights per sample (w+, their fixed-point copy, a masked copy when subsampling): refuse a
// fit whose K x n_samples state alone would not fit in the machine's memory, before allocating any of it.
void check_rebel_memory(std::size_t n, std::size_t K) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  const double needed = 24.0 * static_cast<double>(n) * static_cast<double>(K);
  if (needed > memory)
    throw InvalidArgument("REBEL with " + std::to_string(K) + " classes on " + std::to_string(n) + " samples needs about " +
                          std::to_string(static_cast<long long>(needed / (1 << 30))) +
                          " GiB (24 bytes x n_samples x n_classes), more than this machine's " +
                          std::to_string(static_cast<long long>(memory / (1 << 30))) + " GiB of memory");
}

// Why learner t must not be added (empty if it may): its step after shrinkage is not finite or would let
// a score exceed kMaxAbsScore (Model::validate would reject the model).
std::string step_overflow(const std::vector<double>& a, const std::vector<double>& score_bound, int t) {
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!std::isfinite(a[k]) || !(score_bound[k] + std::fabs(a[k]) <= kMaxAbsScore))
      return "the step of learner " + std::to_string(t) + " (" + util::format_number(a[k]) +
             " for output " + std::to_string(k) + ") would let the scores exceed kMaxAbsScore = 1e300";
  return "";
}

// Why training diverged at learner t (empty if not): its training loss is not finite, or rose although the
// step is the loss's (smoothed) minimiser along the learner (Step::minimises): with learning_rate < 2 the
// loss then never rises (it is convex along the step), so a rise means the shrunk step overshot.
std::string loss_rise(double before, double after, int t, bool step_minimises) {
  if (!std::isfinite(after))
    return "the training loss became " + util::format_number(after) + " at iteration " + std::to_string(t);
  if (step_minimises && after > before * (1.0 + 1e-9))
    return "the training loss rose from " + util::format_number(before) + " to " + util::format_number(after) + " at iteration " +
           std::to_string(t);
  return "";
}

// The loss of params.loss for these labels and weights (rows sorted by class for REBEL's root search).
// `weighted`: the fit has sample weights (said apart from the pointer: a participant of a distributed fit
// without rows has none to point to, yet takes part in the weights' reduction).
std::unique_ptr<loss::Loss> make_training_loss(const TrainParams& params, const std::int32_t* y, const double* target,
                                               const double* sample_weight, bool weighted, std::size_t n,
                                               std::size_t n_classes, double smoothing, int n_threads,
                                               Reducer* reducer) {
  std::vector<double> w_scaled;
  if (weighted) {
    w_scaled = scaled_weights(sample_weight, n, reducer);
    sample_weight = w_scaled.data();
  }
  switch (params.loss) {
    case LossKind::kAdaBoost:
    case LossKind::kVebBoost:
      if (n_classes != 2)
        throw InvalidArgument(std::string(loss_name(params.loss)) + " is a binary loss and needs exactly 2 classes, got " +
                              std::to_string(n_classes) + "; use the REBEL loss for multi-class problems");
      if (params.loss == LossKind::kAdaBoost) return loss::make_adaboost(y, sample_weight, n, smoothing, n_threads, reducer);
      return loss::make_veb(y, sample_weight, n, smoothing, n_threads, params.veb_lambda, reducer);
    case LossKind::kRebel: {
      if (n_classes < 2) throw InvalidArgument("REBEL needs at least 2 classes, got " + std::to_string(n_classes));
      check_rebel_memory(n, n_classes);
      const std::vector<double> cost = loss::checked_cost_matrix(params.cost_matrix, n_classes);
      return loss::make_rebel_g(params.rebel_g, y, sample_weight, n, n_classes, cost, smoothing, n_threads, reducer);
    }
    case LossKind::kSquaredError:
      if (reducer != nullptr) throw InvalidArgument("the regressor does not train distributed yet");
      return loss::make_squared_error(target, sample_weight, n, n_threads);
  }
  throw InvalidArgument("unknown loss kind " + std::to_string(static_cast<std::uint32_t>(params.loss)));
}

// Warm start: the model to continue must come from the same loss, data shape and data (same bias).
void check_init_model(const Model& init, const Model& fresh, const TrainParams& params) {
  if (init.loss == fresh.loss && init.g != fresh.g)
    throw InvalidArgument(std::string("warm start: the model to continue was trained with REBEL's ") + rebel_g_name(init.g) +
                          " loss, this training asks for the " + rebel_g_name(fresh.g) + " loss; use the same loss");
  if (init.loss != fresh.loss || init.n_features != fresh.n_features || init.n_outputs != fresh.n_outputs)
    throw InvalidArgument("warm start: the model to continue was trained with another loss, feature count or class count");
  if (init.learner != fresh.learner)
    throw InvalidArgument(std::string("warm start: the model to continue has ") + learner_name(init.learner) +
                          " learners, this training " + learner_name(fresh.learner) + " learners");
  if (init.bias != fresh.bias)
    throw InvalidArgument("warm start: the model to continue starts from another bias, so it was trained on other "
                          "labels or sample weights; train it again on this data");
  if (init.n_learners() > static_cast<std::size_t>(std::max(params.n_estimators, 0)))
    throw InvalidArgument("warm start: n_estimators=" + std::to_string(params.n_estimators) + " is less than the " +
                          std::to_string(init.n_learners()) + " learners of the model to continue");
}

// Rows in class blocks (stable) for REBEL's root search and the impurity criteria: the order trained on.
// The model does not depend on the row order (exact fixed-point sums, ties broken by feature and bin).
struct ClassOrder {
  std::vector<std::size_t> rows;         // empty: X's own order
  std::vector<std::size_t> class_begin;  // K + 1 offsets of the class blocks
  std::vector<std::int32_t> y;
  std::vector<double> w;
};

ClassOrder class_order(const std::int32_t* y, const double* sample_weight, std::size_t n, std::size_t n_classes) {
  ClassOrder order;
  order.class_begin.assign(n_classes + 1, 0);
  for (std::size_t i = 0; i < n; ++i) ++order.class_begin[static_cast<std::size_t>(y[i]) + 1];
  for (std::size_t c = 0; c < n_classes; ++c) order.class_begin[c + 1] += order.class_begin[c];
  std::vector<std::size_t> next(order.class_begin.begin(), order.class_begin.end() - 1);
  order.rows.resize(n);
  for (std::size_t i = 0; i < n; ++i) order.rows[next[static_cast<std::size_t>(y[i])]++] = i;
  order.y.resize(n);
  for (std::size_t r = 0; r < n; ++r) order.y[r] = y[order.rows[r]];
  if (sample_weight) {
    order.w.resize(n);
    for (std::size_t r = 0; r < n; ++r) order.w[r] = sample_weight[order.rows[r]];
  }
  return order;
}

// Default smoothing: one unit-weight sample's share, 1 / max(sum of sample weights, n), per class for
// REBEL. Sample weights count as frequencies (weight 2 == the row twice gives the same model); weights
// that sum to less than n (e.g. normalised to 1) fall back to 1 / n instead of over-smoothing. Both count
// every participant's rows in a distributed fit.
double default_smoothing(const TrainParams& params, std::size_t n_all, double weight_sum, bool weighted,
                         std::size_t n_classes) {
  if (params.smoothing >= 0) return params.smoothing;
  const double weight_total = std::max(static_cast<double>(n_all), weighted ? weight_sum : 0.0);
  const double per_class = params.loss == LossKind::kRebel ? static_cast<double>(n_classes) : 1.0;
  return 1.0 / (per_class * weight_total);
}

// One fit's stages after the checks: the loss and the learner family are made (make_learners), the model
// starts at the loss's bias (start_model), a warm start replays the stored learners (replay), then the
// boosting loop adds learners (boost) until a stop rule holds. Each iteration ends in finish().
template <typename T>
class BoostingRun {
 public:
  BoostingRun(const TrainParams& params, const TrainOptions<T>& options, std::size_t n_classes)
      : params_(params), options_(options), n_classes_(n_classes) {}

  // y: class indices (classifiers) or null; target: real targets (the regressor) or null.
  TrainResult run(MatrixView<T> X, const std::int32_t* y, const double* target, const double* sample_weight) {
    target_ = target;
    clock_.enter(util::Stage::kSetup);
    check_params(params_);
    Reducer* const reducer = options_.distributed ? options_.distributed->reducer : nullptr;
    if (options_.distributed && (reducer == nullptr || params_.learner != LearnerKind::kTree || params_.weight_trim < 1.0))
      throw InvalidArgument("distributed training needs a reducer and grows trees only (no similarities, no weight_trim)");
    if ((target != nullptr) != (params_.loss == LossKind::kSquaredError))
      throw InvalidArgument(target ? "train_regressor needs the squared-error loss" : "the squared-error loss needs train_regressor");
    const auto [n_all, weight_sum] = check_data(X.n_rows, X.n_cols, y, target, sample_weight, n_classes_, reducer);
    n_threads_ = util::resolve_threads(params_.n_threads);
    smoothing_ = default_smoothing(params_, n_all, weight_sum, sample_weight != nullptr, n_classes_);
    make_learners(X, y, sample_weight, reducer);
    start_model(X.n_cols);
    clock_.enter(util::Stage::kOther);
    if (replay()) return timed();
    boost();
    return timed();
  }

 private:
  void make_learners(const MatrixView<T>& X, const std::int32_t* y, const double* sample_weight, Reducer* reducer) {
    const bool sort_by_class = params_.loss == LossKind::kRebel || (params_.criterion != 0 && n_classes_ == 2);
    if (sort_by_class) order_ = class_order(y, sample_weight, X.n_rows, n_classes_);
    const std::int32_t* labels = sort_by_class ? order_.y.data() : y;
    const double* weights = sort_by_class && sample_weight ? order_.w.data() : sample_weight;
    loss_ = make_training_loss(params_, labels, target_, weights, sample_weight != nullptr, X.n_rows, n_classes_,
                               smoothing_, n_threads_, reducer);
    const learner::TrainingRows training_rows{order_.rows, order_.class_begin, sample_weight};  // bin edges: X's order
    clock_.enter(util::Stage::kBinning);
    family_ = learner::make_family(X, params_, training_rows, n_classes_, n_threads_, options_.distributed);
    family_->set_stop_flag(options_.stop);
    family_->set_stage_clock(&clock_);
    clock_.enter(util::Stage::kSetup);
  }

  void start_model(std::size_t n_features) {
    Model& model = result_.model;
    model.loss = params_.loss;
    model.g = params_.rebel_g;
    model.n_features = static_cast<std::uint32_t>(n_features);
    model.n_outputs = static_cast<std::uint32_t>(loss_->n_outputs());
    family_->init_model(model);
    model.bias = loss_->init_bias();
    result_.stop_reason = "n_estimators";
    score_bound_.resize(model.bias.size());  // |bias_k| + sum_t |step_tk| (Model::validate's bound)
    for (std::size_t k = 0; k < score_bound_.size(); ++k) score_bound_[k] = std::fabs(model.bias[k]);
    if (options_.init_model) check_init_model(*options_.init_model, model, params_);
    // Eval sets are whole on every participant: their losses reduce nothing.
    const auto make_loss = [this](const std::int32_t* labels, const double* targets, const double* weights,
                                  std::size_t n_rows) {
      return make_training_loss(params_, labels, targets, weights, weights != nullptr, n_rows, n_classes_, smoothing_,
                                n_threads_, nullptr);
    };
    watch_ = std::make_unique<boost::EvalWatch<T>>(options_.eval_sets, model.bias, n_features, n_classes_,
                                                   params_.loss == LossKind::kSquaredError, make_loss, *family_);
  }

  // Warm start: each stored learner's outputs on the training rows and its stored step bring the loss to the
  // state it had after that iteration, exactly (the same f, step sums and update as when it was fitted).
  // True when the fit stops there.
  bool replay() {
    if (!options_.init_model) return false;
    const Model& init = *options_.init_model;
    for (std::size_t t = 0; t < init.n_learners(); ++t) {
      if (interrupted()) return true;
      const loss::Loss::Step step = family_->replay(*loss_, init, t);
      update(init.step(t), step);
      IterationInfo info;
      info.iteration = start_++;
      info.weighted_error = step.weighted_error;
      info.train_loss = loss_->value();
      info.replayed = true;
      if (!finish(init.step(t), std::move(info), step.perfect_fit)) return true;
    }
    return false;
  }

  void boost() {
    for (int t = start_; t < params_.n_estimators; ++t) {
      if (interrupted()) break;
      IterationInfo info;
      info.iteration = t;
      const loss::Loss::Step step = family_->fit(*loss_, t, info);
      if (interrupted()) break;  // the learner may be unfinished: dropped
      if (!step.has_edge) {
        result_.stop_reason = "no_edge";
        break;
      }
      std::vector<double> a = step.step;
      for (double& v : a) v *= params_.learning_rate;
      std::string diverged = step_overflow(a, score_bound_, t);
      if (diverged.empty()) {
        const double before = loss_->value();
        update(a, step);
        info.train_loss = loss_->value();
        diverged = loss_rise(before, info.train_loss, t, step.minimises);
      }
      if (!diverged.empty()) {  // the loss's state is spoilt; the model stays as it was before learner t
        result_.stop_reason = "diverged";
        result_.stop_message = diverged + " with learning_rate " + util::format_number(params_.learning_rate) +
                               "; training stopped and kept the " + std::to_string(t) + " learners before it";
        break;
      }
      if (!finish(a, std::move(info), step.perfect_fit)) break;
    }
  }

  // Every kept learner, replayed or new, ends its iteration here (the loss already updated); false: stop,
  // with stop_reason set.
  bool finish(const std::vector<double>& a, IterationInfo info, bool perfect_fit) {
    Model& model = result_.model;
    family_->append(model, a, info);
    for (std::size_t k = 0; k < score_bound_.size(); ++k) score_bound_[k] += std::fabs(a[k]);
    const util::StageScope evaluation(&clock_, util::Stage::kEvaluation);
    watch_->add(*family_, model, model.n_learners() - 1, info);
    const bool go_on = !options_.callback || options_.callback(info);
    info.eval_scores.clear();
    result_.history.push_back(std::move(info));
    if (!go_on) result_.stop_reason = "callback";
    else if (perfect_fit) result_.stop_reason = "perfect_fit";
    return go_on && !perfect_fit;
  }

  bool interrupted() {
    const bool stop = options_.stop != nullptr && options_.stop->load(std::memory_order_relaxed);
    if (stop) result_.stop_reason = "interrupted";
    return stop;
  }

  void update(const std::vector<double>& a, const loss::Loss::Step& step) {
    const util::StageScope stage(&clock_, util::Stage::kUpdate);
    family_->apply(*loss_, a, step);
  }

  TrainResult timed() {
    family_->finish_model(result_.model);
    const std::array<util::StageTimes, util::kStageCount> times = clock_.times();
    for (std::size_t s = 0; s < util::kStageCount; ++s)
      result_.stage_seconds.push_back({util::kStageNames[s], times[s].wall, times[s].thread_cpu, times[s].process_cpu});
    return std::move(result_);
  }

  const TrainParams& params_;
  const TrainOptions<T>& options_;
  const std::size_t n_classes_;
  util::StageClock clock_;  // stages of this fit: TrainResult::stage_seconds
  int n_threads_ = 1;
  double smoothing_ = 0.0;
  ClassOrder order_;
  const double* target_ = nullptr;         // the regressor's targets (null for classifiers)
  std::unique_ptr<loss::Loss> loss_;
  std::unique_ptr<learner::Family<T>> family_;
  std::unique_ptr<boost::EvalWatch<T>> watch_;
  std::vector<double> score_bound_;
  int start_ = 0;  // the first iteration boost() fits (after the replayed ones)
  TrainResult result_;
};

}  // namespace

template <typename T>
TrainResult train(MatrixView<T> X, const std::int32_t* y, const double* sample_weight, std::size_t n_classes,
                  const TrainParams& params, const TrainOptions<T>& options) {
  return BoostingRun<T>(params, options, n_classes).run(X, y, nullptr, sample_weight);
}

template <typename T>
TrainResult train_regressor(MatrixView<T> X, const double* y, const double* sample_weight, const TrainParams& params,
                            const TrainOptions<T>& options) {
  if (y == nullptr) throw InvalidArgument("train_regressor needs targets y");
  return BoostingRun<T>(params, options, 1).run(X, nullptr, y, sample_weight);
}

template TrainResult train<float>(MatrixView<float>, const std::int32_t*, const double*, std::size_t,
                                  const TrainParams&, const TrainOptions<float>&);
template TrainResult train<double>(MatrixView<double>, const std::int32_t*, const double*, std::size_t,
                                   const TrainParams&, const TrainOptions<double>&);
template TrainResult train_regressor<float>(MatrixView<float>, const double*, const double*, const TrainParams&,
                                            const TrainOptions<float>&);
template TrainResult train_regressor<double>(MatrixView<double>, const double*, const double*, const TrainParams&,
                                             const TrainOptions<double>&);

}  // namespace rebelboost
