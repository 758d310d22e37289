// The hybrid family (docs/guide/similarity.md "Hybrid"): each iteration the tree family and the similarity
// family fit their best candidate on the same weights; the one whose step reaches the lower REBEL training
// loss is kept, the tree's cut in the loss first divided by 1 + TrainParams::tree_penalty. The model holds
// both kinds in the order they were kept (Model::order). With two threads, and where that pays
// (families_at_once_pay, HybridFamily::at_once), the two candidates are fitted at the same time, one family
// per thread (fit_concurrently; docs/guide/similarity.md "Speed").
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "learner/family.hpp"
#include "learner/similarity_select.hpp"
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

// Whether two threads should go one to each family rather than both to each in turn: when neither family's
// heaviest pass would use a second thread well, i.e. the tree's root (its K-vector histograms over every row
// and feature, multiclass_split.cpp: N d K steps) runs on one thread, and one batch of the similarity's
// measure pass (SimilaritySelector::measure_work of N rows and kBatch candidates) is work for fewer than
// four threads by its own rule. Measured at two threads with OpenMP's default policy, 10 classes, d = 30
// (bench/results/hybrid_speed_compare.md): at once was 1.35x faster at 3 000 rows and 1.11x at 5 000, and
// 0.87x at 10 000 and 0.89x at 20 000 rows, where both families' passes use two threads well; on
// Fashion-MNIST 10k (784 features: the trees' histograms) the fits took 1.5x longer at once. The bounds
// count in util::kWorkPerThread, not in the REBELBOOST_WORK_PER_THREAD that the tests lower (that one
// decides whether an iteration is worth a region at all: HybridFamily::at_once). Never changes the model.
bool families_at_once_pay(std::size_t n_rows, std::size_t n_features, std::size_t n_classes, int max_candidates) {
  const std::size_t unit = util::kWorkPerThread;
  const std::size_t root = n_rows * n_features * n_classes;
  const std::size_t per_batch = max_candidates > 0 ? std::min<std::size_t>(SimilaritySelector::kBatch, max_candidates)
                                                   : SimilaritySelector::kBatch;
  std::size_t batch = SimilaritySelector::measure_work(n_rows, per_batch, n_classes);
  if (util::waiting_threads_spin()) batch /= 2;  // threads_for_repeated's discount
  return root < 2 * unit && batch < 4 * unit;
}

template <typename T>
class HybridFamily final : public Family<T> {
 public:
  // concurrent: two threads, one per family where an iteration's work is worth it (at_once).
  HybridFamily(std::unique_ptr<Family<T>> trees, std::unique_ptr<Family<T>> similarities, std::size_t n_rows,
               std::size_t n_classes, double tree_penalty, bool concurrent, int max_candidates)
      : trees_(std::move(trees)),
        similarities_(std::move(similarities)),
        signed_(n_rows * n_classes),
        tree_penalty_(tree_penalty),
        concurrent_(concurrent),
        n_rows_(n_rows),
        n_classes_(n_classes),
        candidates_(max_candidates > 0 ? static_cast<std::size_t>(max_candidates) : n_rows) {}

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
  // that thread then waits for the similarity to "selection" (fit_concurrently).
  void set_stage_clock(util::StageClock* clock) override {
    clock_ = clock;
    trees_->set_stage_clock(clock);
    similarities_->set_stage_clock(clock);
  }

  // Both candidates, ranked by the training loss their own step reaches (tree_kept: the tree's handicap,
  // ties). A family without an edge loses to one with an edge.
  loss::Loss::Step fit(loss::Loss& loss, int iteration, IterationInfo& info) override {
    loss::Loss::Step tree_step, similarity_step;
    if (at_once()) {
      fit_concurrently(loss, iteration, info, tree_step, similarity_step);
    } else {
      tree_step = trees_->fit(loss, iteration, info);
      similarity_step = similarities_->fit(loss, iteration, info);
    }
    candidates_ = static_cast<std::size_t>(std::max(info.candidates, 1));
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

  // Whether this iteration fits the two candidates at the same time: with two threads, when the
  // similarity's measure pass (SimilaritySelector::measure_work of N rows and the last iteration's
  // candidates) is work for two threads by the rule of the regions that run in every iteration
  // (threads_for_repeated). Below it the region's start and barrier cost more than they save, and on a busy machine a spinning second thread that lost its core makes every iteration wait: a
  // 300-row hybrid fit at two threads, beside another 2-thread job, took 395 ms at once against 89 ms in
  // turn. The choice never changes the model.
  bool at_once() const {
    if (!concurrent_) return false;
    return util::threads_for_repeated(SimilaritySelector::measure_work(n_rows_, candidates_, n_classes_), 2) >= 2;
  }

  // Both families' fit at the same time: the training thread (thread 0: the stage clock's, and index 0 of
  // the tree code's per-thread scratch) fits the tree, thread 1 the similarity. Each fit only reads the
  // loss and writes its own fields of `info` (family.hpp), and neither result depends on the threads, so
  // the candidates are those of the sequential fit, bit for bit. The regions the families open inside run
  // on their one thread (OpenMP's default nesting: one active level). A team of one (the runtime gave no
  // second thread) fits both in turn. An exception is rethrown after both, the tree's first.
  void fit_concurrently(loss::Loss& loss, int iteration, IterationInfo& info, loss::Loss::Step& tree_step,
                        loss::Loss::Step& similarity_step) {
    std::exception_ptr error[2];
    similarities_->set_stage_clock(nullptr);  // the clock is the training thread's
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
    similarities_->set_stage_clock(clock_);
    for (const std::exception_ptr& e : error)
      if (e) std::rethrow_exception(e);
  }

  std::unique_ptr<Family<T>> trees_;
  std::unique_ptr<Family<T>> similarities_;
  std::vector<double> signed_;  // the loss's signed weights s_nk (n x K)
  std::vector<double> f_;       // a candidate's outputs on the training rows
  LearnerKind winner_ = LearnerKind::kTree;  // the family of the pending learner
  double tree_penalty_;                        // TrainParams::tree_penalty
  bool concurrent_;                            // two threads: at_once
  std::size_t n_rows_, n_classes_;
  std::size_t candidates_;                     // similarity candidates of the last iteration (at_once)
  util::StageClock* clock_ = nullptr;
};

}  // namespace

template <typename T>
std::unique_ptr<Family<T>> make_hybrid_family(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows,
                                              std::size_t n_classes, int n_threads) {
  auto similarities = make_similarity_family(X, params, rows, n_classes, n_threads);  // checks X and the loss first
  auto trees = make_tree_family(X, params, rows, n_threads);
  // Two threads: one family each where that pays. At 3 000 x 30 (10 classes) a tree took 1.70 ms on one
  // thread and 1.86 ms on two, a similarity 3.66 and 2.81 ms, so the two in turn on both threads took longer
  // than the slower of the two alone (docs/guide/similarity.md "Speed"). More threads keep the families in
  // turn, each with every thread: one family per thread would leave the rest idle (nesting is off by
  // default).
  const bool concurrent = util::resolve_threads(n_threads) == 2 &&
                          families_at_once_pay(X.n_rows, X.n_cols, n_classes, params.similarity.max_candidates);
  return std::make_unique<HybridFamily<T>>(std::move(trees), std::move(similarities), X.n_rows, n_classes,
                                             params.tree_penalty, concurrent, params.similarity.max_candidates);
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
