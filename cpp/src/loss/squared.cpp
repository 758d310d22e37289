// REBEL with the squared surrogate g(x) = (1 + x)^2 (thesis §4.3; with 2 classes L2Boost's loss, App. 7.3;
// docs/guide/rebel.md "The loss family"). phi_k is quadratic in the step, so the first Newton step is its exact
// minimiser (the second pass only confirms it), and the root's Newton gain is the exact loss decrease.
#include <limits>
#include <memory>

#include "loss/coupled_sum.hpp"

namespace rebelboost::loss {

namespace {

struct SquaredG {
  static double value(double x) { return (1.0 + x) * (1.0 + x); }
  static double d1(double x) { return 2.0 * (1.0 + x); }
  static double d2(double /*x*/) { return 2.0; }
  static void derivatives(double x, double& first, double& second) {
    first = d1(x);
    second = 2.0;
  }
  // pair_min(r) = min_h r (1 + h)^2 + (1 - h)^2 = 4 r / (1 + r) (at h = (1 - r) / (1 + r)), below 4.
  static double pair_min_inverse(double x) {
    if (!(x > 0.0)) return 0.0;
    return x < 4.0 ? x / (4.0 - x) : std::numeric_limits<double>::infinity();
  }
};

}  // namespace

std::unique_ptr<Loss> make_squared(const std::int32_t* y, const double* sample_weight, std::size_t n, std::size_t K,
                                   const std::vector<double>& cost, double smoothing, int n_threads, Reducer* reducer) {
  return std::make_unique<CoupledSumLoss<SquaredG>>(y, sample_weight, n, K, cost, smoothing, n_threads, reducer);
}

}  // namespace rebelboost::loss
