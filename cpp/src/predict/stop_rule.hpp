// When a row may stop before the last learner (exact early exit, a soft cascade), for every learner family.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "predict/exit_bounds.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"

namespace rebelboost::predict {

// Built once per compiled model (the exact-exit bounds of its step vectors); `model` must outlive it.
class StopRule {
 public:
  explicit StopRule(const Model& model);

  // Learners between two checks for an early decision, unless PredictOptions::check_every says otherwise.
  static constexpr std::size_t kDefaultCheckEvery = 32;
  // Exact exit checks a row only at checkpoints that leave at least n / kExitTailShare of the n learners to
  // save: later ones save less than the checks that lead there cost (docs/cascades.md, "When each pays").
  static constexpr std::size_t kExitTailShare = 4;

  // The checkpoints of one call; inactive: every row takes all learners. With a cascade they are the
  // cascade's (its first n_checkpoints carry thresholds), else every `every` learners.
  struct Stops {
    bool active = false;
    std::size_t every = 0;
    const Cascade* cascade = nullptr;
    std::size_t n_checkpoints = 0;
    std::size_t last = 0;  // no checkpoint after this one: n - n / kExitTailShare for exact exit, else n
    ExitBounds::Range range;
    // The next checkpoint after t (t is 0 or a checkpoint), or n.
    std::size_t next(std::size_t t, std::size_t n) const {
      return active && t + every <= std::min(last, n) ? t + every : n;
    }
  };
  // Throws InvalidArgument if options ask for a cascade the model does not have.
  Stops stops(const PredictOptions& options, std::size_t n) const;

  // The class a row's scores s[k * stride] after t learners (a checkpoint) already decide, or -1: the exact
  // bound first (its class is the full evaluation's), then the cascade's threshold. l: the row's leaders
  // (K >= 2).
  std::int32_t decide(const double* s, std::size_t stride, std::size_t t, const Stops& st,
                      const ExitBounds::Leaders& l) const;
  std::int32_t decide(const double* s, std::size_t stride, std::size_t t, const Stops& st) const;
  // The same for the lanes of a binary model's group, as the test the kernels apply (BinaryTest).
  BinaryTest binary_test(std::size_t t, const Stops& st) const;

  // A row's spread (max_k s[k * stride] - min_k s[k * stride]) and lead (max_k s[k * stride] - the
  // runner-up, the cascade's margin); both |s[0]| for K = 1. Of several rows: the largest of each.
  struct Margins {
    double spread = 0.0, lead = 0.0;
    void raise(const Margins& o) {
      spread = std::max(spread, o.spread);
      lead = std::max(lead, o.lead);
    }
  };
  static Margins margins(const double* s, std::size_t stride, std::size_t K);
  // The first checkpoint after t (0 or a checkpoint) where a row whose margins after t learners are at most
  // `row` could be decided (st.range.n if none): the checkpoints between cannot decide it (neither the exact
  // bound nor the cascade's thresholds are within reach), so skipping them changes no class and no learner
  // count, and saves their checks.
  std::size_t next_possible(std::size_t t, const Margins& row, const Stops& st) const;
  // ExitBounds::needed / needed_lead(s, st.range): a row whose spread is at most needed, or whose lead is at
  // most needed_lead, is not decided by the exact bound at checkpoint s (tabled at construction for calls
  // using every learner).
  double needed(std::size_t s, const Stops& st) const {
    const std::size_t c = s / ExitBounds::kGranularity;
    return st.range.n == all_.n && c < needed_.size() ? needed_[c] : bounds_.needed(s, st.range);
  }
  double needed_lead(std::size_t s, const Stops& st) const {
    const std::size_t c = s / ExitBounds::kGranularity;
    return st.range.n == all_.n && c < needed_lead_.size() ? needed_lead_[c] : bounds_.needed_lead(s, st.range);
  }
  // Whether the exact bound may decide a row with these margins at checkpoint s (else decide() gives -1
  // unless a cascade's threshold is reached).
  bool exact_possible(std::size_t s, const Margins& m, const Stops& st) const {
    return m.spread > needed(s, st) && m.lead > needed_lead(s, st);
  }

  const ExitBounds& bounds() const { return bounds_; }

 private:
  const Model& model_;
  ExitBounds bounds_;
  ExitBounds::Range all_;       // the range of a call with every learner
  std::vector<double> needed_;  // [s / kGranularity]: ExitBounds::needed(s, all_)
  std::vector<double> needed_lead_;  // [s / kGranularity]: ExitBounds::needed_lead(s, all_)
};

// One row from checkpoint to checkpoint: advance(t_begin, t_end) adds those learners to scores[0..K),
// which start at the bias. Returns the class; *n_learners (may be null) the learners it took.
template <typename Advance>
std::int32_t predict_with_stops(const StopRule& rule, const Model& model, const PredictOptions& options, std::size_t n,
                                double* scores, std::uint32_t* n_learners, Advance&& advance) {
  const StopRule::Stops st = rule.stops(options, n);
  for (std::size_t k = 0; k < model.n_outputs; ++k) scores[k] = model.bias[k];
  StopRule::Margins m = StopRule::margins(scores, 1, model.n_outputs);
  for (std::size_t t = 0; t < n;) {
    const std::size_t next = st.active ? rule.next_possible(t, m, st) : n;
    advance(t, next);
    t = next;
    if (t == n) break;
    // next_possible bounds the margins from above; the exact bound needs the margins themselves above
    // `needed` and `needed_lead` (one pass over the scores), before the leaders and the pair sums are looked at.
    m = StopRule::margins(scores, 1, model.n_outputs);
    if (!st.cascade && !rule.exact_possible(t, m, st)) continue;
    const std::int32_t c = rule.decide(scores, 1, t, st);
    if (c >= 0) {
      if (n_learners) *n_learners = static_cast<std::uint32_t>(t);
      return c;
    }
  }
  if (n_learners) *n_learners = static_cast<std::uint32_t>(n);
  std::size_t best = 0;  // H > 0 for K = 1, else the first largest (class_of)
  if (model.n_outputs == 1) return scores[0] > 0.0 ? 1 : 0;
  for (std::size_t k = 1; k < model.n_outputs; ++k)
    if (scores[k] > scores[best]) best = k;
  return static_cast<std::int32_t>(best);
}

}  // namespace rebelboost::predict
