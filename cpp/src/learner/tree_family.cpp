// The tree family: binned X, one tree per iteration with QuickBoost and the subsampling heuristics
// (weight trimming, StochasticBoost rows, LazyBoost features), then the closed-form step.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "data/bin_mapper.hpp"
#include "learner/family.hpp"
#include "learner/sampling.hpp"
#include "learner/tree_covers.hpp"
#include "rebelboost/error.hpp"
#include "tree/grower.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"

namespace rebelboost::learner {

namespace {

// Marks the heaviest rows holding `fraction` of the total mass (ties at the cut all kept): quickselect.
void trim_by_weight(const std::vector<double>& mass, double fraction, std::vector<std::uint8_t>& keep) {
  double total = 0.0;
  for (double m : mass) total += m;
  std::vector<double> v(mass);
  double need = fraction * total;
  std::size_t lo = 0, hi = v.size();
  double cut = 0.0;
  while (lo < hi) {
    const double pivot = v[lo + (hi - lo) / 2];
    auto gt_end = std::partition(v.begin() + static_cast<std::ptrdiff_t>(lo), v.begin() + static_cast<std::ptrdiff_t>(hi),
                                 [&](double x) { return x > pivot; });
    auto eq_end = std::partition(gt_end, v.begin() + static_cast<std::ptrdiff_t>(hi), [&](double x) { return x == pivot; });
    double gt = 0.0, eq = 0.0;
    for (auto it = v.begin() + static_cast<std::ptrdiff_t>(lo); it != gt_end; ++it) gt += *it;
    for (auto it = gt_end; it != eq_end; ++it) eq += *it;
    if (gt >= need && gt_end - v.begin() > static_cast<std::ptrdiff_t>(lo)) {
      hi = static_cast<std::size_t>(gt_end - v.begin());
    } else if (gt + eq >= need) {
      cut = pivot;
      break;
    } else {
      need -= gt + eq;
      lo = static_cast<std::size_t>(eq_end - v.begin());
      cut = 0.0;
    }
  }
  for (std::size_t i = 0; i < mass.size(); ++i) keep[i] = keep[i] && mass[i] >= cut;
}

// f(x) in {+1, -1} of `tree` for rows rows[0..n) of X (rows == null: 0..n), written to out[0..n).
template <typename T>
void tree_outputs_on_rows(const Tree& tree, const MatrixView<T>& X, const std::size_t* rows, std::size_t n,
                          std::int8_t* out, int n_threads) {
  constexpr std::size_t kRowBlock = 4096;
  const auto n_blocks = static_cast<std::ptrdiff_t>((n + kRowBlock - 1) / kRowBlock);
  util::parallel_for(n_blocks, n_blocks > 1 ? n_threads : 1, [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * kRowBlock;
    const std::size_t end = std::min(n, begin + kRowBlock);
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t row = rows ? rows[i] : i;
      out[i] = static_cast<std::int8_t>(tree.output(X.data + static_cast<std::ptrdiff_t>(row) * X.row_stride, X.col_stride));
    }
  });
}

// The parameters were checked by check_params (param_bounds.hpp): quick and criterion are in [0, 2].
tree::Criterion criterion(const TrainParams& params) {
  const tree::Criterion kinds[] = {tree::Criterion::kLoss, tree::Criterion::kGini, tree::Criterion::kEntropy};
  return kinds[params.criterion];
}

// Learns the bin edges (from X's rows with positive weight; a distributed part takes the global edges) and
// bins X in training row order.
template <typename T>
data::BinnedMatrix fit_and_bin(data::BinMapper& bins, MatrixView<T> X, const TrainingRows& rows, int n_threads,
                               const DistributedPart* distributed) {
  if (distributed) bins.set_edges(distributed->bin_edges, X.n_cols);
  else bins.fit(X, n_threads, rows.sample_weight);
  return bins.transform(X, n_threads, rows.rows.empty() ? nullptr : rows.rows.data());
}

template <typename T>
class TreeFamily final : public Family<T> {
 public:
  TreeFamily(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows, int n_threads,
             const DistributedPart* distributed)
      : X_(X), params_(params), rows_(rows.rows), sample_weight_(rows.sample_weight), n_(X.n_rows), d_(X.n_cols),
        n_threads_(n_threads), global_rows_(distributed ? distributed->global_rows : nullptr),
        reducer_(distributed ? distributed->reducer : nullptr),
        bins_(params.n_bins, params.bin_subsample, params.bin_seed),
        binned_(fit_and_bin(bins_, X, rows, n_threads, distributed)),
        // A distributed part searches its rows, totals reduced over the participants (grower.hpp).
        grower_(binned_, bins_, n_threads, rows.class_begin, tree::quick_mode_of(params.quick),
                {params.quick_eta, params.quick_chunks}, criterion(params), /*subtraction=*/true,
                distributed ? distributed->reducer : nullptr) {
    sample_rows_ = params.weight_trim < 1.0 || params.subsample < 1.0;
    sample_features_ = params.feature_fraction < 1.0;
    active_rows_.resize(sample_rows_ ? n_ : 0);
    active_features_.resize(sample_features_ ? d_ : 0);
    mass_.resize(params.weight_trim < 1.0 ? n_ : 0);
    feature_pool_.resize(d_);
  }

