// Validation data watched during training: each eval set's scores H and loss, brought up to date after
// every learner (docs/design/data_flow.md "The boosting loop": callbacks, validation, early stop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "learner/family.hpp"
#include "loss/loss.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/train.hpp"

namespace rebelboost::boost {

// Makes a loss of the training run's kind and parameters for other labels (classifiers) or targets (the
// regressor) and weights (n rows).
using LossMaker = std::function<std::unique_ptr<loss::Loss>(const std::int32_t* y, const double* target,
                                                              const double* sample_weight, std::size_t n)>;

// Throws InvalidArgument (prefixed by `where`) unless every target is finite with |y| <= kMaxAbsTarget.
void check_targets(const double* target, std::size_t n_rows, const std::string& where);

template <typename T>
class EvalWatch {
 public:
  // Checks every set (columns, labels in [0, n_classes) or, for the regressor, finite targets, weights, rows the family can use) and starts its
  // scores and loss at bias. Throws InvalidArgument naming the set and the problem.
  EvalWatch(const std::vector<EvalSet<T>>& sets, const std::vector<double>& bias, std::size_t n_features,
            std::size_t n_classes, bool regression, const LossMaker& make_loss, const learner::Family<T>& family);

  // Adds f_t(x) a_t of learner t of `model` to every set's scores and updates its loss (through the
  // model's family); fills info.eval_loss and info.eval_scores (pointers into this object, valid until the
  // next add).
  void add(learner::Family<T>& family, const Model& model, std::size_t t, IterationInfo& info);

 private:
  struct Watched {
    MatrixView<T> X;
    std::unique_ptr<loss::Loss> loss;
    std::vector<double> scores;   // n_rows x K
  };
  std::vector<Watched> sets_;
  std::size_t n_outputs_;
};

}  // namespace rebelboost::boost
