// The hybrid family (docs/guide/similarity.md "Hybrid"): each iteration the tree family and the similarity
// family fit their best candidate on the same weights; the one whose step reaches the lower REBEL training
// loss is kept, the tree's cut in the loss first divided by 1 + TrainParams::tree_penalty. The model holds
// both kinds in the order they were kept (Model::order).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "learner/family.hpp"
#include "rebelboost/error.hpp"

namespace rebelboost::learner {

namespace {

// REBEL's loss after the step a along f (before shrinkage), up to the constant factor of the weights:
// sum_nk |s_nk| exp(sign(s_nk) f_n a_k) for the signed weights s of Loss::signed_weights. Each family's
// step is the one it would take (the closed form for trees, the exact per-class minimiser for
// similarities), so this is the training loss the iteration reaches with either candidate.
double loss_at(const std::vector<double>& s, const std::vector<double>& f, const std::vector<double>& a) {
  const std::size_t K = a.size();
  double total = 0.0;
  for (std::size_t n = 0; n < f.size(); ++n)
    for (std::size_t k = 0; k < K; ++k) {
      const double v = s[n * K + k];
      total += std::fabs(v) * std::exp((v >= 0 ? 1.0 : -1.0) * f[n] * a[k]);
    }
  return total;
}

// Whether the tree candidate is kept: its cut in the loss, divided by 1 + penalty, is at least the
// similarity's: L - tree >= (1 + penalty) (L - similarity), L = sum |s_nk| the loss before the step. Written
// as tree <= similarity - penalty (L - similarity), so that penalty 0 compares the two losses alone (the
// ranking before the penalty existed, bit for bit). A tie keeps the tree (cheaper to predict).
bool tree_kept(double tree_loss, double similarity_loss, double loss_before, double penalty) {
  return tree_loss <= similarity_loss - penalty * (loss_before - similarity_loss);
}

double total_weight(const std::vector<double>& s) {
  double total = 0.0;
  for (const double v : s) total += std::fabs(v);
  return total;
}

template <typename T>
class HybridFamily final : public Family<T> {
 public:
  HybridFamily(std::unique_ptr<Family<T>> trees, std::unique_ptr<Family<T>> similarities, std::size_t n_rows,
               std::size_t n_classes, double tree_penalty)
      : trees_(std::move(trees)),
        similarities_(std::move(similarities)),
        signed_(n_rows * n_classes),
        tree_penalty_(tree_penalty) {}

  void init_model(Model& model) const override {
    trees_->init_model(model);
    similarities_->init_model(model);  // the standardisation
    model.learner = LearnerKind::kHybrid;
  }

  void set_stop_flag(const std::atomic<bool>* stop) override {
    trees_->set_stop_flag(stop);
    similarities_->set_stop_flag(stop);
  }

  void set_stage_clock(util::StageClock* clock) override {
    trees_->set_stage_clock(clock);
    similarities_->set_stage_clock(clock);
  }

  // Both candidates, ranked by the training loss their own step reaches (tree_kept: the tree's handicap,
  // ties). A family without an edge loses to one with an edge.
  loss::Loss::Step fit(loss::Loss& loss, int iteration, IterationInfo& info) override {
    loss::Loss::Step tree_step = trees_->fit(loss, iteration, info);
    loss::Loss::Step similarity_step = similarities_->fit(loss, iteration, info);
    loss.signed_weights(signed_.data());
    trees_->pending_outputs(f_);
    const double tree_loss = loss_at(signed_, f_, tree_step.step);
    similarities_->pending_outputs(f_);
    const double similarity_loss = loss_at(signed_, f_, similarity_step.step);
    const bool tree_wins = tree_step.has_edge && (!similarity_step.has_edge ||
                                                  tree_kept(tree_loss, similarity_loss, total_weight(signed_),
                                                            tree_penalty_));
    winner_ = tree_wins ? LearnerKind::kTree : LearnerKind::kSimilarity;
    info.learner = winner_;
    return tree_wins ? tree_step : similarity_step;
  }

