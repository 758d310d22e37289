// Shared machinery of the two binary exponential losses (AdaBoost and VEB-Boost), K = 1 score.
//
// Scores H_n, labels y_n in {-1, +1}, weights w_n = s_n exp(-y_n H_n) / Z (sum 1). The tree search sees
// per-sample weights u_n (AdaBoost: u = w; VEB: u = lam n w^2 / m + (1 - lam) w) through
// q_n = y_n u_n 2^52 / sum(u); the step is step_scale * ln((right_u + eps) / (wrong_u + eps)), with
// right_u / wrong_u the sums of |q_n| (the fixed-point u the tree was searched with) over the samples f gets
// right / wrong: exact integers, so the step is the same for any thread count and any partitioning.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "loss/loss.hpp"
#include "util/parallel.hpp"

namespace rebelboost::loss {

class BinaryExpLoss : public Loss {
 public:
  std::size_t n_outputs() const override { return 1; }
  std::vector<double> init_bias() override;
  void start_at(const std::vector<double>& bias) override;
  const std::int64_t* split_values(int layer, const std::int8_t* f) override;
  void set_every_row_searched(bool every_row) override { every_row_searched_ = every_row; }
  int relation_to_previous_layer() const override { return relation_; }
  Step step(const std::int8_t* f) const override;
  Step tree_step(const tree::GrowResult& grown) const override;
  void update(const std::int8_t* f, const std::vector<double>& a, const Step& sums) override;
  void sample_mass(double* out) const override {
    const std::vector<double>& u = search_weights();
    std::copy(u.begin(), u.end(), out);
  }

 protected:
  // step_scale: 1/2 for AdaBoost, 1/4 for VEB-Boost.
  BinaryExpLoss(const std::int32_t* y, const double* sample_weight, std::size_t n, double smoothing,
                int n_threads, double step_scale, Reducer* reducer);

  // Recompute u_ (if distinct from w_) and q_ from w_ after w_ changed. `w_is_fresh_q` is true when
  // apply() already wrote q_ = y w 2^52 in its pass (enough when u == w).
  virtual void refresh_search_weights(bool q_already_from_w) = 0;
  // The weights the tree search and the step see (w_ for AdaBoost).
  virtual const std::vector<double>& search_weights() const = 0;

  // H += a f (f == null: f = +1): w_n *= exp(-a y_n f_n) / Z' with Z' predicted from the w sums of
  // f (right_w, wrong_w); also writes q_ = y w 2^52 in the same pass. Returns Z'.
  double apply(const std::int8_t* f, double a, double right_w, double wrong_w);

  // Weight sums of w (not u) that f gets right and wrong, in a fixed order.
  void w_sums(const std::int8_t* f, double& right, double& wrong) const;
  // The step from the fixed-point sums of |q| f gets right and wrong (over every participant).
  Step step_from_sums(std::int64_t right, std::int64_t wrong) const;

  // Blocks of samples for element-wise loops (one OpenMP task each; results never depend on it).
  static constexpr std::size_t kBlock = 16384;
  std::ptrdiff_t n_blocks() const { return static_cast<std::ptrdiff_t>((n_ + kBlock - 1) / kBlock); }
  static std::size_t block_begin(std::ptrdiff_t b) { return static_cast<std::size_t>(b) * kBlock; }
  std::size_t block_end(std::ptrdiff_t b) const { return n_ < block_begin(b) + kBlock ? n_ : block_begin(b) + kBlock; }
  int pass_threads() const { return util::threads_for(4 * n_, n_threads_); }  // a few ns per sample

  std::size_t n_;
  int n_threads_;
  Reducer* reducer_;  // null: a local fit
  double smoothing_;
  double step_scale_;
  std::vector<std::int8_t> y_;
  std::vector<double> s_;   // sample weights normalised to sum 1
  std::vector<double> w_;   // current weights, sum 1 up to rounding
  std::vector<std::int64_t> q_;
  std::vector<std::int64_t> q_negated_;
  double z_ = 1.0;          // sum of s exp(-y H): the AdaBoost loss, 1 at H = 0
  bool negated_ = false;    // split_values last returned -q
  bool every_row_searched_ = false;  // the tree's search sees every row (no subsample, no weight_trim)
  int relation_ = 0;        // see SplitObjective::relation_to_previous_layer
};

// Sums of `u` over samples f gets right / wrong: exact (util/exact_sum.hpp), so they depend neither on
// n_threads nor on how rows are split between the participants of a distributed fit (reduced over them).
void right_wrong_sums(const std::int8_t* f, const std::int8_t* y, const double* u, std::size_t n, double& right,
                      double& wrong, int n_threads, std::size_t block, Reducer* reducer);

}  // namespace rebelboost::loss
