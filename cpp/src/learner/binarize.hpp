// Binarization of multi-class weights (thesis §5.3, Eq. 5.4-5.8): which side of a binary learner each
// sample should fall on so that the bound on REBEL's loss drops the most.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rebelboost::learner {

struct Binarization {
  std::vector<std::int8_t> side;  // b_n in {+1, -1}
  double eigenvalue = 0.0;        // lambda_1 of U^T U (>= tr(U^T U) / K, Eq. 5.7)
};

// signed_weights: n x K row-major, s_nk = y_nk w_nk (w_n the loss's weights, y_n = 1 - 2 delta_{y_n}).
// u_nk = s_nk / sqrt(sum_m |s_mk|) (Eq. 5.5; a class without weight gets u = 0); the top eigenvector of
// the N x N matrix U^T U is U^T e / sqrt(lambda_1) for e the top eigenvector of the K x K matrix U U^T
// (Eigen's self-adjoint solver), so b_n = sign(<u_n, e>) (0 counts as +1). e's sign is fixed by making
// its largest-magnitude entry positive (the first on ties). O(n K^2 + K^3); U U^T is summed over fixed
// blocks of rows added in order, so the result does not depend on n_threads.
Binarization binarize(const double* signed_weights, std::size_t n, std::size_t K, int n_threads);

}  // namespace rebelboost::learner
