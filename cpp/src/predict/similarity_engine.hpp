// The prediction engine of models that hold similarities (docs/guide/similarity.md): similarity models and
// hybrid models (trees and similarities in Model::order). One row at a time, rows in parallel chunks; a tree
// walks its nodes, a similarity reads the row's squared distances to its anchors (model/similarity_outputs.hpp),
// each computed on first use, so a row that stops early never computes the rest.
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

// Evaluates `model` (LearnerKind::kSimilarity or kHybrid), which must outlive the engine and stay unchanged.
// Every path sums H = a_0 + sum_t f_t a_t in learner order, so a row's scores never depend on its
// neighbours, the path or the thread count. A row holding NaN is an InvalidArgument naming it; +-inf gives
// the similarities' limits.
class SimilarityEngine {
 public:
  explicit SimilarityEngine(const Model& model)
      : model_(model), stop_(model), evaluator_(model, 0, model.similarities.size()) {}

  template <typename T>
  void decision_function(MatrixView<T> X, double* out, std::size_t n_learners, int n_threads,
                         bool check_inf = false) const;
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
  // One row: its standardised features and the squared distances to the anchors known so far.
  struct Row {
    std::vector<double> z, distance;
    std::vector<std::uint8_t> known;
  };
  Row scratch() const;
  template <typename T>
  void start(const T* x, std::ptrdiff_t stride, std::size_t row, Row& s) const;
  template <typename T>
  double output(std::size_t t, const T* x, std::ptrdiff_t stride, Row& s) const;
  template <typename T>
  void add(const T* x, std::ptrdiff_t stride, Row& s, double* scores, std::size_t t_begin, std::size_t t_end) const;
  // Runs fn(row, x, scratch) for every row of X, rows in parallel chunks.
  template <typename T, typename Fn>
  void for_each_row(const MatrixView<T>& X, int n_threads, Fn&& fn) const;
  // Similarity models take the batch path of model/similarity_outputs.hpp (every distance of a row at once).
  bool batch() const { return model_.learner == LearnerKind::kSimilarity; }
  std::size_t used(std::size_t n) const { return n < model_.n_learners() ? n : model_.n_learners(); }

  const Model& model_;
  StopRule stop_;
  similarity::SimilarityEvaluator evaluator_;  // every similarity
};

}  // namespace rebelboost::predict
