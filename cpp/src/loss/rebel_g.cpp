// REBEL's loss for a surrogate g: the one place that maps RebelG to a loss (docs/guide/rebel.md "The loss family").
#include <memory>
#include <string>

#include "loss/loss.hpp"

namespace rebelboost::loss {

std::unique_ptr<Loss> make_rebel_g(RebelG g, const std::int32_t* y, const double* sample_weight, std::size_t n,
                                   std::size_t K, const std::vector<double>& cost, double smoothing, int n_threads,
                                   Reducer* reducer) {
  switch (g) {
    case RebelG::kExponential: return make_rebel(y, sample_weight, n, K, cost, smoothing, n_threads, reducer);
    case RebelG::kLogistic: return make_logistic(y, sample_weight, n, K, cost, smoothing, n_threads, reducer);
    case RebelG::kSquared: return make_squared(y, sample_weight, n, K, cost, smoothing, n_threads, reducer);
  }
  throw InvalidArgument("unknown REBEL loss " + std::to_string(static_cast<std::uint32_t>(g)) +
                        " (expected exponential, logistic or squared)");
}

}  // namespace rebelboost::loss
