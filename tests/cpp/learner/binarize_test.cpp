// Tests of the binarization: the K x K route gives the signs of the top eigenvector of the N x N matrix
// U^T U computed directly, its eigenvalue obeys Eq. 5.7, and the thread count changes nothing.
#include "learner/binarize.hpp"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include <cmath>
#include <vector>

#include "test_util.hpp"

namespace rebelboost::learner {
namespace {

// U (K x N): u_nk = s_nk / sqrt(sum_m |s_mk|).
Eigen::MatrixXd u_matrix(const std::vector<double>& s, std::size_t n, std::size_t K) {
  Eigen::MatrixXd U(K, n);
  for (std::size_t k = 0; k < K; ++k) {
    double total = 0.0;
    for (std::size_t m = 0; m < n; ++m) total += std::fabs(s[m * K + k]);
    for (std::size_t m = 0; m < n; ++m) U(k, m) = s[m * K + k] / std::sqrt(total);
  }
  return U;
}

class BinarizeTest : public ::testing::TestWithParam<std::tuple<std::size_t, std::size_t, std::uint64_t>> {};

TEST_P(BinarizeTest, SignsOfTheTopEigenvectorOfUtU) {
  const auto [n, K, seed] = GetParam();
  const auto s = testing::random_signed_weights(n, K, seed);
  const Binarization b = binarize(s.data(), n, K, 1);
  const Eigen::MatrixXd U = u_matrix(s, n, K);
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> direct(U.transpose() * U);  // N x N
  const Eigen::VectorXd v = direct.eigenvectors().col(static_cast<Eigen::Index>(n) - 1);
  const double lambda1 = direct.eigenvalues()[static_cast<Eigen::Index>(n) - 1];
  EXPECT_NEAR(b.eigenvalue, lambda1, 1e-12 * lambda1);
  EXPECT_GE(b.eigenvalue, (U.array().square().sum()) / static_cast<double>(K) * (1 - 1e-12));  // Eq. 5.7
  // b equals sign(v) up to the eigenvector's global sign (entries at rounding level skipped).
  int agree = 0, disagree = 0;
  for (std::size_t m = 0; m < n; ++m) {
    if (std::fabs(v[static_cast<Eigen::Index>(m)]) < 1e-9) continue;
    (b.side[m] == (v[static_cast<Eigen::Index>(m)] > 0 ? 1 : -1) ? agree : disagree)++;
  }
  EXPECT_TRUE(agree == 0 || disagree == 0) << agree << " agree, " << disagree << " disagree";
  EXPECT_GT(agree + disagree, static_cast<int>(n) * 9 / 10);
}

INSTANTIATE_TEST_SUITE_P(Shapes, BinarizeTest,
                         ::testing::Values(std::make_tuple(std::size_t{12}, std::size_t{2}, 1u),
                                           std::make_tuple(std::size_t{40}, std::size_t{3}, 2u),
                                           std::make_tuple(std::size_t{90}, std::size_t{5}, 3u),
                                           std::make_tuple(std::size_t{150}, std::size_t{7}, 4u)));

TEST(Binarize, SameSidesForEveryThreadCount) {
  const std::size_t n = 30000, K = 6;  // n K^2 >= 2^20: the threaded path
  const auto s = testing::random_signed_weights(n, K, 9);
  const Binarization one = binarize(s.data(), n, K, 1);
  for (const int threads : {2, 3}) {
    const Binarization many = binarize(s.data(), n, K, threads);
    EXPECT_EQ(many.side, one.side);
    EXPECT_EQ(many.eigenvalue, one.eigenvalue);
  }
}

TEST(Binarize, ClassWithoutWeightIsIgnored) {
  const std::size_t n = 20, K = 3;
  auto s = testing::random_signed_weights(n, K, 5);
  for (std::size_t m = 0; m < n; ++m) s[m * K + 2] = 0.0;
  const Binarization b = binarize(s.data(), n, K, 1);
  EXPECT_TRUE(std::isfinite(b.eigenvalue));
  EXPECT_EQ(b.side.size(), n);
}

}  // namespace
}  // namespace rebelboost::learner
