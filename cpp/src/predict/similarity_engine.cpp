// Batch and one-row prediction of similarity and hybrid models (predict/similarity_engine.hpp).
#include "predict/similarity_engine.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "predict/engine.hpp"
#include "predict/reject_inf.hpp"
#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

namespace rebelboost::predict {

namespace {

constexpr std::size_t kChunkRows = 256;

}  // namespace

SimilarityEngine::Row SimilarityEngine::scratch() const {
  return {std::vector<double>(model_.n_features), std::vector<double>(model_.anchor_rows.size()),
          std::vector<std::uint8_t>(model_.anchor_rows.size())};
}

template <typename T>
void SimilarityEngine::start(const T* x, std::ptrdiff_t stride, std::size_t row, Row& s) const {
  evaluator_.standardize(x, stride, row, s.z.data());  // NaN refused; +-inf gives the similarities' limits
  std::fill(s.known.begin(), s.known.end(), std::uint8_t{0});
}

template <typename T>
double SimilarityEngine::output(std::size_t t, const T* x, std::ptrdiff_t stride, Row& s) const {
  const LearnerRef r = model_.ref(t);
  if (r.kind == LearnerKind::kTree) return model_.trees[r.index].output(x, stride);
  return evaluator_.output(r.index, s.z.data(), s.distance.data(), s.known.data());
}

template <typename T>
void SimilarityEngine::add(const T* x, std::ptrdiff_t stride, Row& s, double* scores, std::size_t t_begin,
                           std::size_t t_end) const {
  const std::size_t K = model_.n_outputs;
  for (std::size_t t = t_begin; t < t_end; ++t) {
    const double f = output(t, x, stride, s);
    const double* a = model_.step(t).data();
    for (std::size_t k = 0; k < K; ++k) scores[k] += f * a[k];
  }
}

template <typename T, typename Fn>
void SimilarityEngine::for_each_row(const MatrixView<T>& X, int n_threads, Fn&& fn) const {
  check_columns(X.n_cols, model_.n_features);
  const auto n_chunks = static_cast<std::ptrdiff_t>((X.n_rows + kChunkRows - 1) / kChunkRows);
  util::parallel_for(n_chunks, n_threads, [&](std::ptrdiff_t c) {
    Row s = scratch();
    const std::size_t begin = static_cast<std::size_t>(c) * kChunkRows, end = std::min(X.n_rows, begin + kChunkRows);
    for (std::size_t r = begin; r < end; ++r) fn(r, X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, s);
  });
}

template <typename T>
void SimilarityEngine::decision_function(MatrixView<T> X, double* out, std::size_t n_learners, int n_threads,
                                         bool check_inf) const {
  if (check_inf) reject_inf(X, n_threads);
  const std::size_t K = model_.n_outputs, n = used(n_learners);
  if (!batch()) {
    for_each_row(X, n_threads, [&](std::size_t r, const T* x, Row& s) {
      double* scores = out + r * K;
      std::copy(model_.bias.begin(), model_.bias.end(), scores);
      start(x, X.col_stride, r, s);
      add(x, X.col_stride, s, scores, 0, n);
    });
    return;
  }
  check_columns(X.n_cols, model_.n_features);
  similarity::for_each_similarity_output(
      model_, X, 0, n, n_threads, kChunkRows,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t r = begin; r < end; ++r) std::copy(model_.bias.begin(), model_.bias.end(), out + r * K);
      },
      [&](std::size_t t, std::size_t r, double f) {
        const double* a = model_.similarities[t].step.data();
        for (std::size_t k = 0; k < K; ++k) out[r * K + k] += f * a[k];
      });
}

template <typename T>
void SimilarityEngine::predict(MatrixView<T> X, std::int32_t* classes, const PredictOptions& options,
                               std::uint32_t* n_learners) const {
  if (options.reject_inf) reject_inf(X, options.n_threads);
  const std::size_t K = model_.n_outputs, n = used(options.n_trees);
  if (!options.early_exit && !options.cascade) {
    std::vector<double> scores(X.n_rows * K);
    decision_function(X, scores.data(), n, options.n_threads);
    for (std::size_t r = 0; r < X.n_rows; ++r) {
      classes[r] = class_of(scores.data() + r * K, K);
      if (n_learners) n_learners[r] = static_cast<std::uint32_t>(n);
    }
    return;
  }
  check_columns(X.n_cols, model_.n_features);
  stop_.stops(options, n);  // refuses a cascade the model lacks before any work
  for_each_row(X, options.n_threads, [&](std::size_t r, const T* x, Row& s) {
    std::vector<double> scores(K);
    start(x, X.col_stride, r, s);
    classes[r] = predict_with_stops(stop_, model_, options, n, scores.data(), n_learners ? n_learners + r : nullptr,
                                    [&](std::size_t t0, std::size_t t1) { add(x, X.col_stride, s, scores.data(), t0, t1); });
  });
}

template <typename T>
void SimilarityEngine::learner_outputs(MatrixView<T> X, double* out, int n_threads, std::size_t first,
                                       std::size_t n) const {
  const std::size_t all = model_.n_learners();
  const std::size_t begin = std::min(first, all), count = std::min(n, all - begin);
  if (!batch()) {
    for_each_row(X, n_threads, [&](std::size_t r, const T* x, Row& s) {
      start(x, X.col_stride, r, s);
      for (std::size_t i = 0; i < count; ++i) out[r * count + i] = output(begin + i, x, X.col_stride, s);
    });
    return;
  }
  check_columns(X.n_cols, model_.n_features);
  similarity::for_each_similarity_output(
      model_, X, begin, count, n_threads, kChunkRows, [](std::size_t, std::size_t) {},
      [&](std::size_t t, std::size_t r, double f) { out[r * count + (t - begin)] = f; });
}

template <typename T>
void SimilarityEngine::decision_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t n_learners) const {
  Row s = scratch();
  std::copy(model_.bias.begin(), model_.bias.end(), scores);
  start(x, stride, 0, s);
  add(x, stride, s, scores, 0, used(n_learners));
}

template <typename T>
std::int32_t SimilarityEngine::predict_row(const T* x, std::ptrdiff_t stride, double* scores,
                                           const PredictOptions& options, std::uint32_t* n_learners) const {
  Row s = scratch();
  start(x, stride, 0, s);
  return predict_with_stops(stop_, model_, options, used(options.n_trees), scores, n_learners,
                            [&](std::size_t t0, std::size_t t1) { add(x, stride, s, scores, t0, t1); });
}

template <typename T>
void SimilarityEngine::advance_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t t_begin,
                                   std::size_t t_end) const {
  Row s = scratch();
  start(x, stride, 0, s);
  add(x, stride, s, scores, t_begin, t_end);
}

#define REBELBOOST_SIMILARITY_ENGINE(T)                                                                             \
  template void SimilarityEngine::decision_function<T>(MatrixView<T>, double*, std::size_t, int, bool) const;        \
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
