// Validation data watched during training: each eval set's scores H and loss, brought up to date after
// every tree (DESIGN "Data flow": callbacks, validation, early stop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "loss/loss.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/train.hpp"

namespace rebelboost::boost {

// Makes a loss of the training run's kind and parameters for other labels and weights (n rows).
using LossMaker = std::function<std::unique_ptr<loss::Loss>(const std::int32_t* y, const double* sample_weight,
                                                              std::size_t n)>;

// f(x) in {+1, -1} of `tree` for rows rows[0..n) of X (rows == null: 0..n), written to out[0..n).
template <typename T>
void tree_outputs_on_rows(const Tree& tree, const MatrixView<T>& X, const std::size_t* rows, std::size_t n,
                          std::int8_t* out, int n_threads);

template <typename T>
class EvalWatch {
 public:
  // Checks every set (columns, labels in [0, n_classes), weights) and starts its scores and loss at bias.
  // Throws InvalidArgument naming the set and the problem.
  EvalWatch(const std::vector<EvalSet<T>>& sets, const std::vector<double>& bias, std::size_t n_features,
            std::size_t n_classes, const LossMaker& make_loss, int n_threads);

  // Adds f(x) * tree.step to every set's scores and updates its loss; fills info.eval_loss and
  // info.eval_scores (pointers into this object, valid until the next add).
  void add(const Tree& tree, IterationInfo& info);

 private:
  struct Watched {
    MatrixView<T> X;
    std::unique_ptr<loss::Loss> loss;
    std::vector<double> scores;   // n_rows x K
    std::vector<std::int8_t> f;   // the last tree's outputs
  };
  std::vector<Watched> sets_;
  std::size_t n_outputs_;
  int n_threads_;
};

}  // namespace rebelboost::boost
