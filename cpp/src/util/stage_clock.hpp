// Wall time of a fit's stages (fit_info_["stage_seconds"]): one clock on the training thread, charged to
// the stage in progress.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>

namespace rebelboost::util {

// The stages of a fit, named after the data flow (README "Where a fit spends its time").
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

// Charges the time since the last switch to the stage that was in progress, so the stages partition the
// clock's lifetime: a nested stage's time is not also counted in the stage it interrupted. Use it on one
// thread, outside parallel regions; a switch reads the steady clock once (tens of nanoseconds).
class StageClock {
 public:
  StageClock() : last_(Clock::now()) {}

  // Makes `stage` the one in progress; returns the one it replaces.
  Stage enter(Stage stage) {
    const Clock::time_point now = Clock::now();
    seconds_[static_cast<std::size_t>(current_)] += std::chrono::duration<double>(now - last_).count();
    last_ = now;
    const Stage previous = current_;
    current_ = stage;
    return previous;
  }

  // Seconds per stage (indexed by Stage) since construction, the stage in progress included.
  std::array<double, kStageCount> seconds() {
    enter(current_);
    return seconds_;
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_;
  Stage current_ = Stage::kOther;
  std::array<double, kStageCount> seconds_{};
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
