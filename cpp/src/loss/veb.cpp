// VEB-Boost (Shivaswamy & Jebara; docs/methods/veb.md): AdaBoost's reweighting with a sample-variance penalty.
//
// The learner is trained on u_n = lam n w_n^2 / m_n + (1 - lam) w_n (w normalised, m_n the sample weight
// normalised to mean 1, so frequency weights behave like repeated rows; unweighted: u = lam n w^2 +
// (1 - lam) w) and the step is alpha = 1/4 ln(sum_correct u / sum_wrong u). The paper's figure prints
// this ratio upside down; minimising its own Lemma 1 cost U_I e^{-2a} + U_J e^{2a} gives this one.
// Theorem 2: that cost is a variational upper bound touching the variance-penalised cost
//   Z^2 [1 + lam (n sum w^2 / m - 1)]
// at alpha = 0, so any alpha between 0 and the optimum (smoothing and shrinkage keep it there) lowers it.
#include <cmath>
#include <memory>
#include <vector>

#include "loss/binary_exp.hpp"
#include "util/fixed_point.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"

namespace rebelboost::loss {

namespace {

class VebLoss final : public BinaryExpLoss {
 public:
  VebLoss(const std::int32_t* y, const double* sample_weight, std::size_t n, double smoothing, int n_threads,
          double lam, Reducer* reducer)
      : BinaryExpLoss(y, sample_weight, n, smoothing, n_threads, 0.25, reducer), lam_(lam), u_(n) {}

  // The variance-penalised cost, 1 at H = 0.
  double value() const override { return z_ * z_ * (1.0 + lam_ * (w2_over_s_ - 1.0)); }

 private:
  void refresh_search_weights(bool) override {
    const double* w = w_.data();
    const double* s = s_.data();
    double* u = u_.data();
    // Pass 1: u and the exact sums of w^2 / s and u (over every participant of a distributed fit).
    std::vector<util::ExactSum> sums = util::block_sums(n_, 2, kBlock, pass_threads(), [&](std::size_t i, util::ExactSum* t) {
      const double r = s[i] > 0.0 ? w[i] * w[i] / s[i] : 0.0;
      u[i] = lam_ * r + (1.0 - lam_) * w[i];
      t[0].add(r);
      t[1].add(u[i]);
    });
    const std::vector<double> totals = util::reduced_values(sums, reducer_);
    w2_over_s_ = totals[0];
    const double total_u = totals[1];
    // Pass 2: fixed-point split values y u 2^52 / sum(u).
    const double scale = util::kFixedPointScale / total_u;
    std::int64_t* q = q_.data();
    const std::int8_t* y = y_.data();
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i) q[i] = util::to_fixed_point(scale * y[i] * u[i]);
    });
  }
  const std::vector<double>& search_weights() const override { return u_; }

  double lam_;
  std::vector<double> u_;
  double w2_over_s_ = 1.0;  // sum w^2 / s = n sum w^2 / m
};

}  // namespace

std::unique_ptr<Loss> make_veb(const std::int32_t* y, const double* sample_weight, std::size_t n, double smoothing,
                               int n_threads, double lam, Reducer* reducer) {
  return std::make_unique<VebLoss>(y, sample_weight, n, smoothing, n_threads, lam, reducer);
}

}  // namespace rebelboost::loss
