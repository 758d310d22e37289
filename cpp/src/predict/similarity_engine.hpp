// The prediction engine of similarity models: rows in parallel chunks, each standardised once and its
// learners evaluated from its squared distances to the anchors (model/similarity_outputs.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/similarity_outputs.hpp"
#include "predict/stop_rule.hpp"
#include "rebelboost/matrix_view.hpp"
#include "rebelboost/model.hpp"
#include "rebelboost/predict.hpp"

namespace rebelboost::predict {

// Evaluates `model` (a similarity model), which must outlive the engine and stay unchanged. Every path
// sums H = a_0 + sum_t f_t a_t in learner order, so a row's scores never depend on its neighbours, the
// path or the thread count. A row holding NaN is an InvalidArgument naming it.
class SimilarityEngine {
 public:
  explicit SimilarityEngine(const Model& model)
      : model_(model), stop_(model), evaluator_(model, 0, model.similarities.size()) {}

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

  // Adds the learners [t_begin, t_end) to one row's scores (cascade calibration walks rows this way).
  template <typename T>
  void advance_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t t_begin, std::size_t t_end) const;
  const Model& model() const { return model_; }
  const StopRule& stop_rule() const { return stop_; }

 private:
  // Per-row scratch of the paths that may stop early: the standardised row and the squared distances to
  // the anchors, computed on first use so a row that stops early never computes the rest.
  struct RowScratch {
    std::vector<double> z, distance;
    std::vector<std::uint8_t> known;
  };
  RowScratch scratch() const;
  template <typename T>
  std::int32_t predict_stopping(const T* x, std::ptrdiff_t stride, std::size_t row, const PredictOptions& options,
                                double* scores, RowScratch& s, std::uint32_t* n_learners) const;
  std::size_t used(std::size_t n) const { return n < model_.similarities.size() ? n : model_.similarities.size(); }
  template <typename T>
  void check_columns(const MatrixView<T>& X) const;

  const Model& model_;
  StopRule stop_;
  similarity::SimilarityEvaluator evaluator_;  // every learner
};

}  // namespace rebelboost::predict
