// Discrete AdaBoost as a REBEL-form loss with K = 1 (thesis §2.2; docs/methods/adaboost.md).
//
// The tree search sees u = w (g_n = l_n(-1) - l_n(+1) = 2 sinh(a) y_n w_n) and the step is
// a* = 1/2 ln((s- + eps) / (s+ + eps)) with s+ the weight f gets wrong, s- the weight it gets right.
#include <memory>

#include "loss/binary_exp.hpp"
#include "util/fixed_point.hpp"

namespace rebelboost::loss {

namespace {

class AdaBoostLoss final : public BinaryExpLoss {
 public:
  AdaBoostLoss(const std::int32_t* y, const double* sample_weight, std::size_t n, double smoothing, int n_threads,
               Reducer* reducer)
      : BinaryExpLoss(y, sample_weight, n, smoothing, n_threads, 0.5, reducer) {}

  double value() const override { return z_; }

 private:
  void refresh_search_weights(bool q_already_from_w) override {
    if (q_already_from_w) return;  // apply() wrote q = y w 2^52 in its pass
    for (std::size_t i = 0; i < n_; ++i) q_[i] = util::to_fixed_point(util::kFixedPointScale * y_[i] * w_[i]);
  }
  const std::vector<double>& search_weights() const override { return w_; }
};

}  // namespace

std::unique_ptr<Loss> make_adaboost(const std::int32_t* y, const double* sample_weight, std::size_t n,
                                    double smoothing, int n_threads, Reducer* reducer) {
  return std::make_unique<AdaBoostLoss>(y, sample_weight, n, smoothing, n_threads, reducer);
}

}  // namespace rebelboost::loss
