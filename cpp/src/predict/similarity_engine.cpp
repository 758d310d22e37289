// Batch and one-row prediction of similarity models (model/similarity_outputs.hpp does the per-row work).
#include "predict/similarity_engine.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "model/similarity_outputs.hpp"
#include "predict/engine.hpp"
#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

namespace rebelboost::predict {

namespace {

constexpr std::size_t kChunkRows = 256;

}  // namespace

template <typename T>
void SimilarityEngine::check_columns(const MatrixView<T>& X) const {
  if (X.n_cols != model_.n_features)
    throw InvalidArgument("X has " + std::to_string(X.n_cols) + " features, but the model expects " +
                          std::to_string(model_.n_features));
}

template <typename T>
void SimilarityEngine::decision_function(MatrixView<T> X, double* out, std::size_t n_learners, int n_threads) const {
  check_columns(X);
  const std::size_t K = model_.n_outputs;
  similarity::for_each_similarity_output(
      model_, X, 0, used(n_learners), n_threads, kChunkRows,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r)
          for (std::size_t k = 0; k < K; ++k) out[r * K + k] = model_.bias[k];
      },
      [&](std::size_t t, std::size_t r, double f) {
        const double* step = model_.similarities[t].step.data();
        for (std::size_t k = 0; k < K; ++k) out[r * K + k] += f * step[k];
      });
}

SimilarityEngine::RowScratch SimilarityEngine::scratch() const {
  return {std::vector<double>(model_.n_features), std::vector<double>(model_.anchor_rows.size()),
          std::vector<std::uint8_t>(model_.anchor_rows.size())};
}

// One row from checkpoint to checkpoint (StopRule), each learner's distances computed on first use: the
// scores are the bits decision_function adds up, learner by learner, until the row stops.
template <typename T>
std::int32_t SimilarityEngine::predict_stopping(const T* x, std::ptrdiff_t stride, std::size_t row,
                                                const PredictOptions& options, double* scores, RowScratch& s,
                                                std::uint32_t* n_learners) const {
  evaluator_.standardize(x, stride, row, s.z.data());
  std::fill(s.known.begin(), s.known.end(), std::uint8_t{0});
  const std::size_t K = model_.n_outputs;
  return predict_with_stops(stop_, model_, options, used(options.n_trees), scores, n_learners,
                            [&](std::size_t t0, std::size_t t1) {
                              for (std::size_t t = t0; t < t1; ++t) {
                                const double f = evaluator_.output(t, s.z.data(), s.distance.data(), s.known.data());
                                const double* step = model_.similarities[t].step.data();
                                for (std::size_t k = 0; k < K; ++k) scores[k] += f * step[k];
                              }
                            });
}

template <typename T>
void SimilarityEngine::advance_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t t_begin,
                                   std::size_t t_end) const {
  RowScratch s = scratch();
  evaluator_.standardize(x, stride, 0, s.z.data());
  for (std::size_t t = t_begin; t < t_end; ++t) {
    const double f = evaluator_.output(t, s.z.data(), s.distance.data(), s.known.data());
    const double* step = model_.similarities[t].step.data();
    for (std::size_t k = 0; k < model_.n_outputs; ++k) scores[k] += f * step[k];
  }
}

template <typename T>
void SimilarityEngine::predict(MatrixView<T> X, std::int32_t* classes, const PredictOptions& options,
                               std::uint32_t* n_learners) const {
  const std::size_t K = model_.n_outputs, n = used(options.n_trees);
  if (options.early_exit || options.cascade) {
    check_columns(X);
    stop_.stops(options, n);  // refuses a cascade the model lacks before any work
    const auto n_chunks = static_cast<std::ptrdiff_t>((X.n_rows + kChunkRows - 1) / kChunkRows);
    util::parallel_for(n_chunks, options.n_threads, [&](std::ptrdiff_t c) {
      RowScratch s = scratch();
      std::vector<double> scores(K);
      const std::size_t begin = static_cast<std::size_t>(c) * kChunkRows, end = std::min(X.n_rows, begin + kChunkRows);
      for (std::size_t r = begin; r < end; ++r)
        classes[r] = predict_stopping(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride, r, options,
                                      scores.data(), s, n_learners ? n_learners + r : nullptr);
    });
    return;
  }
  std::vector<double> scores(X.n_rows * K);
  decision_function(X, scores.data(), n, options.n_threads);
  for (std::size_t r = 0; r < X.n_rows; ++r) {
    classes[r] = class_of(scores.data() + r * K, K);
    if (n_learners) n_learners[r] = static_cast<std::uint32_t>(n);
  }
}

template <typename T>
void SimilarityEngine::learner_outputs(MatrixView<T> X, double* out, int n_threads, std::size_t first,
                                       std::size_t n) const {
  check_columns(X);
  const std::size_t all = model_.similarities.size();
  const std::size_t begin = std::min(first, all), count = std::min(n, all - begin);
  similarity::for_each_similarity_output(
      model_, X, begin, count, n_threads, kChunkRows, [](std::size_t, std::size_t) {},
      [&](std::size_t t, std::size_t r, double f) { out[r * count + (t - begin)] = f; });
}

template <typename T>
void SimilarityEngine::decision_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t n_learners) const {
  const MatrixView<T> row{x, 1, model_.n_features, 0, stride};
  decision_function(row, scores, n_learners, 1);
}

template <typename T>
std::int32_t SimilarityEngine::predict_row(const T* x, std::ptrdiff_t stride, double* scores,
                                           const PredictOptions& options, std::uint32_t* n_learners) const {
  if (options.early_exit || options.cascade) {
    RowScratch s = scratch();
    return predict_stopping(x, stride, 0, options, scores, s, n_learners);
  }
  const std::size_t n = used(options.n_trees);
  decision_row(x, stride, scores, n);
  if (n_learners) *n_learners = static_cast<std::uint32_t>(n);
  return class_of(scores, model_.n_outputs);
}

#define REBELBOOST_SIMILARITY_ENGINE(T)                                                                             \
  template void SimilarityEngine::decision_function<T>(MatrixView<T>, double*, std::size_t, int) const;              \
  template void SimilarityEngine::predict<T>(MatrixView<T>, std::int32_t*, const PredictOptions&, std::uint32_t*)    \
      const;                                                                                                         \
  template void SimilarityEngine::learner_outputs<T>(MatrixView<T>, double*, int, std::size_t, std::size_t) const;   \
  template void SimilarityEngine::decision_row<T>(const T*, std::ptrdiff_t, double*, std::size_t) const;             \
  template void SimilarityEngine::advance_row<T>(const T*, std::ptrdiff_t, double*, std::size_t, std::size_t) const; \
  template std::int32_t SimilarityEngine::predict_row<T>(const T*, std::ptrdiff_t, double*, const PredictOptions&,   \
                                                         std::uint32_t*) const;
REBELBOOST_SIMILARITY_ENGINE(float)
REBELBOOST_SIMILARITY_ENGINE(double)
#undef REBELBOOST_SIMILARITY_ENGINE

}  // namespace rebelboost::predict
