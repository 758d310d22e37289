// Tests of the one parallel loop (and its two-phase form): every index once, thread-count-independent errors.
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

TEST(ParallelPhases, RunsTheSecondPhaseAfterTheFirstAndBetween) {
  for (int threads : {1, 2, 3, 8}) {
    for (std::ptrdiff_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> first(static_cast<std::size_t>(n)), second(static_cast<std::size_t>(n));
      std::atomic<int> between{0};
      bool ordered = true;  // written by the single call of between
      std::atomic<bool> second_saw_all{true};
      parallel_phases(
          n, threads, [&](std::ptrdiff_t i) { first[static_cast<std::size_t>(i)]++; },
          [&] {
            between++;
            for (const auto& hit : first) ordered = ordered && hit.load() == 1;
          },
          [&](std::ptrdiff_t i) {
            if (between.load() != 1) second_saw_all = false;
            second[static_cast<std::size_t>(i)]++;
          });
      EXPECT_EQ(between.load(), 1);
      EXPECT_TRUE(ordered) << threads << " threads, n " << n;
      EXPECT_TRUE(second_saw_all.load());
      for (std::ptrdiff_t i = 0; i < n; ++i) ASSERT_EQ(second[static_cast<std::size_t>(i)].load(), 1) << i;
    }
  }
}

TEST(ParallelPhases, RethrowsTheErrorASerialRunMeetsFirst) {
  const auto thrower = [](int at) {
    return [at](std::ptrdiff_t i) {
      if (i >= at && i % 97 == at % 97) throw std::runtime_error("index " + std::to_string(i));
    };
  };
  const auto none = [](std::ptrdiff_t) {};
  for (int threads : {1, 2, 4}) {
    std::atomic<int> later{0};
    try {  // the first phase's error; nothing after it runs
      parallel_phases(500, threads, thrower(13), [&] { later++; }, [&](std::ptrdiff_t) { later++; });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "index 13") << threads << " threads";
    }
    EXPECT_EQ(later.load(), 0);
    try {  // between's error before any of the second phase's
      parallel_phases(500, threads, none, [] { throw std::runtime_error("between"); }, thrower(0));
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "between") << threads << " threads";
    }
    try {
      parallel_phases(500, threads, none, [] {}, thrower(20));
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "index 20") << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace rebelboost::util