  void init_model(Model& model) const override { model.learner = LearnerKind::kTree; }

  void set_stop_flag(const std::atomic<bool>* stop) override { grower_.set_stop_flag(stop); }

  void set_stage_clock(util::StageClock* clock) override {
    clock_ = clock;
    grower_.set_stage_clock(clock);
  }

  loss::Loss::Step fit(loss::Loss& loss, int iteration, IterationInfo& info) override {
    if (sample_rows_ || sample_features_) {
      const util::StageScope sampling(clock_, util::Stage::kSampling);
      draw_active(loss, iteration);
    }
    loss.set_every_row_searched(!sample_rows_);  // the loss's rule for deeper layers (binary_exp.cpp)
    grown_ = grower_.grow(loss, params_.max_depth, sample_rows_ ? active_rows_.data() : nullptr,
                          sample_features_ ? active_features_.data() : nullptr);
    const util::StageScope stage(clock_, util::Stage::kStep);
    loss::Loss::Step step = loss.tree_step(grown_);
    info.weighted_error = step.weighted_error;
    info.bin_accumulations = grown_.bin_accumulations;
    info.quick_nodes = grown_.quick_nodes;
    info.full_nodes = grown_.full_nodes;
    info.features_pruned = grown_.features_pruned;
    info.heavy_rebuilds = grown_.heavy_rebuilds;
    info.mass90_fraction = grown_.mass90_fraction;
    return step;
  }

  void pending_outputs(std::vector<double>& f) const override {
    f.assign(grown_.outputs.begin(), grown_.outputs.end());
  }

  loss::Loss::Step replay(loss::Loss& loss, const Model& init, std::size_t t) override {
    // The stored tree's outputs on the training rows are the grown tree's (its thresholds send every
    // training value to the bin it came from), so its stored step restores the loss's state exactly.
    grown_.tree = init.trees[t];
    grown_.node_rows.clear();  // a stored tree's covers, if it has none, come from a pass over the rows
    grown_.outputs.resize(n_);
    tree_outputs_on_rows(grown_.tree, X_, rows_.empty() ? nullptr : rows_.data(), n_, grown_.outputs.data(), n_threads_);
    return loss.step(grown_.outputs.data());
  }

  void apply(loss::Loss& loss, const std::vector<double>& a, const loss::Loss::Step& step) override {
    loss.update(grown_.outputs.data(), a, step);
  }

  void append(Model& model, const std::vector<double>& a, IterationInfo& info) override {
    grown_.tree.step = a;
    if (grown_.tree.cover.empty()) append_covers(model.trees.size());  // new, or replayed without covers
    info.tree_depth = grown_.tree.depth();
    model.trees.push_back(std::move(grown_.tree));
  }

  void finish_model(Model& model) override {
    // A distributed fit's row counts, every tree's at once: one reduction instead of one per tree.
    util::reduce_counts(pending_rows_.data(), pending_rows_.size(), reducer_);
    std::size_t at = 0;
    for (const std::size_t t : pending_trees_)
      for (double& c : model.trees[t].cover) c = static_cast<double>(pending_rows_[at++]);
    pending_trees_.clear();
    pending_rows_.clear();
  }

