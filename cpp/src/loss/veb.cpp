// VEB-Boost (Shivaswamy & Jebara, seed 000): AdaBoost's reweighting with a sample-variance penalty.
//
// The learner is trained on u_n = lam n w_n^2 / m_n + (1 - lam) w_n (w normalised, m_n the sample weight
// normalised to mean 1, so frequency weights behave like repeated rows; unweighted: u = lam n w^2 +
// (1 - lam) w) and the step is alpha = 1/4 ln(sum_correct u / sum_wrong u). The seed's figure prints
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

namespace rebelboost::loss {

namespace {

class VebLoss final : public BinaryExpLoss {
 public:
  VebLoss(const std::int32_t* y, const double* sample_weight, std::size_t n, double smoothing, int n_threads,
          double lam)
      : BinaryExpLoss(y, sample_weight, n, smoothing, n_threads, 0.25), lam_(lam), u_(n) {}

  // The variance-penalised cost, 1 at H = 0.
  double value() const override { return z_ * z_ * (1.0 + lam_ * (w2_over_s_ - 1.0)); }

 private:
  void refresh_search_weights(bool) override {
    const double* w = w_.data();
    const double* s = s_.data();
    double* u = u_.data();
    // Pass 1: u and the block sums of w^2 / s and u (fixed blocks: deterministic for any thread count).
    std::vector<double> w2s(static_cast<std::size_t>(n_blocks())), usum(w2s.size());
    util::parallel_for(n_blocks(), pass_threads(), [&](std::ptrdiff_t b) {
      double a = 0.0, c = 0.0;
      const std::size_t end = block_end(b);
      for (std::size_t i = block_begin(b); i < end; ++i) {
        const double r = s[i] > 0.0 ? w[i] * w[i] / s[i] : 0.0;
        u[i] = lam_ * r + (1.0 - lam_) * w[i];
        a += r;
        c += u[i];
      }
      w2s[static_cast<std::size_t>(b)] = a;
      usum[static_cast<std::size_t>(b)] = c;
    });
    double total_w2s = 0.0, total_u = 0.0;
    for (std::size_t b = 0; b < w2s.size(); ++b) {
      total_w2s += w2s[b];
      total_u += usum[b];
    }
    w2_over_s_ = total_w2s;
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
                               int n_threads, double lam) {
  return std::make_unique<VebLoss>(y, sample_weight, n, smoothing, n_threads, lam);
}

}  // namespace rebelboost::loss