  void pending_outputs(std::vector<double>& f) const override { family(winner_).pending_outputs(f); }

  loss::Loss::Step replay(loss::Loss& loss, const Model& init, std::size_t t) override {
    if (init.learner != LearnerKind::kHybrid)
      throw InvalidArgument(std::string("warm start: the model to continue has ") + learner_name(init.learner) +
                            " learners, this training hybrid ones");
    const LearnerRef r = init.order[t];
    winner_ = r.kind;
    return family(winner_).replay(loss, init, r.index);
  }

  void apply(loss::Loss& loss, const std::vector<double>& a, const loss::Loss::Step& step) override {
    family(winner_).apply(loss, a, step);
  }

  void append(Model& model, const std::vector<double>& a, IterationInfo& info) override {
    const bool tree = winner_ == LearnerKind::kTree;
    const std::size_t index = tree ? model.trees.size() : model.similarities.size();
    family(winner_).append(model, a, info);
    model.order.push_back({winner_, static_cast<std::uint32_t>(index)});
    info.learner = winner_;
  }

  void finish_model(Model& model) override {
    trees_->finish_model(model);
    similarities_->finish_model(model);
  }

  void advance(const Model& model, std::size_t t, const MatrixView<T>& X, loss::Loss& loss, double* scores) override {
    const LearnerRef r = model.order[t];
    family(r.kind).advance(model, r.index, X, loss, scores);
  }

  void check_rows(const MatrixView<T>& X, const std::string& what) const override {
    similarities_->check_rows(X, what);  // the stricter: no NaN or inf
  }

 private:
  Family<T>& family(LearnerKind kind) const { return kind == LearnerKind::kTree ? *trees_ : *similarities_; }

  std::unique_ptr<Family<T>> trees_;
  std::unique_ptr<Family<T>> similarities_;
  std::vector<double> signed_;  // the loss's signed weights s_nk (n x K)
  std::vector<double> f_;       // a candidate's outputs on the training rows
  LearnerKind winner_ = LearnerKind::kTree;  // the family of the pending learner
  double tree_penalty_;                        // TrainParams::tree_penalty
};

}  // namespace

template <typename T>
std::unique_ptr<Family<T>> make_hybrid_family(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows,
                                              std::size_t n_classes, int n_threads) {
  auto similarities = make_similarity_family(X, params, rows, n_classes, n_threads);  // checks X and the loss first
  auto trees = make_tree_family(X, params, rows, n_threads);
  return std::make_unique<HybridFamily<T>>(std::move(trees), std::move(similarities), X.n_rows, n_classes,
                                             params.tree_penalty);
}

template <typename T>
std::unique_ptr<Family<T>> make_family(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows,
                                       std::size_t n_classes, int n_threads, const DistributedPart* distributed) {
  switch (params.learner) {
    case LearnerKind::kTree:
      if (params.loss == LossKind::kSquaredError) return make_regression_family(X, params, rows, n_threads);
      return make_tree_family(X, params, rows, n_threads, distributed);
    case LearnerKind::kSimilarity: return make_similarity_family(X, params, rows, n_classes, n_threads);
    case LearnerKind::kHybrid: return make_hybrid_family(X, params, rows, n_classes, n_threads);
  }
  throw InvalidArgument("unknown learner kind " + std::to_string(static_cast<std::uint32_t>(params.learner)));
}

#define REBELBOOST_HYBRID_FAMILY(T)                                                                               \
  template std::unique_ptr<Family<T>> make_hybrid_family<T>(MatrixView<T>, const TrainParams&, const TrainingRows&, \
                                                            std::size_t, int);                                     \
  template std::unique_ptr<Family<T>> make_family<T>(MatrixView<T>, const TrainParams&, const TrainingRows&,        \
                                                     std::size_t, int, const DistributedPart*);
REBELBOOST_HYBRID_FAMILY(float)
REBELBOOST_HYBRID_FAMILY(double)
#undef REBELBOOST_HYBRID_FAMILY

}  // namespace rebelboost::learner
