// The regressor's learners (docs/guide/regression.md): gradient boosting with regression trees. Per
// iteration the residuals r = y - H become fixed-point values s = w r 2^e_s, t = w 2^e_t (powers of two:
// exact scaling), VarianceGrower grows the tree, and its leaves hold the weighted mean residual
// (S / W) 2^(e_t - e_s): the exact minimiser of the squared error per leaf, so the step is 1 (shrunk by
// learning_rate).
#include <algorithm>
#include <cmath>
#include <string>

#include "data/bin_mapper.hpp"
#include "learner/family.hpp"
#include "learner/sampling.hpp"
#include "rebelboost/error.hpp"
#include "tree/binned_leaves.hpp"
#include "tree/variance_grower.hpp"
#include "util/fixed_point.hpp"
#include "util/parallel.hpp"

namespace rebelboost::learner {

namespace {

constexpr int kValueBits = 61;   // sum |s| < 2^61: histogram sums and differences stay within int64
// Without sample weights on 2^16 to 2^23 rows: sum |s| < 2^38, so the grower packs a row's count and s into
// one int64 (tree/variance_grower.hpp; half the histogram traffic). The residuals then keep about
// 2^38 / n_rows levels of the largest |r| (262 144 at a million rows; float32 gradients keep 2^24): each
// leaf's mean residual is exact to that rounding, unbiased.
constexpr int kPackedValueBits = 38;
constexpr int kWeightBits = 52;  // sum t <= 2^52

// The exponent e with x 2^e <= 2^bits for every x <= bound (bound > 0).
int scale_exponent(double bound, int bits) {
  int e = 0;
  std::frexp(bound, &e);  // bound < 2^e
  return bits - e;
}

template <typename T>
class RegressionFamily final : public Family<T> {
 public:
  RegressionFamily(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows, int n_threads)
      : X_(X), params_(params), sample_weight_(rows.sample_weight), n_(X.n_rows), n_threads_(n_threads),
        bins_(params.n_bins, params.bin_subsample, params.bin_seed), binned_(fit_bins(X, rows.sample_weight)),
        grower_(binned_, bins_, n_threads, tree::quick_mode_of(params.quick),
                {params.quick_eta, params.quick_chunks}) {
    double largest = 0.0, total = 0.0;
    for (std::size_t i = 0; i < n_; ++i) {
      largest = std::max(largest, weight(i));
      total += weight(i);
    }
    weight_exponent_ = scale_exponent(largest * static_cast<double>(n_), kWeightBits);
    if (sample_weight_) std::frexp(largest, &loss_weight_shift_);  // the loss's weights are w 2^-shift
    t_.resize(n_);
    std::int64_t t_total = 0;
    for (std::size_t i = 0; i < n_; ++i) t_total += t_[i] = util::to_fixed_point(std::ldexp(weight(i), weight_exponent_));
    // min_samples_leaf in units of the mean weight: with unit weights, exactly that many rows.
    min_leaf_weight_ = static_cast<std::int64_t>(
        std::ceil(static_cast<double>(params.min_samples_leaf) * static_cast<double>(t_total) / static_cast<double>(n_)));
    weight_total_ = total;
    t_uniform_ = n_ > 0 && t_[0] > 0 && std::all_of(t_.begin(), t_.end(), [&](std::int64_t v) { return v == t_[0]; });
    s_.resize(n_);
    f_.resize(n_);
  }

  void init_model(Model& model) const override { model.learner = LearnerKind::kTree; }
  void set_stop_flag(const std::atomic<bool>* stop) override { stop_ = stop; }
  void set_stage_clock(util::StageClock* clock) override {
    clock_ = clock;
    grower_.set_stage_clock(clock);
  }

  loss::Loss::Step fit(loss::Loss& loss, int iteration, IterationInfo& info) override {
    const std::uint64_t stream = iteration_stream(params_.seed, iteration);
    const bool sample_rows = params_.subsample < 1.0, sample_features = params_.feature_fraction < 1.0;
    {
      const util::StageScope stage(clock_, util::Stage::kSplitValues);
      fixed_point_values(loss, sample_rows, stream);
      if (sample_features) draw_features(stream, params_.feature_fraction, X_.n_cols, feature_pool_, active_features_);
    }
    // Without the subsample every t is t_[0] when the weights are all equal: the loss pass's sums serve the root.
    const tree::VarianceGrower::UniformRows uniform{t_uniform_ ? t_[0] : 0, residual_sums_.sum, residual_sums_.abs_sum};
    tree_ = grower_.grow(s_.data(), sample_rows ? t_active_.data() : t_.data(), params_.max_depth, min_leaf_weight_,
                         sample_features ? active_features_.data() : nullptr,
                         t_uniform_ && !sample_rows ? &uniform : nullptr);
    const util::StageScope stage(clock_, util::Stage::kLeafValues);
    const double to_real = std::ldexp(1.0, weight_exponent_ - value_exponent_);
    for (tree::RegressionNode& node : tree_.nodes) node.value *= to_real;
    // The outputs of every row, also those the subsample left out: by runs in the loss's pass (small trees),
    // else all at once now.
    by_leaves_ = tree::BinnedLeaves::fits(tree_);
    if (by_leaves_) leaves_ = tree::BinnedLeaves(tree_, binned_);
    else grower_.outputs(tree_, f_.data());
    grown_pending_ = true;
    info.quick_nodes = tree_.quick_nodes;
    info.full_nodes = tree_.full_nodes;
    info.features_pruned = tree_.work.features_pruned;
    info.bin_accumulations = tree_.work.bin_accumulations;
    loss::Loss::Step step;
    step.step = {1.0};
    // Some row's output is nonzero: a leaf without rows has W = 0 and the value 0.
    step.has_edge = std::any_of(tree_.nodes.begin(), tree_.nodes.end(),
                                [](const tree::RegressionNode& n) { return n.feature < 0 && n.value != 0.0; });
    return step;
  }

