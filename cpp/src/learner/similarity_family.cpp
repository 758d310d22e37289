// The similarity family: standardised points, one Localized Similarity per iteration (§5.4), its step
// exact per class (or in closed form on sign(f), StepRule::kSign), anchors collected into the model.
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

#include "learner/family.hpp"
#include "learner/point_set.hpp"
#include "learner/similarity_select.hpp"
#include "learner/standardize.hpp"
#include "model/similarity_function.hpp"
#include "model/similarity_outputs.hpp"
#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

namespace rebelboost::learner {

namespace {

void check_params(const SimilarityParams& p) {
  if (p.step_rule != StepRule::kExact && p.step_rule != StepRule::kSign)
    throw InvalidArgument("similarity step_rule must be 0 (exact) or 1 (sign)");
  if (!(p.tau_ratio > 0.0 && p.tau_ratio < 1.0))
    throw InvalidArgument("similarity tau_ratio must be in (0, 1), got " + std::to_string(p.tau_ratio));
  // max_candidates: check_params(TrainParams) against kParamBounds.
  if (p.scaling != 0 && p.scaling != 1) throw InvalidArgument("similarity scaling must be 0 (per feature) or 1 (global)");
}

template <typename T>
void check_complete(const MatrixView<T>& X, const std::string& what) {
  for (std::size_t r = 0; r < X.n_rows; ++r)
    for (std::size_t c = 0; c < X.n_cols; ++c)
      if (!std::isfinite(static_cast<double>(X(r, c))))
        throw InvalidArgument(what + " contains " + (std::isnan(static_cast<double>(X(r, c))) ? "NaN" : "an infinite value") +
                              " at row " + std::to_string(r) + ", feature " + std::to_string(c) +
                              "; similarity learners compare whole rows, so impute missing values first "
                              "(e.g. sklearn.impute.SimpleImputer)");
}

template <typename T>
class SimilarityFamily final : public Family<T> {
 public:
  SimilarityFamily(Standardization standardization, std::vector<double> points, std::size_t n, std::size_t d,
                   const TrainParams& params, const TrainingRows& rows, std::size_t n_classes, int n_threads)
      : standardization_(std::move(standardization)), points_(std::move(points), n, d, n_threads),
        selector_(points_, n_classes, params.similarity, n_threads), rule_(params.similarity.step_rule),
        rows_(rows.rows), n_threads_(n_threads), signed_(n * n_classes) {}

  void init_model(Model& model) const override {
    model.learner = LearnerKind::kSimilarity;
    model.feature_mean = standardization_.mean;
    model.feature_scale = standardization_.scale;
  }

  void set_stop_flag(const std::atomic<bool>* stop) override { selector_.set_stop_flag(stop); }

  void set_stage_clock(util::StageClock* clock) override { clock_ = clock; }

  loss::Loss::Step fit(loss::Loss& loss, int /*iteration*/, IterationInfo& info) override {
    {
      const util::StageScope stage(clock_, util::Stage::kSplitValues);
      loss.signed_weights(signed_.data());
    }
    {
      const util::StageScope stage(clock_, util::Stage::kSelection);
      SimilaritySelection selection = selector_.select(signed_.data());
      info.candidates = selection.candidates;
      chosen_ = std::move(selection.best);
    }
    const util::StageScope stage(clock_, util::Stage::kStep);
    if (rule_ == StepRule::kExact) return loss.step_real(chosen_.outputs.data());
    signs_.resize(chosen_.outputs.size());
    for (std::size_t m = 0; m < signs_.size(); ++m) signs_[m] = chosen_.outputs[m] >= 0.0 ? 1 : -1;
    loss::Loss::Step step = loss.step(signs_.data());
    step.minimises = false;  // applied with the real f, the closed form on the signs may raise the loss
    return step;
  }

  void pending_outputs(std::vector<double>& f) const override { f = chosen_.outputs; }

  loss::Loss::Step replay(loss::Loss& /*loss*/, const Model& init, std::size_t t) override {
    // The outputs are recomputed from the training points as select() computed them (the same distance
    // columns, tau and q), so the stored step restores the loss's state bit for bit.
    if (init.learner == LearnerKind::kTree || init.feature_mean != standardization_.mean ||
        init.feature_scale != standardization_.scale)
      throw InvalidArgument("warm start: the model to continue was standardised on other data; train it again");
    const Similarity& s = init.similarities[t];
    const std::size_t n = points_.size();
    chosen_ = {s.kind, 0, 0, s.tau, 0.0, std::vector<double>(n, 1.0)};
    if (s.kind == Similarity::Kind::kConstant) return {};
    chosen_.i = training_point(init, s.anchor_i);
    std::vector<double> d_i(n);
    points_.squared_distances(chosen_.i, d_i.data());
    if (s.kind == Similarity::Kind::kOnePoint) {
      for (std::size_t m = 0; m < n; ++m) chosen_.outputs[m] = similarity::one_point(s.tau, d_i[m]);
      return {};
    }
    chosen_.j = training_point(init, s.anchor_j);
    std::vector<double> d_j(n);
    points_.squared_distances(chosen_.j, d_j.data());
    const double q = 0.25 * points_.exact_squared_distance(chosen_.i, chosen_.j);
    for (std::size_t m = 0; m < n; ++m) chosen_.outputs[m] = similarity::two_point(q, d_i[m], d_j[m]);
    return {};
  }

