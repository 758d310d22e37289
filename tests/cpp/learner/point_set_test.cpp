// Tests of the similarity formulas and of PointSet: expanded distances against direct ones, coincident
// points, exact nearest distinct neighbours under cancellation, thread-count independence.
#include "learner/point_set.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "model/similarity_function.hpp"
#include "test_util.hpp"

namespace rebelboost::learner {
namespace {

std::vector<double> random_points(std::size_t n, std::size_t d, std::uint64_t seed, double offset = 0.0,
                                  double spread = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> x(n * d);
  for (double& v : x) v = offset + spread * normal(rng);
  return x;
}

// f_ij straight from the thesis's definition with vectors, scaled by 16 q / (3 (4/3)^(1/4)).
double two_point_reference(const double* xi, const double* xj, const double* x, std::size_t d) {
  double dot = 0.0, q = 0.0, m2 = 0.0;
  for (std::size_t k = 0; k < d; ++k) {
    const double dk = 0.5 * (xi[k] - xj[k]);
    const double mk = 0.5 * (xi[k] + xj[k]);
    dot += dk * (x[k] - mk);
    q += dk * dk;
    m2 += (x[k] - mk) * (x[k] - mk);
  }
  return 16.0 * q / (3.0 * std::pow(4.0 / 3.0, 0.25)) * dot / (4.0 * q * q + m2 * m2);
}

TEST(SimilarityFunction, TwoPointMatchesTheVectorDefinitionAndStaysInRange) {
  const std::size_t d = 5;
  const auto x = random_points(300, d, 7);
  double largest = 0.0;
  for (std::size_t r = 2; r < 300; ++r) {
    const double* xi = x.data();
    const double* xj = x.data() + d;
    const double* p = x.data() + r * d;
    const double q = 0.25 * similarity::squared_distance(xi, xj, d);
    const double f = similarity::two_point(q, similarity::squared_distance(p, xi, d), similarity::squared_distance(p, xj, d));
    EXPECT_NEAR(f, two_point_reference(xi, xj, p, d), 1e-12);
    EXPECT_LE(std::fabs(f), 1.0);
    largest = std::max(largest, std::fabs(f));
  }
  EXPECT_LT(largest, 1.0);
  // The peak along d, at ||z - m|| = (4/3)^(1/4) ||d||, is exactly 1; the anchors get c / 5.
  const double xi[1] = {1.0}, xj[1] = {-1.0}, peak[1] = {std::pow(4.0 / 3.0, 0.25)};
  const double q = 1.0;
  EXPECT_NEAR(similarity::two_point(q, similarity::squared_distance(peak, xi, 1), similarity::squared_distance(peak, xj, 1)),
              1.0, 1e-15);
  EXPECT_NEAR(similarity::two_point(q, 0.0, 4.0), similarity::kTwoPointScale / 5.0, 1e-15);
  EXPECT_NEAR(similarity::two_point(q, 4.0, 0.0), -similarity::kTwoPointScale / 5.0, 1e-15);
  EXPECT_GT(similarity::kTwoPointScale / 5.0, 0.99);
}

TEST(SimilarityFunction, FarAwayQueriesGiveTheLimitsNotNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(similarity::one_point(0.5, inf), -1.0);
  EXPECT_EQ(similarity::one_point(0.5, 0.0), 1.0);
  EXPECT_EQ(similarity::two_point(1.0, inf, inf), 0.0);
  EXPECT_EQ(similarity::two_point(1.0, 1e300, 1.5e300), 0.0);
  EXPECT_TRUE(std::isfinite(similarity::two_point(1e-200, 1e-100, 2e-100)));
}

TEST(PointSet, ExpandedDistancesMatchDirectOnesForEveryThreadCount) {
  const std::size_t n = 2500, d = 60;  // n d >= 2^17: the threaded path
  const auto x = random_points(n, d, 3);
  std::vector<std::vector<double>> columns;
  for (const int threads : {1, 2, 3}) {
    const PointSet points(x, n, d, threads);
    std::vector<double> column(n);
    points.squared_distances(17, column.data());
    for (std::size_t m = 0; m < n; ++m)
      ASSERT_NEAR(column[m], similarity::squared_distance(x.data() + 17 * d, x.data() + m * d, d), 1e-10);
    EXPECT_EQ(column[17], 0.0);
    columns.push_back(column);
  }
  for (const auto& c : columns) EXPECT_EQ(std::memcmp(c.data(), columns[0].data(), n * sizeof(double)), 0);
}

TEST(PointSet, AProbesColumnDoesNotDependOnTheOtherProbes) {
  // A column computed alone equals the same point's column at any position among other probes, bit for
  // bit (DistanceCache relies on it: a column is the same whichever request computed it).
  const std::size_t n = 1500, d = 29;
  const auto x = random_points(n, d, 4);
  const PointSet points(x, n, d, 2);
  const std::vector<std::uint32_t> index = {9, 400, 3, 1499, 77, 800, 0};
  const PointSet::Probes probes = points.probes(index.data(), index.size());
  std::vector<std::vector<double>> together(index.size(), std::vector<double>(n));
  std::vector<double*> out;
  for (auto& c : together) out.push_back(c.data());
  points.squared_distances(probes, out.data());
  std::vector<double> alone(n);
  for (std::size_t b = 0; b < index.size(); ++b) {
    points.squared_distances(index[b], alone.data());
    EXPECT_EQ(std::memcmp(alone.data(), together[b].data(), n * sizeof(double)), 0) << "probe " << b;
  }
}

TEST(PointSet, CoincidentPointsFormGroupsAtDistanceZero) {
  const std::size_t n = 40, d = 3;
  auto x = random_points(n, d, 5);
  for (const auto& [a, b] : {std::pair<int, int>{3, 30}, {3, 12}, {7, 8}})
    std::copy(x.begin() + a * d, x.begin() + (a + 1) * d, x.begin() + b * d);
  const PointSet points(x, n, d, 1);
  EXPECT_EQ(points.n_groups(), n - 3);
  EXPECT_EQ(points.group(30), 3u);
  EXPECT_EQ(points.group(12), 3u);
  EXPECT_EQ(points.group(3), 3u);
  EXPECT_EQ(points.group(8), 7u);
  EXPECT_EQ(points.group(9), 9u);
  std::vector<double> column(n);
  points.squared_distances(12, column.data());
  EXPECT_EQ(column[3], 0.0);
  EXPECT_EQ(column[30], 0.0);
  // The nearest distinct point skips the copies.
  double brute = std::numeric_limits<double>::infinity();
  for (std::size_t m = 0; m < n; ++m)
    if (points.group(m) != 3u) brute = std::min(brute, points.exact_squared_distance(12, m));
  EXPECT_EQ(points.nearest_distinct(12, column.data()), brute);
  // All points equal: nothing is distinct.
  const PointSet same(std::vector<double>(5 * d, 2.5), 5, d, 1);
  EXPECT_EQ(same.n_groups(), 1u);
  std::vector<double> c(5);
  same.squared_distances(0, c.data());
  EXPECT_EQ(same.nearest_distinct(0, c.data()), std::numeric_limits<double>::infinity());
}

TEST(PointSet, NearestDistinctIsExactDespiteCancellation) {
  // Points far from the origin, 1e-7 apart: the expanded form's rounding (~1e-8 here) swamps the true
  // squared distances (~1e-14); the result must still be the exact brute-force minimum.
  const std::size_t n = 300, d = 4;
  const auto x = random_points(n, d, 11, 1e4, 1e-7);
  const PointSet points(x, n, d, 2);
  std::vector<double> column(n);
  for (const std::size_t i : {0u, 150u, 299u}) {
    points.squared_distances(i, column.data());
    double brute = std::numeric_limits<double>::infinity();
    for (std::size_t m = 0; m < n; ++m)
      if (m != i) brute = std::min(brute, similarity::squared_distance(x.data() + i * d, x.data() + m * d, d));
    EXPECT_EQ(points.nearest_distinct(i, column.data()), brute);
    EXPECT_GT(brute, 0.0);
  }
}

}  // namespace
}  // namespace rebelboost::learner