  // The pending tree's real outputs (not bounded by 1: no hybrid ranks regression trees).
  void pending_outputs(std::vector<double>& f) const override {
    if (!grown_pending_ || !by_leaves_) {
      f = f_;
      return;
    }
    f.resize(n_);
    leaves_.values(0, n_, f.data());
  }

  loss::Loss::Step replay(loss::Loss&, const Model& init, std::size_t t) override {
    const Tree& tree = init.trees[t];
    if (tree.leaf_value.size() != tree.nodes.size()) throw InvalidArgument("warm start: the model to continue is no regressor");
    real_outputs(tree, X_, f_.data());
    replayed_ = tree;
    grown_pending_ = false;
    loss::Loss::Step step;
    step.step = {1.0};
    step.has_edge = true;
    return step;
  }

  // A grown tree's update also writes the next tree's fixed-point values, at this tree's exponent: the next
  // fit keeps them when the updated residuals give the same exponent (nearly always), else redoes them.
  void apply(loss::Loss& loss, const std::vector<double>& a, const loss::Loss::Step&) override {
    if (!grown_pending_) {
      loss.update_real(f_.data(), a);
      return;
    }
    const TreeOutputs outputs(by_leaves_ ? &leaves_ : nullptr, f_.data());
    residual_sums_ = loss.update_and_residuals(outputs, a, std::ldexp(1.0, value_exponent_ + loss_weight_shift_), s_.data());
    prepared_exponent_ = value_exponent_;
    prepared_ = true;
  }

  void append(Model& model, const std::vector<double>& a, IterationInfo& info) override {
    Tree tree = replayed_.nodes.empty() ? model_tree() : std::move(replayed_);
    replayed_ = Tree();
    tree.step = a;
    info.tree_depth = tree.depth();
    model.trees.push_back(std::move(tree));
  }

  void advance(const Model& model, std::size_t t, const MatrixView<T>& X, loss::Loss& loss, double* scores) override {
    const Tree& tree = model.trees[t];
    other_.resize(X.n_rows);
    real_outputs(tree, X, other_.data());
    for (std::size_t i = 0; i < X.n_rows; ++i) scores[i] += other_[i] * tree.step[0];
    loss.update_real(other_.data(), tree.step);
  }

  void check_rows(const MatrixView<T>&, const std::string&) const override {}  // NaN is a missing value

 private:
  double weight(std::size_t i) const { return sample_weight_ ? sample_weight_[i] : 1.0; }

  data::BinnedMatrix fit_bins(MatrixView<T> X, const double* sample_weight) {
    bins_.fit(X, n_threads_, sample_weight);
    return bins_.transform(X, n_threads_);
  }

  // s = w r 2^e_s (0 for rows the subsample leaves out, whose t is 0 too), e_s from the loss's max |w r| (the
  // same for any thread count). The loss holds the weights times 2^-loss_weight_shift_ (the booster brings
  // the largest into [0.5, 1)): powers of two, so s is the same as from the weights themselves.
  // s_ may hold them already (apply).
  void fixed_point_values(const loss::Loss& loss, bool sample_rows, std::uint64_t stream) {
    const double largest = std::ldexp(loss.largest_weighted_residual(), loss_weight_shift_);
    const bool packable = sample_weight_ == nullptr && n_ >= (std::size_t{1} << 16) && n_ < (std::size_t{1} << 23);
    value_exponent_ = largest > 0.0 ? scale_exponent(largest * static_cast<double>(n_), packable ? kPackedValueBits : kValueBits) : 0;
    if (!prepared_ || prepared_exponent_ != value_exponent_)
      residual_sums_ = loss.fixed_point_residuals(std::ldexp(1.0, value_exponent_ + loss_weight_shift_), s_.data());
    prepared_ = false;
    if (!sample_rows) return;
    constexpr std::size_t kBlock = 1 << 16;
    t_active_.resize(n_);
    util::parallel_for(static_cast<std::ptrdiff_t>((n_ + kBlock - 1) / kBlock), util::threads_for(n_ * 4, n_threads_), [&](std::ptrdiff_t b) {
      for (std::size_t i = static_cast<std::size_t>(b) * kBlock, e = std::min(n_, i + kBlock); i < e; ++i) {
        const bool active = row_drawn(stream, i, params_.subsample);
        s_[i] = active ? s_[i] : 0;
        t_active_[i] = active ? t_[i] : 0;
      }
    });
  }

