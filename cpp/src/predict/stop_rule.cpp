// The checkpoints of a prediction call and the decision at each (see stop_rule.hpp).
#include "predict/stop_rule.hpp"

#include <cmath>
#include <limits>

#include "predict/cascade.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/error.hpp"

namespace rebelboost::predict {

StopRule::Stops StopRule::stops(const PredictOptions& options, std::size_t n) const {
  Stops st;
  if (options.cascade && model_.cascade.empty())
    throw InvalidArgument("the model has no soft cascade: calibrate one (calibrate_cascade) before predicting with it");
  st.active = (options.early_exit || options.cascade) && n > 0;
  if (!st.active) return st;
  st.range = bounds_.range(n);
  if (options.cascade) {
    st.cascade = &model_.cascade;
    st.every = model_.cascade.every;
    st.n_checkpoints = model_.cascade.thresholds.size() / model_.n_classes();
    return st;
  }
  const std::size_t g = ExitBounds::kGranularity;
  st.every = std::max<std::size_t>(g, (options.check_every == 0 ? kDefaultCheckEvery : options.check_every) + g - 1) / g * g;
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

std::uint32_t StopRule::decide_binary_lanes(const double* p, std::size_t t, const Stops& st, std::int32_t* decided) const {
  double remaining = 0.0, margin_scale = st.range.margin_scale, mass = st.range.mass;
  bounds_.binary_remaining(t, st.range, remaining);
  double theta0 = std::numeric_limits<double>::infinity(), theta1 = theta0;
  if (st.cascade) {
    const std::size_t c = t / st.every - 1;
    if (c < st.n_checkpoints) {
      theta0 = st.cascade->thresholds[2 * c];
      theta1 = st.cascade->thresholds[2 * c + 1];
    }
  }
  std::uint32_t mask = 0;
  for (std::size_t j = 0; j < kLanes; ++j) {
    const double v = p[j], margin = margin_scale * (2.0 * std::fabs(v) + mass);
    // The exact bound first, then the cascade (as decide()).
    const bool one = v - remaining > margin || (!(v + remaining < -margin) && v >= theta1);
    const bool zero = v + remaining < -margin || (!(v - remaining > margin) && -v >= theta0);
    decided[j] = one ? 1 : 0;
    mask |= static_cast<std::uint32_t>(one || zero) << j;
  }
  return mask;
}

}  // namespace rebelboost::predict
