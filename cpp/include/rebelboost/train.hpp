// Training entry point: raw X, class indices, optional sample weights and parameters in; a Model out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"

namespace rebelboost {

struct TrainParams {
  LossKind loss = LossKind::kAdaBoost;
  int n_estimators = 200;
  int max_depth = 1;              // 1..8
  int n_bins = 256;               // value bins + 1 missing bin, 3..256
  double learning_rate = 1.0;     // shrinkage multiplying every step a_t (0 < lr)
  int n_threads = 0;              // <= 0: all cores; the model never depends on it
  std::size_t bin_subsample = 200000;  // rows used to find bin edges when there are more
  std::int64_t bin_seed = -1;          // < 0: evenly spaced rows; >= 0: seeded random rows
  // Smoothing added to both weight sums of the closed-form step, as a fraction of the total weight;
  // < 0 selects the default 1 / max(n_samples, sum of sample weights) (Schapire & Singer's 1/N, with
  // sample weights counted as frequencies), which caps |a| near ln(N) / 2.
  double smoothing = -1.0;
};

// What one boosting iteration did; passed to the callback and kept in TrainResult::history.
struct IterationInfo {
  int iteration = 0;        // 0-based
  double train_loss = 0.0;  // normalised surrogate loss after this iteration (1 at the start)
  double weighted_error = 0.0;  // binary losses: weighted error of f_t before the step
  int tree_depth = 0;
  std::int64_t bin_accumulations = 0;  // histogram adds performed (sample x feature)
};

// Called after every iteration; return false to stop training early (the iteration is kept).
using IterationCallback = std::function<bool(const IterationInfo&)>;

struct TrainResult {
  Model model;
  std::vector<IterationInfo> history;
  std::string stop_reason;  // "n_estimators", "no_edge", "perfect_fit" or "callback"
};

// y[n] is a class index in [0, n_classes); binary losses need n_classes == 2 (class 1 is y = +1).
// sample_weight may be null (all ones); weights must be finite and >= 0 with a positive sum.
// Throws InvalidArgument on any violated precondition (shapes, inf in X, bad labels, bad weights).
template <typename T>
TrainResult train(MatrixView<T> X, const std::int32_t* y, const double* sample_weight,
                  std::size_t n_classes, const TrainParams& params,
                  const IterationCallback& callback = {});

}  // namespace rebelboost