  // The grown tree in the model's form: raw thresholds, real leaves, gains as decreases of the mean squared
  // error, covers as sample weight per node.
  Tree model_tree() const {
    Tree tree;
    const double gain_scale = 2.0 * std::ldexp(1.0, weight_exponent_ - 2 * value_exponent_) / weight_total_;
    const double cover_scale = std::ldexp(1.0, -weight_exponent_);
    for (const tree::RegressionNode& n : tree_.nodes) {
      Node node;
      node.feature = n.feature;
      node.nan_left = n.nan_left ? 1 : 0;
      node.value = static_cast<std::int8_t>(n.feature < 0 ? 1 : 0);
      node.left = n.left;
      node.right = n.right;
      if (n.feature >= 0) {
        node.threshold = bins_.threshold(static_cast<std::size_t>(n.feature), n.bin);
        node.gain = n.gain * gain_scale;
      }
      tree.nodes.push_back(node);
      tree.leaf_value.push_back(n.feature < 0 ? n.value : 0.0);
      tree.cover.push_back(static_cast<double>(n.weight) * cover_scale);
    }
    return tree;
  }

  // The grown tree's outputs for the loss's pass: from the leaves (not null), else from f_.
  class TreeOutputs final : public loss::Loss::RowOutputs {
   public:
    TreeOutputs(const tree::BinnedLeaves* leaves, const double* f) : leaves_(leaves), f_(f) {}
    const double* run(std::size_t begin, std::size_t end, double* scratch) const override {
      if (leaves_ == nullptr) return f_ + begin;
      leaves_->values(begin, end, scratch);
      return scratch;
    }

   private:
    const tree::BinnedLeaves* leaves_;
    const double* f_;
  };

  template <typename U>
  void real_outputs(const Tree& tree, const MatrixView<U>& X, double* out) const {
    util::parallel_for(static_cast<std::ptrdiff_t>(X.n_rows), util::threads_for(X.n_rows * 8, n_threads_), [&](std::ptrdiff_t r) {
      out[r] = tree.output_real(X.data + r * X.row_stride, X.col_stride);
    });
  }

  MatrixView<T> X_;
  const TrainParams& params_;
  const double* sample_weight_;
  std::size_t n_;
  int n_threads_;
  data::BinMapper bins_;
  data::BinnedMatrix binned_;
  tree::VarianceGrower grower_;
  const std::atomic<bool>* stop_ = nullptr;
  util::StageClock* clock_ = nullptr;
  int weight_exponent_ = 0, value_exponent_ = 0, loss_weight_shift_ = 0;
  std::int64_t min_leaf_weight_ = 0;
  bool t_uniform_ = false;                       // every t_ the same, > 0
  loss::Loss::FixedPointSums residual_sums_;     // of s_ before the subsample
  double weight_total_ = 0.0;
  std::vector<std::int64_t> t_, t_active_, s_;
  std::vector<double> f_, other_;
  std::vector<std::size_t> feature_pool_;
  std::vector<std::uint8_t> active_features_;
  tree::RegressionTree tree_;  // the pending tree (fit)
  tree::BinnedLeaves leaves_;  // its outputs by row, when by_leaves_ (else they are in f_)
  bool by_leaves_ = false;
  bool grown_pending_ = false;  // the pending tree is tree_ (fit), not replayed_
  // s_ and residual_sums_ hold the fixed-point values of the current scores at prepared_exponent_ (apply)
  bool prepared_ = false;
  int prepared_exponent_ = 0;
  Tree replayed_;              // or the replayed one (warm start)
};

}  // namespace

template <typename T>
std::unique_ptr<Family<T>> make_regression_family(MatrixView<T> X, const TrainParams& params, const TrainingRows& rows,
                                                  int n_threads) {
  return std::make_unique<RegressionFamily<T>>(X, params, rows, n_threads);
}

template std::unique_ptr<Family<float>> make_regression_family<float>(MatrixView<float>, const TrainParams&,
                                                                      const TrainingRows&, int);
template std::unique_ptr<Family<double>> make_regression_family<double>(MatrixView<double>, const TrainParams&,
                                                                        const TrainingRows&, int);

}  // namespace rebelboost::learner