  void apply(loss::Loss& loss, const std::vector<double>& a, const loss::Loss::Step& /*step*/) override {
    loss.update_real(chosen_.outputs.data(), a);
  }

  void append(Model& model, const std::vector<double>& a, IterationInfo& info) override {
    info.learner = LearnerKind::kSimilarity;
    Similarity s;
    s.kind = chosen_.kind;
    s.tau = chosen_.tau;
    s.step = a;
    if (s.kind != Similarity::Kind::kConstant) s.anchor_i = anchor(chosen_.i, model);
    if (s.kind == Similarity::Kind::kTwoPoint) s.anchor_j = anchor(chosen_.j, model);
    model.similarities.push_back(std::move(s));
  }

  void advance(const Model& model, std::size_t t, const MatrixView<T>& X, loss::Loss& loss, double* scores) override {
    const std::vector<double>& a = model.similarities[t].step;
    other_.resize(X.n_rows);
    // One learner on an eval set every iteration: about 3 d steps per row (standardise, two distances), so
    // threads_for keeps the usual few thousand validation rows on the calling thread.
    const int threads = util::threads_for(X.n_rows * (3 * X.n_cols + 10), n_threads_);
    similarity::for_each_similarity_output(
        model, X, t, 1, threads, 256, [](std::size_t, std::size_t) {},
        [&](std::size_t, std::size_t r, double f) { other_[r] = f; });
    for (std::size_t r = 0; r < X.n_rows; ++r)
      for (std::size_t k = 0; k < a.size(); ++k) scores[r * a.size() + k] += other_[r] * a[k];
    loss.update_real(other_.data(), a);
  }

  void check_rows(const MatrixView<T>& X, const std::string& what) const override { check_complete(X, what); }

 private:
  // The training point (its group's first index) that anchor `a` of `init` is; throws unless its stored
  // coordinates are that point's.
  std::uint32_t training_point(const Model& init, std::uint32_t a) {
    if (inverse_rows_.empty() && !rows_.empty()) {
      inverse_rows_.resize(rows_.size());
      for (std::size_t r = 0; r < rows_.size(); ++r) inverse_rows_[rows_[r]] = r;
    }
    const std::uint64_t row = init.anchor_rows[a];
    const std::size_t d = points_.dim();
    if (row >= points_.size())
      throw InvalidArgument("warm start: the model to continue names training row " + std::to_string(row) + " of " +
                            std::to_string(points_.size()));
    const std::size_t point = rows_.empty() ? static_cast<std::size_t>(row) : inverse_rows_[static_cast<std::size_t>(row)];
    for (std::size_t c = 0; c < d; ++c)
      if (points_.point(point)[c] != init.anchors[a * d + c])
        throw InvalidArgument("warm start: training row " + std::to_string(row) +
                              " differs from the anchor the model to continue stored; train it again on this data");
    return points_.group(point);
  }

  // The anchor index of training point `point`, adding it to the model the first time its group of
  // coincident points is used (so an anchor is stored once however many learners use it).
  std::uint32_t anchor(std::uint32_t point, Model& model) {
    const std::uint32_t group = points_.group(point);
    const auto found = anchor_of_group_.find(group);
    if (found != anchor_of_group_.end()) return found->second;
    const auto index = static_cast<std::uint32_t>(model.anchor_rows.size());
    model.anchor_rows.push_back(rows_.empty() ? group : rows_[group]);
    const double* x = points_.point(group);
    model.anchors.insert(model.anchors.end(), x, x + points_.dim());
    anchor_of_group_.emplace(group, index);
    return index;
  }

  Standardization standardization_;
  PointSet points_;
  SimilaritySelector selector_;
  StepRule rule_;
  const std::vector<std::size_t>& rows_;
  int n_threads_;
  util::StageClock* clock_ = nullptr;
  std::vector<double> signed_;
  std::vector<std::int8_t> signs_;
  SimilarityCandidate chosen_;  // the pending learner and its outputs on the training points
  std::vector<double> other_;   // a stored learner's outputs on other data
  std::vector<std::size_t> inverse_rows_;
  std::unordered_map<std::uint32_t, std::uint32_t> anchor_of_group_;
};

}  // namespace

template <typename T>
std::unique_ptr<Family<T>> make_similarity_family(MatrixView<T> X, const TrainParams& params,
                                                  const TrainingRows& rows, std::size_t n_classes, int n_threads) {
  check_params(params.similarity);
  if (params.loss != LossKind::kRebel)
    throw InvalidArgument(std::string("similarity learners need the REBEL loss, got ") + loss_name(params.loss));
  check_complete(X, "X");
  Standardization standardization = fit_standardization(X, rows.sample_weight, params.similarity.scaling == 1);
  std::vector<double> points = standardize(X, standardization, rows.rows);
  return std::make_unique<SimilarityFamily<T>>(std::move(standardization), std::move(points), X.n_rows, X.n_cols,
                                               params, rows, n_classes, n_threads);
}

template std::unique_ptr<Family<float>> make_similarity_family<float>(MatrixView<float>, const TrainParams&,
                                                                      const TrainingRows&, std::size_t, int);
template std::unique_ptr<Family<double>> make_similarity_family<double>(MatrixView<double>, const TrainParams&,
                                                                        const TrainingRows&, std::size_t, int);

}  // namespace rebelboost::learner
