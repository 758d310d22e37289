// The prediction engine of similarity models: rows in parallel chunks, each standardised once and its
// learners evaluated from its squared distances to the anchors (model/similarity_outputs.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"

namespace rebelboost::predict {

// Evaluates `model` (a similarity model), which must outlive the engine and stay unchanged. Every path
// sums H = a_0 + sum_t f_t a_t in learner order, so a row's scores never depend on its neighbours, the
// path or the thread count. A row holding NaN is an InvalidArgument naming it.
class SimilarityEngine {
 public:
  explicit SimilarityEngine(const Model& model) : model_(model) {}

  template <typename T>
  void decision_function(MatrixView<T> X, double* out, std::size_t n_learners, int n_threads) const;
  template <typename T>
  void predict(MatrixView<T> X, std::int32_t* classes, const PredictOptions& options, std::uint32_t* n_learners) const;
  template <typename T>
  void learner_outputs(MatrixView<T> X, double* out, int n_threads, std::size_t first, std::size_t n) const;
  template <typename T>
  void decision_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t n_learners) const;
  template <typename T>
  std::int32_t predict_row(const T* x, std::ptrdiff_t stride, double* scores, const PredictOptions& options,
                           std::uint32_t* n_learners) const;

 private:
  std::size_t used(std::size_t n) const { return n < model_.similarities.size() ? n : model_.similarities.size(); }
  template <typename T>
  void check_columns(const MatrixView<T>& X) const;

  const Model& model_;
};

}  // namespace rebelboost::predict
