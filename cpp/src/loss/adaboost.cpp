// Discrete AdaBoost as a REBEL-form loss with K = 1 (thesis §2.2, DESIGN "One framework").
//
// w_n = s_n exp(-y_n H_n) / Z with s the normalised sample weights and Z the current loss, so sum w = 1.
// g_n = l_n(-1) - l_n(+1) = 2 sinh(a) y_n w_n: at the root (free step) and for any a > 0 the split
// search sees y_n w_n; the step is a* = 1/2 ln((s- + eps) / (s+ + eps)) with s+ the weight f gets wrong.
#include <algorithm>
#include <cmath>
#include <memory>

#include "loss/loss.hpp"
#include "tree/histogram.hpp"
#include "util/parallel.hpp"

namespace rebelboost::loss {

namespace {

class AdaBoostLoss final : public Loss {
 public:
  AdaBoostLoss(const std::int32_t* y, const double* sample_weight, std::size_t n, double smoothing,
               int n_threads)
      : n_(n), n_threads_(n_threads), smoothing_(smoothing), y_(n), s_(n), w_(n), q_(n) {
    for (std::size_t i = 0; i < n; ++i) {
      y_[i] = y[i] == 1 ? std::int8_t{1} : std::int8_t{-1};
      s_[i] = sample_weight ? sample_weight[i] : 1.0;
    }
    const double total = util::deterministic_sum(s_.data(), n, n_threads);
    for (double& v : s_) v /= total;
  }

  std::size_t n_outputs() const override { return 1; }

  std::vector<double> init_bias() override {
    // f = +1 gets every negative sample wrong: a_0 = 1/2 ln((P + eps) / (N + eps)).
    double pos = 0.0, neg = 0.0;
    for (std::size_t i = 0; i < n_; ++i) (y_[i] > 0 ? pos : neg) += s_[i];
    const double a0 = 0.5 * std::log((pos + smoothing_) / (neg + smoothing_));
    std::copy(s_.begin(), s_.end(), w_.begin());
    loss_ = 1.0;
    apply(nullptr, a0, /*right=*/pos, /*wrong=*/neg);
    return {a0};
  }

  const std::int64_t* split_values(int layer, const std::int8_t* f) override {
    // Deeper layers hold the tree's step a fixed: g = 2 sinh(a) y w has the sign of a, and a > 0
    // whenever the leaves follow their weighted majority (always, unless every sum is zero).
    if (layer == 0 || step(f).step[0] >= 0) return q_.data();
    q_negated_.resize(n_);
    for (std::size_t i = 0; i < n_; ++i) q_negated_[i] = -q_[i];
    return q_negated_.data();
  }

  Step step(const std::int8_t* f) const override {
    // s+ = weight f gets wrong, s- = weight it gets right, summed in index order (deterministic).
    // acc[k][right?]: four interleaved, branch-free partial sums in a fixed order (deterministic) that
    // break the add latency chain.
    double acc[4][2] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
    const std::int8_t* y = y_.data();
    const double* w = w_.data();
    std::size_t i = 0;
    for (; i + 4 <= n_; i += 4)
      for (std::size_t k = 0; k < 4; ++k) acc[k][f[i + k] == y[i + k]] += w[i + k];
    for (; i < n_; ++i) acc[0][f[i] == y[i]] += w[i];
    const double right = (acc[0][1] + acc[1][1]) + (acc[2][1] + acc[3][1]);
    const double wrong = (acc[0][0] + acc[1][0]) + (acc[2][0] + acc[3][0]);
    Step s;
    s.step = {0.5 * std::log((right + smoothing_) / (wrong + smoothing_))};
    s.has_edge = right > wrong;
    s.weighted_error = wrong / (wrong + right);
    s.sum_pos = {wrong};
    s.sum_neg = {right};
    return s;
  }

  void update(const std::int8_t* f, const std::vector<double>& a, const Step& sums) override {
    apply(f, a[0], sums.sum_neg[0], sums.sum_pos[0]);
  }

  double value() const override { return loss_; }

 private:
  // H += a f (f == null: f = +1), in one pass: w_n *= exp(-a y_n f_n) / Z' where Z' = right e^-a +
  // wrong e^a is the new total predicted from the sums, and the next split values q_n = y_n w_n 2^52.
  // Every element is computed independently, so the result does not depend on the thread count.
  void apply(const std::int8_t* f, double a, double right, double wrong) {
    const double total = right * std::exp(-a) + wrong * std::exp(a);
    const double shrink = std::exp(-a) / total, grow = std::exp(a) / total;
    double* w = w_.data();
    std::int64_t* q = q_.data();
    const std::int8_t* y = y_.data();
    const double scale = tree::kFixedPointScale;
    auto body = [&](std::ptrdiff_t b) {
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i) {
        const int margin = y[i] * (f ? f[i] : 1);
        w[i] *= margin > 0 ? shrink : grow;
        q[i] = tree::to_fixed_point(scale * y[i] * w[i]);
      }
    };
    // One pass over a few MB does not pay for waking threads below ~256k samples.
    util::parallel_for(n_blocks(), n_ > (1u << 18) ? n_threads_ : 1, body);
    loss_ *= total;
  }

  // Blocks of samples for the element-wise loop (one OpenMP task each).
  static constexpr std::size_t kBlock = 16384;
  std::ptrdiff_t n_blocks() const { return static_cast<std::ptrdiff_t>((n_ + kBlock - 1) / kBlock); }
  static std::size_t block_begin(std::ptrdiff_t b) { return static_cast<std::size_t>(b) * kBlock; }
  std::size_t block_end(std::ptrdiff_t b) const { return std::min(n_, block_begin(b) + kBlock); }

  std::size_t n_;
  int n_threads_;
  double smoothing_;
  std::vector<std::int8_t> y_;
  std::vector<double> s_;           // normalised sample weights
  std::vector<double> w_;           // current weights, sum 1 up to rounding
  std::vector<std::int64_t> q_;     // fixed-point split values y_n w_n 2^52
  std::vector<std::int64_t> q_negated_;
  double loss_ = 1.0;
};

}  // namespace

std::unique_ptr<Loss> make_adaboost(const std::int32_t* y, const double* sample_weight, std::size_t n,
                                    double smoothing, int n_threads) {
  return std::make_unique<AdaBoostLoss>(y, sample_weight, n, smoothing, n_threads);
}

}  // namespace rebelboost::loss
