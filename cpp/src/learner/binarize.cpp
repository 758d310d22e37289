// Binarization through the K x K matrix U U^T and Eigen's self-adjoint eigensolver.
#include "learner/binarize.hpp"

#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>

#include "util/parallel.hpp"

namespace rebelboost::learner {

namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
constexpr std::size_t kBlock = 4096;

}  // namespace

Binarization binarize(const double* signed_weights, std::size_t n, std::size_t K, int n_threads) {
  const auto k = static_cast<Eigen::Index>(K);
  const Eigen::Map<const RowMatrix> S(signed_weights, static_cast<Eigen::Index>(n), k);
  Eigen::VectorXd inv_root(k);  // 1 / sqrt(sum_m |s_mk|), 0 for a class without weight
  for (Eigen::Index c = 0; c < k; ++c) {
    const double total = S.col(c).cwiseAbs().sum();
    inv_root[c] = total > 0.0 ? 1.0 / std::sqrt(total) : 0.0;
  }
  // U U^T (K x K) = D (S^T S) D with D = diag(inv_root); S^T S summed over fixed row blocks in order.
  const auto n_blocks = static_cast<std::ptrdiff_t>((n + kBlock - 1) / kBlock);
  std::vector<Eigen::MatrixXd> partial(static_cast<std::size_t>(n_blocks));
  util::parallel_for(n_blocks, util::threads_for(n * K * K, n_threads), [&](std::ptrdiff_t b) {
    const auto begin = static_cast<Eigen::Index>(static_cast<std::size_t>(b) * kBlock);
    const auto len = std::min<Eigen::Index>(static_cast<Eigen::Index>(kBlock), static_cast<Eigen::Index>(n) - begin);
    const auto rows = S.middleRows(begin, len);
    partial[static_cast<std::size_t>(b)] = rows.transpose() * rows;
  });
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(k, k);
  for (const Eigen::MatrixXd& p : partial) gram += p;
  gram = inv_root.asDiagonal() * gram * inv_root.asDiagonal();

  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(gram);
  Eigen::VectorXd e = solver.eigenvectors().col(k - 1);  // eigenvalues ascending
  Eigen::Index largest = 0;
  for (Eigen::Index c = 1; c < k; ++c)
    if (std::fabs(e[c]) > std::fabs(e[largest])) largest = c;
  if (e[largest] < 0) e = -e;
  const Eigen::VectorXd projection = inv_root.cwiseProduct(e);  // <u_n, e> = sum_k s_nk inv_root_k e_k

  Binarization out;
  out.eigenvalue = solver.eigenvalues()[k - 1];
  out.side.resize(n);
  for (std::size_t m = 0; m < n; ++m) {
    double v = 0.0;
    for (Eigen::Index c = 0; c < k; ++c) v += signed_weights[m * K + static_cast<std::size_t>(c)] * projection[c];
    out.side[m] = v >= 0.0 ? 1 : -1;
  }
  return out;
}

}  // namespace rebelboost::learner
