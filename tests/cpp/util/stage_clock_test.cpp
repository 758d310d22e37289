// Tests of the stage clock: the stages partition its lifetime, nested scopes are not counted twice, CPU
// clocks are consistent with the wall clock.
#include "util/stage_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>

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

}  // namespace
}  // namespace rebelboost::util
