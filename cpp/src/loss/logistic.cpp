// REBEL with the logistic surrogate g(x) = log2(1 + e^x) (thesis §4.3; with 2 classes LogitBoost's loss,
// App. 7.3; docs/guide/rebel.md "The loss family"). Steps by safeguarded Newton (coupled_sum.hpp).
#include <cmath>
#include <limits>
#include <memory>

#include "loss/coupled_sum.hpp"

namespace rebelboost::loss {

namespace {

constexpr double kLn2 = 0.69314718056994530942;

// Logistic sigmoid, without overflow for any finite x.
double sigmoid(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

struct LogisticG {
  static double value(double x) { return (std::fmax(x, 0.0) + std::log1p(std::exp(-std::fabs(x)))) / kLn2; }
  static double d1(double x) { return sigmoid(x) / kLn2; }
  static double d2(double x) { return sigmoid(x) * sigmoid(-x) / kLn2; }
  static void derivatives(double x, double& first, double& second) {  // one exponential for both
    const double s = sigmoid(x);
    first = s / kLn2;
    second = s * (1.0 - s) / kLn2;
  }
  // pair_min(r) = min_h r g(h) + g(-h) = (r ln(1 + 1/r) + ln(1 + r)) / ln 2 (at e^h = 1/r), increasing
  // from 0 and unbounded; its inverse by bisection on log2 r.
  static double pair_min(double r) { return r > 0.0 ? (r * std::log1p(1.0 / r) + std::log1p(r)) / kLn2 : 0.0; }
  static double pair_min_inverse(double x) {
    if (!(x > 0.0)) return 0.0;
    if (x >= 1000.0) return std::numeric_limits<double>::infinity();
    double lo = -1070.0, hi = 1000.0;  // log2 r
    for (int i = 0; i < 80; ++i) {  // 2070 / 2^80: far below a double's resolution of log2 r
      const double mid = 0.5 * (lo + hi);
      (pair_min(std::exp2(mid)) < x ? lo : hi) = mid;
    }
    return std::exp2(hi);
  }
};

}  // namespace

std::unique_ptr<Loss> make_logistic(const std::int32_t* y, const double* sample_weight, std::size_t n, std::size_t K,
                                    const std::vector<double>& cost, double smoothing, int n_threads, Reducer* reducer) {
  return std::make_unique<CoupledSumLoss<LogisticG>>(y, sample_weight, n, K, cost, smoothing, n_threads, reducer);
}

}  // namespace rebelboost::loss
