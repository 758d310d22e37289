// The allowed range of every numeric training parameter: one table, checked by check_params() and read by
// the Python layer (rebelboost._core.PARAM_BOUNDS), so the estimators' constraints, the command line and
// the core cannot disagree (docs/design/parameters.md).
#pragma once

#include <limits>
#include <string_view>

#include "rebelboost/model.hpp"
#include "rebelboost/train.hpp"

namespace rebelboost {

struct ParamBound {
  const char* name;  // train()'s keyword in the binding: the TrainParams field (SimilarityParams' for distance_cache_mb)
  double low;
  double high;
  bool low_open;   // low itself is excluded
  bool high_open;  // high itself is excluded (an open bound at infinity: any finite value)
  bool integral;   // an int field

  bool contains(double v) const {
    return (low_open ? v > low : v >= low) && (high_open ? v < high : v <= high);
  }
};

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();
inline constexpr double kMaxDistanceCacheMb = 1048576.0;  // 2^20 MiB = 1 TiB: beyond it a budget is a typo

inline constexpr ParamBound kParamBounds[] = {
    {"n_estimators", 1, static_cast<double>(kMaxTrees), false, false, true},
    {"max_depth", 1, 8, false, false, true},
    {"n_bins", 3, 256, false, false, true},
    {"learning_rate", 0, kUnbounded, true, true, false},
    {"quick", 0, 2, false, false, true},      // 0 off, 1 on, 2 auto
    {"criterion", 0, 2, false, false, true},  // 0 loss, 1 gini, 2 entropy
    {"weight_trim", 0, 1, true, false, false},
    {"subsample", 0, 1, true, false, false},
    {"feature_fraction", 0, 1, true, false, false},
    {"veb_lambda", 0, 1, false, false, false},
    {"distance_cache_mb", 0, kMaxDistanceCacheMb, false, false, false},
    {"min_samples_leaf", 1, kUnbounded, false, true, true},  // the regressor (an int: the binding refuses more)
    {"tree_penalty", 0, kUnbounded, false, true, false},     // hybrids
    {"max_candidates", 0, 1073741824, false, false, true},   // similarities and hybrids (0: no limit; 2^30 fits an int)
};

// The entry of kParamBounds named `name`; InvalidArgument when there is none.
const ParamBound& param_bound(std::string_view name);

// Every rule on the parameters alone (no data): the bounds above and the combinations (REBEL's surrogates,
// criteria, similarities); InvalidArgument naming the first one violated.
void check_params(const TrainParams& params);

}  // namespace rebelboost
