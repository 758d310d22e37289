// Wall and CPU time of a fit's stages (fit_info_["stage_seconds"], ["stage_cpu_seconds"]): one clock on
// the training thread, charged to the stage in progress.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <ctime>

namespace rebelboost::util {

// The stages of a fit, named after the data flow (docs/design/data_flow.md).
enum class Stage : std::size_t {
  kOther,           // whatever no stage below claims (the model append, the step checks, ...)
  kSetup,           // parameter and data checks, class sort, the loss's initial state
  kBinning,         // the learner family's preparation of X: bin edges and binned columns; standardisation
  kSampling,        // subsampling heuristics: this iteration's active rows and features
  kSplitValues,     // per-row values the search reads (a tree layer's split values; signed weights)
  kHistograms,      // full scan: histograms built (directly or parent - child) with each feature's split scan
  kQuickSearch,     // QuickBoost: the pass chooser, the heavy-row cache and the pruned search
  kMulticlassRoot,  // REBEL's root: K-vector histograms and the joint split search (quick or full)
  kSelection,       // similarities: distance columns and candidate scores
  kLeafValues,      // a layer's winners, node values and the outputs of leaves that stop
  kPartition,       // rows sent to the children of the nodes that split
  kStep,            // the step's sums over the training rows (closed form or exact)
  kUpdate,          // weights / scores of the training rows updated with the new learner
  kEvaluation,      // eval sets advanced, the callback (early stopping, progress, Python callbacks)
  kCount
};

inline constexpr std::size_t kStageCount = static_cast<std::size_t>(Stage::kCount);

inline constexpr std::array<const char*, kStageCount> kStageNames = {
    "other",     "setup", "binning",     "sampling",   "split_values", "histograms", "quick_search",
    "multiclass_root", "selection", "leaf_values", "partition", "step", "update", "evaluation"};

// Seconds of one stage on three clocks: wall, CPU of the thread that owns the clock, CPU of the whole
// process (every thread). With OMP_WAIT_POLICY=passive, waiting threads use no CPU, so process - thread
// is the work the other threads did in the stage, whatever else the machine runs: a stage whose thread
// CPU equals its process CPU ran serially.
struct StageTimes {
  double wall = 0.0;
  double thread_cpu = 0.0;
  double process_cpu = 0.0;
};

// CPU seconds of the calling thread (wall seconds where the platform has no such clock): a cost that a
// busy machine's preemptions do not inflate, nor threads that spin while they wait (OMP_WAIT_POLICY's
// default), as the process's CPU time is. The calling thread takes part in every parallel region it opens,
// so this follows the wall time of its work.
inline double thread_cpu_seconds() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
#endif
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Charges the time since the last switch to the stage that was in progress, so the stages partition the
// clock's lifetime: a nested stage's time is not also counted in the stage it interrupted. Use it on one
// thread, outside parallel regions; a switch reads three clocks (about a microsecond in all).
class StageClock {
 public:
  StageClock() : last_(now()) {}

  // Makes `stage` the one in progress; returns the one it replaces.
  Stage enter(Stage stage) {
    const StageTimes t = now();
    StageTimes& s = times_[static_cast<std::size_t>(current_)];
    s.wall += t.wall - last_.wall;
    s.thread_cpu += t.thread_cpu - last_.thread_cpu;
    s.process_cpu += t.process_cpu - last_.process_cpu;
    last_ = t;
    const Stage previous = current_;
    current_ = stage;
    return previous;
  }

  // Times per stage (indexed by Stage) since construction, the stage in progress included.
  std::array<StageTimes, kStageCount> times() {
    enter(current_);
    return times_;
  }

 private:
  // The three clocks now (CPU clocks 0 where the platform has none).
  static StageTimes now() {
    StageTimes t;
    t.wall = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
#if defined(CLOCK_THREAD_CPUTIME_ID) && defined(CLOCK_PROCESS_CPUTIME_ID)
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) t.thread_cpu = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0) t.process_cpu = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
#endif
    return t;
  }

  StageTimes last_;
  Stage current_ = Stage::kOther;
  std::array<StageTimes, kStageCount> times_{};
};

// Runs `stage` on `clock` (null: nothing is measured) for the scope's lifetime, then returns to the stage
// it interrupted.
class StageScope {
 public:
  StageScope(StageClock* clock, Stage stage) : clock_(clock), previous_(clock ? clock->enter(stage) : Stage::kOther) {}
  ~StageScope() {
    if (clock_) clock_->enter(previous_);
  }
  StageScope(const StageScope&) = delete;
  StageScope& operator=(const StageScope&) = delete;

 private:
  StageClock* clock_;
  Stage previous_;
};

}  // namespace rebelboost::util