  void advance(const Model& model, std::size_t t, const MatrixView<T>& X, loss::Loss& loss, double* scores) override {
    const Tree& tree = model.trees[t];
    const std::size_t K = tree.step.size();
    other_.resize(X.n_rows);
    tree_outputs_on_rows(tree, X, nullptr, X.n_rows, other_.data(), n_threads_);
    for (std::size_t i = 0; i < X.n_rows; ++i)
      for (std::size_t k = 0; k < K; ++k) scores[i * K + k] += other_[i] * tree.step[k];
    loss.update(other_.data(), tree.step, loss.sums_for_update(other_.data()));
  }

  void check_rows(const MatrixView<T>&, const std::string&) const override {}  // NaN is a missing value

 private:
  // Node covers of the pending tree, as docs/guide/explanations.md defines them. Without sample weights they
  // are the grower's row counts (free; a distributed fit totals them in finish_model); with weights, or for a
  // stored tree without covers, a pass over the rows sums the weights exactly (tree_covers).
  void append_covers(std::size_t tree_index) {
    const std::vector<std::int64_t>& rows = grown_.node_rows;
    if (sample_weight_ != nullptr || rows.size() != grown_.tree.nodes.size()) {
      grown_.tree.cover = tree_covers(grown_.tree, X_, sample_weight_, n_threads_, reducer_);
      return;
    }
    grown_.tree.cover.assign(rows.begin(), rows.end());
    if (reducer_ == nullptr) return;
    pending_trees_.push_back(tree_index);
    pending_rows_.insert(pending_rows_.end(), rows.begin(), rows.end());
  }

  // The rows and features this iteration's search sees (all of them unless a heuristic is on).
  void draw_active(const loss::Loss& loss, int iteration) {
    const std::uint64_t stream = iteration_stream(params_.seed, iteration);
    if (sample_rows_) {
      std::fill(active_rows_.begin(), active_rows_.end(), 1);
      // Rows are visited in training order; `rows` maps back to X's rows, so the draw is per original row
      // (per global row in a distributed fit).
      if (params_.subsample < 1.0)
        for (std::size_t i = 0; i < n_; ++i) {
          const std::size_t row = rows_.empty() ? i : rows_[i];
          active_rows_[i] = row_drawn(stream, global_rows_ ? global_rows_[row] : row, params_.subsample);
        }
      if (params_.weight_trim < 1.0) {
        loss.sample_mass(mass_.data());
        trim_by_weight(mass_, params_.weight_trim, active_rows_);
      }
    }
    if (sample_features_) draw_features(stream, params_.feature_fraction, d_, feature_pool_, active_features_);
  }

  MatrixView<T> X_;
  const TrainParams& params_;
  const std::vector<std::size_t>& rows_;
  const double* sample_weight_;  // the fit's sample weights in X's row order (null: 1 per row), for covers
  std::size_t n_;
  std::size_t d_;
  int n_threads_;
  const std::uint64_t* global_rows_;  // distributed: the global index of each of X's rows
  Reducer* reducer_;                  // distributed: totals the covers over the participants
  std::vector<std::size_t> pending_trees_;   // distributed: trees whose covers are local row counts so far
  std::vector<std::int64_t> pending_rows_;   // their nodes' local row counts, in order
  util::StageClock* clock_ = nullptr;
  data::BinMapper bins_;
  data::BinnedMatrix binned_;
  tree::TreeGrower grower_;
  bool sample_rows_ = false;
  bool sample_features_ = false;
  std::vector<std::uint8_t> active_rows_;
  std::vector<std::uint8_t> active_features_;
  std::vector<double> mass_;
  std::vector<std::size_t> feature_pool_;
  tree::GrowResult grown_;         // the pending tree and its outputs on the training rows
  std::vector<std::int8_t> other_;  // a stored tree's outputs on other data
};

}  // namespace

template <typename T>
std::unique_ptr<Family<T>> make_tree_family(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows,
                                            int n_threads, const DistributedPart* distributed) {
  return std::make_unique<TreeFamily<T>>(X, params, rows, n_threads, distributed);
}

template std::unique_ptr<Family<float>> make_tree_family<float>(MatrixView<float>, const TrainParams&,
                                                                const TrainingRows&, int, const DistributedPart*);
template std::unique_ptr<Family<double>> make_tree_family<double>(MatrixView<double>, const TrainParams&,
                                                                  const TrainingRows&, int, const DistributedPart*);

}  // namespace rebelboost::learner
