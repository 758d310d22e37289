// Tests of the one parallel loop: every index once, thread-count-independent errors and sums.
#include "util/parallel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace rebelboost::util {
namespace {

TEST(ParallelFor, RunsEveryIndexExactlyOnce) {
  for (int threads : {0, 1, 2, 3, 8}) {
    for (std::ptrdiff_t n : {0, 1, 2, 7, 1000}) {
      for (bool dynamic : {false, true}) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        parallel_for(n, threads, [&](std::ptrdiff_t i) { hits[static_cast<std::size_t>(i)]++; }, dynamic);
        for (std::ptrdiff_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << i;
      }
    }
  }
}

TEST(ResolveThreads, AbsurdCountsAreCappedAtAMultipleOfTheCores) {
  // n_jobs = 10**6 crashed inside libgomp and 1 000 failed to create threads under a memory cap.
  const int cores = std::max(1, omp_get_num_procs());
  EXPECT_EQ(resolve_threads(0), cores);
  EXPECT_EQ(resolve_threads(-5), cores);
  EXPECT_EQ(resolve_threads(1), 1);
  EXPECT_EQ(resolve_threads(1'000'000), kMaxThreadsPerCore * cores);
  EXPECT_EQ(resolve_threads(std::numeric_limits<int>::max()), kMaxThreadsPerCore * cores);
  std::atomic<int> hits{0};
  std::atomic<int> widest{0};
  parallel_for(10'000, 1'000'000, [&](std::ptrdiff_t) {
    hits++;
    int seen = widest.load();
    while (omp_get_num_threads() > seen && !widest.compare_exchange_weak(seen, omp_get_num_threads())) {
    }
  });
  EXPECT_EQ(hits.load(), 10'000);
  EXPECT_LE(widest.load(), kMaxThreadsPerCore * cores);
}

TEST(ParallelFor, RethrowsTheErrorOfTheSmallestIndex) {
  for (int threads : {1, 2, 4}) {
    for (bool dynamic : {false, true}) {
      try {
        parallel_for(
            500, threads,
            [](std::ptrdiff_t i) {
              if (i % 97 == 13) throw std::runtime_error("index " + std::to_string(i));
            },
            dynamic);
        FAIL() << "no exception";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "index 13") << threads << " threads";
      }
    }
  }
}

}  // namespace
}  // namespace rebelboost::util
