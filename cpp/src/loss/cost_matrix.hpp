// REBEL's cost matrix checked once (docs/design/parameters.md): by train() and, through the binding's
// check_cost_matrix, by REBELClassifier before it stores cost_matrix_.
#pragma once

#include <cstddef>
#include <vector>

namespace rebelboost::loss {

// The cost matrix as n_classes x n_classes row-major: uniform (0 on the diagonal, 1 elsewhere) when
// empty; otherwise checked: K * K entries, finite, >= 0, zero diagonal, no all-zero row (InvalidArgument
// naming the first entry or row that breaks a rule).
std::vector<double> checked_cost_matrix(const std::vector<double>& cost, std::size_t K);

}  // namespace rebelboost::loss
