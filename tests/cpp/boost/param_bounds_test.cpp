// Tests of the one table of parameter bounds (param_bounds.hpp): check_params refuses exactly what each
// bound excludes, naming the parameter, and TrainParams' defaults lie inside every bound.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rebelboost/error.hpp"
#include "rebelboost/param_bounds.hpp"

namespace rebelboost {
namespace {

using Setter = std::function<void(TrainParams&, double)>;

// Each bound's TrainParams field, by the bound's name (a new bound without an entry here fails below).
const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> s = {
      {"n_estimators", [](TrainParams& p, double v) { p.n_estimators = static_cast<int>(v); }},
      {"max_depth", [](TrainParams& p, double v) { p.max_depth = static_cast<int>(v); }},
      {"n_bins", [](TrainParams& p, double v) { p.n_bins = static_cast<int>(v); }},
      {"learning_rate", [](TrainParams& p, double v) { p.learning_rate = v; }},
      {"quick", [](TrainParams& p, double v) { p.quick = static_cast<int>(v); }},
      {"criterion", [](TrainParams& p, double v) { p.criterion = static_cast<int>(v); }},
      {"weight_trim", [](TrainParams& p, double v) { p.weight_trim = v; }},
      {"subsample", [](TrainParams& p, double v) { p.subsample = v; }},
      {"feature_fraction", [](TrainParams& p, double v) { p.feature_fraction = v; }},
      {"veb_lambda", [](TrainParams& p, double v) { p.veb_lambda = v; }},
      {"distance_cache_mb", [](TrainParams& p, double v) { p.similarity.distance_cache_mb = v; }},
      {"min_samples_leaf", [](TrainParams& p, double v) { p.min_samples_leaf = static_cast<int>(v); }},
      {"tree_penalty", [](TrainParams& p, double v) { p.tree_penalty = v; }},
      {"max_candidates", [](TrainParams& p, double v) { p.similarity.max_candidates = static_cast<int>(v); }},
  };
  return s;
}

double getter(const TrainParams& p, const std::string& name) {
  if (name == "n_estimators") return p.n_estimators;
  if (name == "max_depth") return p.max_depth;
  if (name == "n_bins") return p.n_bins;
  if (name == "learning_rate") return p.learning_rate;
  if (name == "quick") return p.quick;
  if (name == "criterion") return p.criterion;
  if (name == "weight_trim") return p.weight_trim;
  if (name == "subsample") return p.subsample;
  if (name == "feature_fraction") return p.feature_fraction;
  if (name == "veb_lambda") return p.veb_lambda;
  if (name == "distance_cache_mb") return p.similarity.distance_cache_mb;
  if (name == "min_samples_leaf") return p.min_samples_leaf;
  if (name == "tree_penalty") return p.tree_penalty;
  if (name == "max_candidates") return p.similarity.max_candidates;
  ADD_FAILURE() << "no getter for " << name;
  return std::nan("");
}

bool refused(const ParamBound& b, double v) {
  TrainParams p;
  setters().at(b.name)(p, v);
  try {
    check_params(p);
    return false;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(std::string(b.name) + " must be"), std::string::npos) << e.what();
    return true;
  }
}

TEST(ParamBounds, CheckParamsRefusesExactlyWhatEachBoundExcludes) {
  for (const ParamBound& b : kParamBounds) {
    ASSERT_EQ(setters().count(b.name), 1u) << b.name << " has a bound but no field in this test";
    const double step = b.integral ? 1.0 : 1e-9;
    const double low_in = b.low_open ? b.low + step : b.low;
    EXPECT_FALSE(refused(b, low_in)) << b.name << " " << low_in;
    EXPECT_TRUE(refused(b, b.low_open ? b.low : b.low - step)) << b.name;
    if (std::isinf(b.high)) {
      // An int field cannot hold infinity (casting it to int is undefined): only real-valued fields.
      if (!b.integral) EXPECT_TRUE(refused(b, b.high)) << b.name << ": infinity is outside an open bound";
    } else {
      EXPECT_FALSE(refused(b, b.high_open ? b.high - step : b.high)) << b.name;
      EXPECT_TRUE(refused(b, b.high_open ? b.high : b.high + step)) << b.name;
    }
    if (!b.integral) {
      EXPECT_TRUE(refused(b, std::nan(""))) << b.name << ": NaN is in no interval";
    }
  }
}

TEST(ParamBounds, DefaultsLieInsideEveryBound) {
  const TrainParams defaults;
  check_params(defaults);
  for (const ParamBound& b : kParamBounds) EXPECT_TRUE(b.contains(getter(defaults, b.name))) << b.name;
}

TEST(ParamBounds, NamesAreUniqueAndLookedUp) {
  std::vector<std::string> seen;
  for (const ParamBound& b : kParamBounds) {
    for (const std::string& name : seen) EXPECT_NE(name, b.name);
    seen.emplace_back(b.name);
    EXPECT_EQ(&param_bound(b.name), &b);
  }
  EXPECT_THROW(param_bound("no_such_parameter"), InvalidArgument);
}

}  // namespace
}  // namespace rebelboost
