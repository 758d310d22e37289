// Tests of DistanceCache: every column it hands out equals PointSet's own (bit for bit) whatever the
// budget, the request pattern and the thread count; least recently requested columns give way; a budget
// below one request still serves it; and a selector's learners never depend on the budget.
#include "learner/distance_cache.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "learner/similarity_select.hpp"
#include "test_util.hpp"

namespace rebelboost::learner {
namespace {

using testing::random_points;

// The budget, in MiB, of exactly `columns` columns of n doubles.
double budget_of(std::size_t columns, std::size_t n) {
  return static_cast<double>(columns * n * sizeof(double)) / 1048576.0;
}

bool same_bits(const double* a, const double* b, std::size_t n) { return std::memcmp(a, b, n * sizeof(double)) == 0; }

TEST(DistanceCache, CapacityFollowsTheBudgetUpToEveryColumn) {
  const std::size_t n = 300, d = 4;
  const PointSet points(random_points(n, d, 1), n, d, 1);
  EXPECT_EQ(DistanceCache(points, 0.0).capacity(), 0u);
  EXPECT_EQ(DistanceCache(points, budget_of(7, n)).capacity(), 7u);
  EXPECT_EQ(DistanceCache(points, budget_of(7, n) * 0.999).capacity(), 6u);
  EXPECT_EQ(DistanceCache(points, 1024.0).capacity(), n);
  EXPECT_EQ(DistanceCache(points, std::numeric_limits<double>::infinity()).capacity(), n);
}

TEST(DistanceCache, NoBudgetClaimsMoreThanHalfThePhysicalMemory) {
  const std::size_t GiB = std::size_t{1} << 30, n = 1'000'000;  // a column: 8 MB
  const double huge = 1e12;                                       // MiB
  // 16 GiB of memory: at most 8 GiB of columns, i.e. floor(8 GiB / 8e6 B) = 1073 columns.
  EXPECT_EQ(cache_columns(huge, n, 16 * GiB), 1073u);
  EXPECT_EQ(cache_columns(std::numeric_limits<double>::infinity(), n, 16 * GiB), 1073u);
  EXPECT_EQ(cache_columns(1024.0, n, 16 * GiB), 134u);  // below the bound: the budget itself
  EXPECT_EQ(cache_columns(huge, 300, 16 * GiB), 300u);  // every column fits
  EXPECT_EQ(cache_columns(huge, n, 0), n);               // memory unknown: the budget alone
  EXPECT_EQ(cache_columns(0.0, n, 16 * GiB), 0u);
  EXPECT_EQ(cache_columns(-1.0, n, 16 * GiB), 0u);
  EXPECT_EQ(cache_columns(std::numeric_limits<double>::quiet_NaN(), n, 16 * GiB), 0u);
  // The machine's own bound: a budget of a million TiB holds every column of a small set, no more.
  const PointSet points(random_points(50, 3, 2), 50, 3, 1);
  EXPECT_EQ(DistanceCache(points, 1e12).capacity(), 50u);
}

TEST(DistanceCache, ColumnsEqualPointSetsForEveryBudgetAndThreadCount) {
  const std::size_t n = 2100, d = 37;  // several row blocks; threaded (REBELBOOST_WORK_PER_THREAD=64)
  const auto x = random_points(n, d, 2);
  std::vector<std::vector<double>> direct(n);
  const PointSet reference(x, n, d, 1);
  std::mt19937_64 rng(3);
  std::vector<std::vector<std::uint32_t>> requests;
  for (int r = 0; r < 60; ++r) {  // batches over a pool of 80 points, so columns recur
    std::vector<std::uint32_t> pool(80);
    for (std::uint32_t& j : pool) j = static_cast<std::uint32_t>(rng() % 80 * 26);
    std::sort(pool.begin(), pool.end());
    pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
    std::shuffle(pool.begin(), pool.end(), rng);
    pool.resize(1 + rng() % 32);
    requests.push_back(pool);
  }
  for (const auto& request : requests)
    for (const std::uint32_t j : request)
      if (direct[j].empty()) {
        direct[j].resize(n);
        reference.squared_distances(j, direct[j].data());
      }
  for (const int threads : {1, 3}) {
    const PointSet points(x, n, d, threads);
    for (const double budget : {0.0, budget_of(1, n), budget_of(5, n), budget_of(40, n), 1024.0}) {
      DistanceCache cache(points, budget);
      std::size_t asked = 0;
      for (const auto& request : requests) {
        const std::vector<const double*>& got = cache.columns(request.data(), request.size());
        ASSERT_EQ(got.size(), request.size());
        for (std::size_t b = 0; b < request.size(); ++b)
          ASSERT_TRUE(same_bits(got[b], direct[request[b]].data(), n))
              << "point " << request[b] << ", budget " << budget << ", threads " << threads;
        asked += request.size();
        EXPECT_LE(cache.stored(), cache.capacity());
      }
      EXPECT_EQ(cache.hits() + cache.misses(), asked);
      if (budget == 0.0) {
        EXPECT_EQ(cache.hits(), 0u);
      }
      if (budget == 1024.0) {
        EXPECT_EQ(cache.misses(), cache.stored());  // each point computed once
      }
    }
  }
}

TEST(DistanceCache, TheLeastRecentlyRequestedColumnGivesWay) {
  const std::size_t n = 50, d = 2;
  const PointSet points(random_points(n, d, 4), n, d, 1);
  DistanceCache cache(points, budget_of(2, n));
  const std::uint32_t a = 1, b = 2, c = 3;
  cache.columns(&a, 1);
  cache.columns(&b, 1);
  cache.columns(&a, 1);  // a is now the most recent: c takes b's slot
  EXPECT_EQ(cache.hits(), 1u);
  cache.columns(&c, 1);
  EXPECT_EQ(cache.stored(), 2u);
  cache.columns(&a, 1);
  EXPECT_EQ(cache.hits(), 2u);  // a stayed
  cache.columns(&b, 1);
  EXPECT_EQ(cache.hits(), 2u);  // b was evicted
  EXPECT_EQ(cache.misses(), 4u);
}

TEST(DistanceCache, ARequestLargerThanTheBudgetIsServedWhole) {
  const std::size_t n = 64, d = 3;
  const PointSet points(random_points(n, d, 5), n, d, 1);
  DistanceCache cache(points, budget_of(3, n));
  std::vector<std::uint32_t> request(10);
  for (std::size_t b = 0; b < request.size(); ++b) request[b] = static_cast<std::uint32_t>(5 * b);
  for (int round = 0; round < 2; ++round) {
    const std::vector<const double*> got = cache.columns(request.data(), request.size());
    std::vector<double> direct(n);
    for (std::size_t b = 0; b < request.size(); ++b) {
      points.squared_distances(request[b], direct.data());
      EXPECT_TRUE(same_bits(got[b], direct.data(), n)) << "round " << round << ", point " << request[b];
      for (std::size_t e = 0; e < b; ++e) EXPECT_NE(got[b], got[e]);
    }
  }
  EXPECT_EQ(cache.stored(), 3u);
}

TEST(DistanceCache, SelectionsNeverDependOnTheBudget) {
  // Successive selections on changing weights (as boosting makes them), with budgets from none to all.
  const std::size_t n = 400, K = 3, d = 5;
  const auto x = random_points(n, d, 6);
  const PointSet points(x, n, d, 2);
  std::vector<std::vector<SimilaritySelection>> runs;
  for (const double budget : {0.0, budget_of(2, n), budget_of(30, n), 1024.0}) {
    SimilarityParams params;
    params.distance_cache_mb = budget;
    SimilaritySelector selector(points, K, params, 2);
    runs.emplace_back();
    for (std::uint64_t t = 0; t < 8; ++t) {
      const auto s = testing::random_signed_weights(n, K, 100 + t % 3);  // weights recur: so do anchors
      runs.back().push_back(selector.select(s.data()));
    }
    if (budget == 1024.0) {
      EXPECT_GT(selector.cache().hits(), 0u);
    }
  }
  for (const auto& run : runs)
    for (std::size_t t = 0; t < run.size(); ++t) {
      const SimilarityCandidate& got = run[t].best;
      const SimilarityCandidate& want = runs[0][t].best;
      EXPECT_EQ(got.kind, want.kind);
      EXPECT_EQ(got.i, want.i);
      EXPECT_EQ(got.j, want.j);
      EXPECT_EQ(got.score, want.score);
      EXPECT_EQ(run[t].candidates, runs[0][t].candidates);
      EXPECT_TRUE(same_bits(got.outputs.data(), want.outputs.data(), n));
    }
}

}  // namespace
}  // namespace rebelboost::learner
