// check_params: the parameters of a fit checked once, against the one table of bounds (param_bounds.hpp).
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "rebelboost/error.hpp"
#include "rebelboost/param_bounds.hpp"

namespace rebelboost {

namespace {

std::string number(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

// "max_depth must be in [1, 8], got 9": the bound's own interval notation.
void check_bound(const char* name, double value) {
  const ParamBound& b = param_bound(name);
  if (b.contains(value) && (!b.integral || value == std::floor(value))) return;
  const std::string high = std::isinf(b.high) ? "inf" : number(b.high);
  throw InvalidArgument(std::string(name) + " must be " + (b.integral ? "an integer " : "a number ") + "in " +
                        (b.low_open ? "(" : "[") + number(b.low) + ", " + high + (b.high_open ? ")" : "]") +
                        ", got " + number(value));
}

}  // namespace

const ParamBound& param_bound(std::string_view name) {
  for (const ParamBound& b : kParamBounds)
    if (name == b.name) return b;
  throw InvalidArgument("no bound for parameter '" + std::string(name) + "'");
}

void check_params(const TrainParams& p) {
  check_bound("n_estimators", p.n_estimators);
  check_bound("max_depth", p.max_depth);
  check_bound("n_bins", p.n_bins);
  check_bound("learning_rate", p.learning_rate);
  check_bound("quick", p.quick);
  check_bound("criterion", p.criterion);
  check_bound("weight_trim", p.weight_trim);
  check_bound("subsample", p.subsample);
  check_bound("feature_fraction", p.feature_fraction);
  check_bound("veb_lambda", p.veb_lambda);
  check_bound("distance_cache_mb", p.similarity.distance_cache_mb);
  check_bound("max_candidates", p.similarity.max_candidates);
  check_bound("min_samples_leaf", p.min_samples_leaf);
  check_bound("tree_penalty", p.tree_penalty);
  if (p.tree_penalty != 0.0 && p.learner != LearnerKind::kHybrid)
    throw InvalidArgument(std::string("tree_penalty ranks the candidates of hybrids; ") + learner_name(p.learner) +
                          " learners need 0");
  if (!std::isfinite(p.smoothing)) throw InvalidArgument("smoothing must be finite");
  if (p.bin_subsample == 0) throw InvalidArgument("bin_subsample must be positive");
  if (!(p.quick_eta > 0.0 && p.quick_eta <= 1.0)) throw InvalidArgument("quick_eta must be in (0, 1]");
  if (p.quick_chunks < 1) throw InvalidArgument("quick_chunks must be >= 1");
  if (p.rebel_g != RebelG::kExponential && p.rebel_g != RebelG::kLogistic && p.rebel_g != RebelG::kSquared)
    throw InvalidArgument("unknown REBEL loss " + std::to_string(static_cast<std::uint32_t>(p.rebel_g)) +
                          " (expected exponential, logistic or squared)");
  if (p.rebel_g != RebelG::kExponential && p.loss != LossKind::kRebel)
    throw InvalidArgument(std::string("the ") + rebel_g_name(p.rebel_g) + " loss is REBEL's; " + loss_name(p.loss) +
                          " is exponential only");
  if (p.rebel_g != RebelG::kExponential && p.learner != LearnerKind::kTree)
    throw InvalidArgument(std::string("similarities need REBEL's exponential loss, not the ") + rebel_g_name(p.rebel_g) +
                          " one (their steps and selection use its closed forms)");
  if (p.criterion != 0 && p.loss == LossKind::kRebel)
    throw InvalidArgument("the gini and entropy criteria are available for the binary losses (AdaBoost, VEB-Boost) only");
  if (p.loss == LossKind::kSquaredError && (p.learner != LearnerKind::kTree || p.criterion != 0 || p.weight_trim < 1.0))
    throw InvalidArgument("the regressor grows regression trees by the variance criterion (no similarities, criterion or "
                          "weight_trim)");
}

}  // namespace rebelboost
