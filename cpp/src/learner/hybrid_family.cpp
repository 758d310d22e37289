// The hybrid family (docs/guide/similarity.md "Hybrid"): each iteration the tree family and the similarity
// family fit their best candidate on the same weights; the one whose step reaches the lower REBEL training
// loss is kept, the tree's cut in the loss first divided by 1 + TrainParams::tree_penalty. The model holds
// both kinds in the order they were kept (Model::order). With two threads the two candidates are fitted at
// the same time, one family per thread (fit_concurrently; docs/guide/similarity.md "Speed").
#include <omp.h>

#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "learner/family.hpp"
#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

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
               std::size_t n_classes, double tree_penalty, bool concurrent)
      : trees_(std::move(trees)),
        similarities_(std::move(similarities)),
        signed_(n_rows * n_classes),
        tree_penalty_(tree_penalty),
        concurrent_(concurrent) {}

  void init_model(Model& model) const override {
    trees_->init_model(model);
    similarities_->init_model(model);  // the standardisation
    model.learner = LearnerKind::kHybrid;
  }

  void set_stop_flag(const std::atomic<bool>* stop) override {
    trees_->set_stop_flag(stop);
    similarities_->set_stop_flag(stop);
  }

  // Concurrent fits charge the tree's stages only (the clock belongs to the training thread), and the time
  // that thread then waits for the similarity to "selection".
  void set_stage_clock(util::StageClock* clock) override {
    clock_ = clock;
    trees_->set_stage_clock(clock);
    similarities_->set_stage_clock(concurrent_ ? nullptr : clock);
  }

  // Both candidates, ranked by the training loss their own step reaches (tree_kept: the tree's handicap,
  // ties). A family without an edge loses to one with an edge.
  loss::Loss::Step fit(loss::Loss& loss, int iteration, IterationInfo& info) override {
    loss::Loss::Step tree_step, similarity_step;
    if (concurrent_) {
      fit_concurrently(loss, iteration, info, tree_step, similarity_step);
    } else {
      tree_step = trees_->fit(loss, iteration, info);
      similarity_step = similarities_->fit(loss, iteration, info);
    }
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

  // Both families' fit at the same time: the training thread (thread 0: the stage clock's, and index 0 of
  // the tree code's per-thread scratch) fits the tree, thread 1 the similarity. Each fit only reads the
  // loss and writes its own fields of `info` (family.hpp), and neither result depends on the threads, so
  // the candidates are those of the sequential fit, bit for bit. The regions the families open inside run
  // on their one thread (OpenMP's default nesting: one active level). A team of one (the runtime gave no
  // second thread) fits both in turn. An exception is rethrown after both, the tree's first.
  void fit_concurrently(loss::Loss& loss, int iteration, IterationInfo& info, loss::Loss::Step& tree_step,
                        loss::Loss::Step& similarity_step) {
    std::exception_ptr error[2];
#pragma omp parallel num_threads(2)
    {
      const int me = omp_get_thread_num();
      try {
        if (me == 0) tree_step = trees_->fit(loss, iteration, info);
        if (me == 1 || omp_get_num_threads() == 1) similarity_step = similarities_->fit(loss, iteration, info);
      } catch (...) {
        error[me] = std::current_exception();
      }
      std::optional<util::StageScope> waiting;
      if (me == 0) waiting.emplace(clock_, util::Stage::kSelection);
#pragma omp barrier
    }
    for (const std::exception_ptr& e : error)
      if (e) std::rethrow_exception(e);
  }

  std::unique_ptr<Family<T>> trees_;
  std::unique_ptr<Family<T>> similarities_;
  std::vector<double> signed_;  // the loss's signed weights s_nk (n x K)
  std::vector<double> f_;       // a candidate's outputs on the training rows
  LearnerKind winner_ = LearnerKind::kTree;  // the family of the pending learner
  double tree_penalty_;                        // TrainParams::tree_penalty
  bool concurrent_;                            // fit_concurrently
  util::StageClock* clock_ = nullptr;
};

}  // namespace

template <typename T>
std::unique_ptr<Family<T>> make_hybrid_family(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows,
                                              std::size_t n_classes, int n_threads) {
  auto similarities = make_similarity_family(X, params, rows, n_classes, n_threads);  // checks X and the loss first
  auto trees = make_tree_family(X, params, rows, n_threads);
  // Two threads: one family each. At 3 750 x 30 (10 classes) a tree took 1.70 ms on one thread and 1.86 ms
  // on two, a similarity 3.66 and 2.81 ms, so the two in turn on both threads took longer than the slower
  // of the two alone (docs/guide/similarity.md "Speed"). More threads keep the families in turn, each with
  // every thread: one family per thread would leave the rest idle (nesting is off by default).
  const bool concurrent = util::resolve_threads(n_threads) == 2;
  return std::make_unique<HybridFamily<T>>(std::move(trees), std::move(similarities), X.n_rows, n_classes,
                                             params.tree_penalty, concurrent);
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
