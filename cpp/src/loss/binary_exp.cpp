// The binary exponential-loss machinery shared by AdaBoost and VEB-Boost (see binary_exp.hpp).
#include "loss/binary_exp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "util/fixed_point.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"

namespace rebelboost::loss {

void right_wrong_sums(const std::int8_t* f, const std::int8_t* y, const double* u, std::size_t n, double& right,
                      double& wrong, int n_threads, std::size_t block, Reducer* reducer) {
  std::vector<util::ExactSum> sums = util::block_sums(n, 2, block, n_threads, [&](std::size_t i, util::ExactSum* s) {
    s[f[i] == y[i]].add(u[i]);
  });
  const std::vector<double> total = util::reduced_values(sums, reducer);
  wrong = total[0];
  right = total[1];
}

BinaryExpLoss::BinaryExpLoss(const std::int32_t* y, const double* sample_weight, std::size_t n, double smoothing,
                             int n_threads, double step_scale, Reducer* reducer)
    : n_(n), n_threads_(n_threads), reducer_(reducer), smoothing_(smoothing), step_scale_(step_scale), y_(n), s_(n), w_(n), q_(n) {
  for (std::size_t i = 0; i < n; ++i) {
    y_[i] = y[i] == 1 ? std::int8_t{1} : std::int8_t{-1};
    s_[i] = sample_weight ? sample_weight[i] : 1.0;
  }
  const double total = util::reduced_value(
      util::block_sums(n, 1, kBlock, pass_threads(), [&](std::size_t i, util::ExactSum* t) { t->add(s_[i]); })[0],
      reducer_);
  for (double& v : s_) v /= total;
}

std::vector<double> BinaryExpLoss::init_bias() {
  // The homogeneous learner f = +1 gets every positive sample right: a_0 is its step.
  std::copy(s_.begin(), s_.end(), w_.begin());
  refresh_search_weights(false);
  const std::vector<std::int8_t> plus(n_, 1);
  const Step first = step(plus.data());
  update(plus.data(), first.step, first);
  return first.step;
}

void BinaryExpLoss::start_at(const std::vector<double>& bias) {
  std::copy(s_.begin(), s_.end(), w_.begin());
  refresh_search_weights(false);
  const std::vector<std::int8_t> plus(n_, 1);
  update(plus.data(), bias, step(plus.data()));
}

const std::int64_t* BinaryExpLoss::split_values(int layer, const std::int8_t* f) {
  // Deeper layers hold the tree's step a fixed: g = 2 sinh(c a) y u has the sign of a, and a >= 0
  // whenever the leaves follow their weighted majority of the values searched: with every row searched,
  // sum_n f_n q_n is the sum of the leaves' |sums| (exact integers), so the values stay q and no pass over
  // the rows (nor, in a distributed fit, a reduction) is needed to know it. Only a search on a sample of
  // the rows (subsample, weight_trim) can leave a < 0: then the step's sums over every row decide.
  // Every layer's values are q or -q, so the grower may reuse the previous layer's histograms.
  const bool negated = layer > 0 && !every_row_searched_ && step(f).step[0] < 0;
  relation_ = layer == 0 ? 0 : (negated == negated_ ? 1 : -1);
  negated_ = negated;
  if (!negated) return q_.data();
  q_negated_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) q_negated_[i] = -q_[i];
  return q_negated_.data();
}

Loss::Step BinaryExpLoss::step(const std::int8_t* f) const {
  std::vector<std::int64_t> parts(2 * static_cast<std::size_t>(n_blocks()), 0);  // per block: wrong, right
  const std::int64_t* q = q_.data();
  const std::int8_t* y = y_.data();
  util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
    std::int64_t sums[2] = {0, 0};
    for (std::size_t i = block_begin(b); i < block_end(b); ++i) sums[f[i] == y[i]] += q[i] < 0 ? -q[i] : q[i];
    parts[2 * static_cast<std::size_t>(b)] = sums[0];
    parts[2 * static_cast<std::size_t>(b) + 1] = sums[1];
  });
  std::int64_t sums[2] = {0, 0};  // integers: exact in any order
  for (std::size_t k = 0; k < parts.size(); ++k) sums[k % 2] += parts[k];
  util::reduce_counts(sums, 2, reducer_);
  return step_from_sums(sums[1], sums[0]);
}

Loss::Step BinaryExpLoss::tree_step(const tree::GrowResult& grown) const {
  // Every row was searched with q: in a leaf valued sign(Q) (any value if Q = 0), the rows it gets right
  // hold (M + |Q|) / 2 of its mass M, since q_n = y_n |q_n|. The flag, not the grower's totals, decides
  // which way: it is the same on every participant of a distributed fit (one without rows has no active
  // rows to mask, so its grower would know the totals when the others do not).
  if (!every_row_searched_ || grown.value_mass < 0) return step(grown.outputs.data());
  return step_from_sums((grown.value_mass + grown.leaf_abs_sum) / 2, (grown.value_mass - grown.leaf_abs_sum) / 2);
}

Loss::Step BinaryExpLoss::step_from_sums(std::int64_t right_fixed, std::int64_t wrong_fixed) const {
  const double right = static_cast<double>(right_fixed) / util::kFixedPointScale;
  const double wrong = static_cast<double>(wrong_fixed) / util::kFixedPointScale;
  const double total = right + wrong;
  Step s;
  s.step = {step_scale_ * std::log((right + smoothing_ * total) / (wrong + smoothing_ * total))};
  s.has_edge = right > wrong;
  s.weighted_error = total > 0 ? wrong / total : 0.0;
  s.perfect_fit = wrong == 0.0;
  s.sum_pos = {wrong};
  s.sum_neg = {right};
  return s;
}

void BinaryExpLoss::w_sums(const std::int8_t* f, double& right, double& wrong) const {
  right_wrong_sums(f, y_.data(), w_.data(), n_, right, wrong, pass_threads(), kBlock, reducer_);
}

void BinaryExpLoss::update(const std::int8_t* f, const std::vector<double>& a, const Step& sums) {
  double right = sums.sum_neg[0], wrong = sums.sum_pos[0];
  if (&search_weights() != &w_) w_sums(f, right, wrong);  // the step's sums were of u, not w
  apply(f, a[0], right, wrong);
  refresh_search_weights(true);
}

double BinaryExpLoss::apply(const std::int8_t* f, double a, double right_w, double wrong_w) {
  const double total = right_w * std::exp(-a) + wrong_w * std::exp(a);
  const double shrink = std::exp(-a) / total, grow = std::exp(a) / total;
  if (!std::isfinite(total) || !std::isfinite(shrink) || !std::isfinite(grow)) {
    // exp(+-a) overflowed (a huge learning rate): the loss is infinite and the booster stops as diverged;
    // the weights are left as they were (rounding NaN to fixed point would be undefined behaviour).
    z_ = std::numeric_limits<double>::infinity();
    return total;
  }
  double* w = w_.data();
  std::int64_t* q = q_.data();
  const std::int8_t* y = y_.data();
  const double scale = util::kFixedPointScale;
  util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
    const std::size_t end = block_end(b);
    for (std::size_t i = block_begin(b); i < end; ++i) {  // branch-free: y_i f_i is +-1 at random
      const double wi = w[i] * (y[i] == (f ? f[i] : 1) ? shrink : grow);
      w[i] = wi;
      q[i] = util::to_fixed_point(scale * y[i] * wi);
    }
  });
  z_ *= total;
  return total;
}

}  // namespace rebelboost::loss
