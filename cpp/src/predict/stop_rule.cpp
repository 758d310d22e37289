// The checkpoints of a prediction call and the decision at each (see stop_rule.hpp).
#include "predict/stop_rule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "predict/cascade.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/error.hpp"

namespace rebelboost::predict {

StopRule::StopRule(const Model& model) : model_(model), bounds_(model), all_(bounds_.range(model.n_learners())) {
  const std::size_t g = ExitBounds::kGranularity;
  needed_.resize(model.n_learners() / g + 1);
  needed_lead_.resize(needed_.size());
  for (std::size_t c = 0; c < needed_.size(); ++c) {
    needed_[c] = bounds_.needed(c * g, all_);
    needed_lead_[c] = bounds_.needed_lead(c * g, all_);
  }
}

StopRule::Stops StopRule::stops(const PredictOptions& options, std::size_t n) const {
  Stops st;
  if (options.cascade && model_.cascade.empty())
    throw InvalidArgument("the model has no soft cascade: calibrate one (calibrate_cascade) before predicting with it");
  st.active = (options.early_exit || options.cascade) && n > 0;
  if (!st.active) return st;
  st.range = bounds_.range(n);
  st.last = n;
  if (options.cascade) {
    st.cascade = &model_.cascade;
    st.every = model_.cascade.every;
    st.n_checkpoints = model_.cascade.thresholds.size() / model_.n_classes();
    return st;
  }
  const std::size_t g = ExitBounds::kGranularity;
  st.every = std::max<std::size_t>(g, (options.check_every == 0 ? kDefaultCheckEvery : options.check_every) + g - 1) / g * g;
  st.last = n - n / kExitTailShare;
  return st;
}

std::int32_t StopRule::decide(const double* s, std::size_t stride, std::size_t t, const Stops& st,
                              const ExitBounds::Leaders& l) const {
  const std::size_t K = model_.n_outputs;
  const std::int32_t exact = K == 1 ? bounds_.decided_binary(s[0], t, st.range) : bounds_.decided(s, stride, t, st.range, l);
  if (exact >= 0 || !st.cascade) return exact;
  const std::size_t c = t / st.every - 1;
  return c < st.n_checkpoints ? cascade_decision(*st.cascade, c, K, s[0], l) : -1;
}

std::int32_t StopRule::decide(const double* s, std::size_t stride, std::size_t t, const Stops& st) const {
  const std::size_t K = model_.n_outputs;
  return decide(s, stride, t, st, K == 1 ? ExitBounds::Leaders{} : ExitBounds::leaders(s, stride, K));
}

StopRule::Margins StopRule::margins(const double* s, std::size_t stride, std::size_t K) {
  if (K == 1) return {std::fabs(s[0]), std::fabs(s[0])};
  double lo = s[0], hi = s[0], second = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 1; k < K; ++k) {
    const double v = s[k * stride];
    second = std::max(second, std::min(hi, v));  // the runner-up if v is the new top
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return {hi - lo, hi - second};
}

std::size_t StopRule::next_possible(std::size_t t, const Margins& row, const Stops& st) const {
  const std::size_t n = st.range.n;
  // The spread after s learners, as rounded additions reach it, stays below this (the rounding is far
  // below 2^-20 of the magnitudes, see exit_bounds.hpp).
  const double slack = 0x1p-20;
  // The most a margin x after t learners can be after s of them (x grows by at most growth(t, s)).
  const auto reach = [&](double x, std::size_t s) {
    return (x + bounds_.growth(t, s)) * (1.0 + slack) + slack * st.range.mass;
  };
  if (!st.cascade) {
    // Without a cascade the answer is the first checkpoint where reach >= needed: the reach grows with s
    // (prefix sums of non-negative terms) and `needed` shrinks (suffix sums), in floating point too, so
    // bisection finds it in O(log) steps instead of a step per checkpoint (a row far from deciding was
    // checked against every checkpoint up to the end, each time it came back).
    const std::size_t stop = std::min(n - 1, st.last);  // the last learner count that may be a checkpoint
    if (n == 0 || t >= stop || st.every == 0) return n;
    const std::size_t m = (stop - t) / st.every;  // checkpoints t + k every <= stop, k = 1 .. m
    // Both margins grow by at most growth(t, s) (exit_bounds.hpp); both tests are monotone in s.
    const auto possible = [&](std::size_t k) {
      const std::size_t s = t + k * st.every;
      return reach(row.spread, s) >= needed(s, st) && reach(row.lead, s) >= needed_lead(s, st);
    };
    // Galloping from the next checkpoint (a row near deciding pays one test), then bisection.
    std::size_t lo = 1, hi = 1;
    while (hi <= m && !possible(hi)) lo = hi + 1, hi *= 2;
    hi = std::min(hi, m + 1);
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (possible(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo <= m ? t + lo * st.every : n;
  }
  for (std::size_t s = st.next(t, n); s < n; s = st.next(s, n)) {
    const double lead_reach = reach(row.lead, s);
    if (reach(row.spread, s) >= needed(s, st) && lead_reach >= needed_lead(s, st)) return s;
    const std::size_t c = st.cascade ? s / st.every - 1 : st.n_checkpoints;
    if (c >= st.n_checkpoints) continue;
    // A cascade leaves with a margin (|P| for K = 1, the leader's lead for K >= 2) at least some threshold
    // of this checkpoint.
    const std::size_t w = model_.n_classes();
    double least = std::numeric_limits<double>::infinity();
    for (const double* theta = st.cascade->thresholds.data() + c * w; theta != st.cascade->thresholds.data() + (c + 1) * w; ++theta)
      if (*theta < least) least = *theta;
    if (lead_reach >= least) return s;
  }
  return n;
}

BinaryTest StopRule::binary_test(std::size_t t, const Stops& st) const {
  BinaryTest test{0.0, st.range.margin_scale, st.range.mass, std::numeric_limits<double>::infinity(),
                  std::numeric_limits<double>::infinity()};
  bounds_.binary_remaining(t, st.range, test.remaining);
  if (st.cascade) {
    const std::size_t c = t / st.every - 1;
    if (c < st.n_checkpoints) {
      test.theta0 = st.cascade->thresholds[2 * c];
      test.theta1 = st.cascade->thresholds[2 * c + 1];
    }
  }
  return test;
}

}  // namespace rebelboost::predict
