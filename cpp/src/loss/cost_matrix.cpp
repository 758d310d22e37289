// REBEL's cost matrix: the one check of its entries (cost_matrix.hpp).
#include "loss/cost_matrix.hpp"

#include <cmath>
#include <string>

#include "rebelboost/error.hpp"

namespace rebelboost::loss {

std::vector<double> checked_cost_matrix(const std::vector<double>& cost, std::size_t K) {
  if (cost.empty()) {
    std::vector<double> uniform(K * K, 1.0);
    for (std::size_t k = 0; k < K; ++k) uniform[k * K + k] = 0.0;
    return uniform;
  }
  if (cost.size() != K * K)
    throw InvalidArgument("cost_matrix has " + std::to_string(cost.size()) + " entries; expected " + std::to_string(K) +
                          " x " + std::to_string(K) + " for " + std::to_string(K) + " classes");
  for (std::size_t r = 0; r < K; ++r) {
    bool any = false;
    for (std::size_t c = 0; c < K; ++c) {
      const double v = cost[r * K + c];
      const std::string at = "cost_matrix[" + std::to_string(r) + ", " + std::to_string(c) + "]";
      if (!std::isfinite(v)) throw InvalidArgument(at + " is NaN or infinity; costs must be finite");
      if (v < 0) throw InvalidArgument(at + " is negative; costs must be >= 0");
      if (r == c && v != 0)
        throw InvalidArgument(at + " must be 0: a cost matrix has a zero diagonal (a correct prediction costs nothing)");
      any = any || v > 0;
    }
    if (!any) throw InvalidArgument("cost_matrix row " + std::to_string(r) + " is all zeros; every class needs a positive misclassification cost");
  }
  return cost;
}

}  // namespace rebelboost::loss
