// Tests of the stage clock: the stages partition its lifetime, nested scopes are not counted twice, CPU
// clocks are consistent with the wall clock; and of thread_cpu_seconds, which counts the calling thread only.
#include "util/stage_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <numeric>
#include <thread>

namespace rebelboost::util {
namespace {

using Clock = std::chrono::steady_clock;

// Keeps the thread busy for at least `seconds` of wall time.
void spin(double seconds) {
  const Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
  }
}

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(StageClock, StagesPartitionTheClocksLifetime) {
  const Clock::time_point before = Clock::now();
  StageClock clock;
  const Clock::time_point after_start = Clock::now();
  EXPECT_EQ(clock.enter(Stage::kSetup), Stage::kOther);
  spin(0.002);
  {
    const StageScope histograms(&clock, Stage::kHistograms);
    spin(0.003);
    {
      const StageScope partition(&clock, Stage::kPartition);  // nested: charged to partition only
      spin(0.004);
    }
    spin(0.001);
  }
  spin(0.002);  // back in setup
  const double inside = since(after_start);
  const std::array<StageTimes, kStageCount> times = clock.times();
  const double outside = since(before);
  std::array<double, kStageCount> s{};
  for (std::size_t i = 0; i < kStageCount; ++i) s[i] = times[i].wall;
  const double total = std::accumulate(s.begin(), s.end(), 0.0);
  EXPECT_GE(total, inside);
  EXPECT_LE(total, outside);
  EXPECT_GE(s[static_cast<std::size_t>(Stage::kSetup)], 0.004);
  EXPECT_GE(s[static_cast<std::size_t>(Stage::kHistograms)], 0.004);
  EXPECT_GE(s[static_cast<std::size_t>(Stage::kPartition)], 0.004);
  // The outer scope's time excludes the nested one's: all three together fit in the total.
  EXPECT_LE(s[static_cast<std::size_t>(Stage::kSetup)] + s[static_cast<std::size_t>(Stage::kHistograms)] +
                s[static_cast<std::size_t>(Stage::kPartition)],
            total);
  for (const Stage unused : {Stage::kSampling, Stage::kStep, Stage::kUpdate, Stage::kSelection})
    EXPECT_EQ(s[static_cast<std::size_t>(unused)], 0.0);
  // CPU clocks: one thread's CPU never exceeds its wall time, the process's includes it (1 ms: the clocks
  // are read one after the other), and spinning used some.
  double thread_cpu = 0.0;
  for (const StageTimes& t : times) {
    EXPECT_GE(t.thread_cpu, 0.0);
    EXPECT_LE(t.thread_cpu, t.wall + 1e-3);
    EXPECT_GE(t.process_cpu, t.thread_cpu - 1e-3);
    thread_cpu += t.thread_cpu;
  }
  EXPECT_GT(thread_cpu, 0.0);
  EXPECT_LE(thread_cpu, total + 1e-3);
}

TEST(StageClock, ScopeWithoutClockMeasuresNothing) {
  StageClock clock;
  {
    const StageScope none(nullptr, Stage::kHistograms);
    spin(0.001);
  }
  const std::array<StageTimes, kStageCount> s = clock.times();
  EXPECT_EQ(s[static_cast<std::size_t>(Stage::kHistograms)].wall, 0.0);
  EXPECT_EQ(s[static_cast<std::size_t>(Stage::kHistograms)].process_cpu, 0.0);
  EXPECT_GE(s[static_cast<std::size_t>(Stage::kOther)].wall, 0.001);
}

TEST(StageClock, EveryStageHasADistinctName) {
  for (std::size_t a = 0; a < kStageCount; ++a)
    for (std::size_t b = a + 1; b < kStageCount; ++b) EXPECT_STRNE(kStageNames[a], kStageNames[b]);
}

// Spins until the calling thread has used `seconds` of CPU (at most 10 s of wall time); returns whether it
// got there: a loaded machine's preemptions stretch the wall time, not the result.
bool use_cpu(double seconds) {
  const double start = thread_cpu_seconds();
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
  while (thread_cpu_seconds() - start < seconds)
    if (Clock::now() > give_up) return false;
  return true;
}

// thread_cpu_seconds counts the calling thread's work only: another thread's spinning (what OpenMP's
// waiting threads do by default) does not move it, the process's CPU clock does.
TEST(ThreadCpuSeconds, CountsTheCallingThreadOnly) {
  ASSERT_TRUE(use_cpu(0.02));  // its own work moves it
  const std::clock_t process_before = std::clock();
  const double before = thread_cpu_seconds();
  bool other_done = false;
  std::thread other([&] { other_done = use_cpu(0.1); });
  other.join();  // this thread sleeps meanwhile
  const double own = thread_cpu_seconds() - before;
  const double process = static_cast<double>(std::clock() - process_before) / CLOCKS_PER_SEC;
  ASSERT_TRUE(other_done);
  EXPECT_LT(own, 0.02);
  EXPECT_GT(process, own + 0.05);  // the other thread's 0.1 s is in the process's time
}

}  // namespace
}  // namespace rebelboost::util

