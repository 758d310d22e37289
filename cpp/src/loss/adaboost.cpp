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
      : n_(n), n_threads_(n_threads), smoothing_(smoothing), y_(n), s_(n), w_(n) {
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
    for (std::size_t i = 0; i < n_; ++i) w_[i] = s_[i];
    loss_ = 1.0;
    apply(nullptr, a0);
    return {a0};
  }

  void split_values(int layer, const std::int8_t* f, std::int64_t* q) override {
    // For layer >= 1 the step of the current tree is fixed; only its sign matters (g = 2 sinh(a) y w).
    double sign = 1.0;
    if (layer > 0) {
      const double a = step(f)[0];
      sign = a < 0 ? -1.0 : 1.0;
    }
    const double scale = sign * tree::kFixedPointScale;
    const std::int8_t* y = y_.data();
    const double* w = w_.data();
    for (std::size_t i = 0; i < n_; ++i) q[i] = std::llround(scale * y[i] * w[i]);
  }

  std::vector<double> step(const std::int8_t* f) const override {
    double wrong = 0.0, right = 0.0;
    sums(f, wrong, right);
    return {0.5 * std::log((right + smoothing_) / (wrong + smoothing_))};
  }

  bool has_edge(const std::int8_t* f) const override {
    double wrong = 0.0, right = 0.0;
    sums(f, wrong, right);
    return right > wrong;
  }

  void update(const std::int8_t* f, const std::vector<double>& step) override { apply(f, step[0]); }

  double value() const override { return loss_; }

  double weighted_error(const std::int8_t* f) const override {
    double wrong = 0.0, right = 0.0;
    sums(f, wrong, right);
    return wrong / (wrong + right);
  }

 private:
  // Weight sums of the samples f gets wrong (s+) and right (s-), in index order (deterministic).
  void sums(const std::int8_t* f, double& wrong, double& right) const {
    double acc[2] = {0.0, 0.0};
    for (std::size_t i = 0; i < n_; ++i) acc[f[i] == y_[i]] += w_[i];
    wrong = acc[0];
    right = acc[1];
  }

  // H += a f (f == null: f = +1): w_n *= exp(-a y_n f_n), renormalise, Z *= the sum.
  void apply(const std::int8_t* f, double a) {
    const double shrink = std::exp(-a), grow = std::exp(a);
    double* w = w_.data();
    const std::int8_t* y = y_.data();
    util::parallel_for(static_cast<std::ptrdiff_t>((n_ + kBlock - 1) / kBlock), n_threads_, [&](std::ptrdiff_t b) {
      const std::size_t begin = static_cast<std::size_t>(b) * kBlock;
      const std::size_t end = std::min(n_, begin + kBlock);
      for (std::size_t i = begin; i < end; ++i) {
        const int margin = y[i] * (f ? f[i] : 1);
        w[i] *= margin > 0 ? shrink : grow;
      }
    });
    const double total = util::deterministic_sum(w, n_, n_threads_);
    const double inv = 1.0 / total;
    for (std::size_t i = 0; i < n_; ++i) w[i] *= inv;
    loss_ *= total;
  }

  static constexpr std::size_t kBlock = 16384;
  std::size_t n_;
  int n_threads_;
  double smoothing_;
  std::vector<std::int8_t> y_;
  std::vector<double> s_;  // normalised sample weights
  std::vector<double> w_;  // current normalised weights
  double loss_ = 1.0;
};

}  // namespace

std::unique_ptr<Loss> make_adaboost(const std::int32_t* y, const double* sample_weight, std::size_t n,
                                    double smoothing, int n_threads) {
  return std::make_unique<AdaBoostLoss>(y, sample_weight, n, smoothing, n_threads);
}

}  // namespace rebelboost::loss
