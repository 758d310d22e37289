// The public prediction API (rebelboost/predict.hpp): Predictor owns a model and the engine of its learner
// family (trees: engine.hpp; similarities and hybrids: similarity_engine.hpp); the free functions compile the model
// for one call.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "predict/cascade.hpp"
#include "predict/engine.hpp"
#include "predict/similarity_engine.hpp"
#include "predict/tree_shap.hpp"
#include "rebelboost/error.hpp"
#include "rebelboost/predict.hpp"
#include "util/parallel.hpp"

namespace rebelboost {

namespace {

// Regression trees' real outputs f_t(x) for t in [begin, begin + count), a node walk per row and tree.
template <typename T>
void real_tree_outputs(const Model& model, const MatrixView<T>& X, double* out, int n_threads, std::size_t begin,
                       std::size_t count) {
  predict::check_columns(X.n_cols, model.n_features);
  util::parallel_for(static_cast<std::ptrdiff_t>(X.n_rows), util::threads_for(X.n_rows * count * 8, n_threads),
                     [&](std::ptrdiff_t r) {
                       const T* x = X.data + r * X.row_stride;
                       for (std::size_t t = 0; t < count; ++t)
                         out[static_cast<std::size_t>(r) * count + t] = model.trees[begin + t].output_real(x, X.col_stride);
                     });
}

}  // namespace

struct Predictor::Impl {
  explicit Impl(Model m) : model(std::move(m)) {
    if (model.learner == LearnerKind::kTree)
      trees.emplace(model);
    else
      similarities.emplace(model);
  }
  // Runs fn on the engine of the model's family.
  template <typename Fn>
  decltype(auto) run(Fn&& fn) const {
    return similarities ? fn(*similarities) : fn(*trees);
  }
  Model model;
  // The engine refers to `model`: Impl never moves (it lives behind a unique_ptr).
  std::optional<predict::Engine> trees;
  std::optional<predict::SimilarityEngine> similarities;  // similarity and hybrid models
};

Predictor::Predictor(Model model) : impl_(std::make_unique<Impl>(std::move(model))) {}
Predictor::~Predictor() = default;
Predictor::Predictor(Predictor&&) noexcept = default;
Predictor& Predictor::operator=(Predictor&&) noexcept = default;

const Model& Predictor::model() const { return impl_->model; }

template <typename T>
void Predictor::decision_function(MatrixView<T> X, double* out, std::size_t n_trees, int n_threads,
                                  bool reject_inf) const {
  impl_->run([&](const auto& engine) { engine.decision_function(X, out, n_trees, n_threads, reject_inf); });
}

template <typename T>
void Predictor::predict(MatrixView<T> X, std::int32_t* classes, const PredictOptions& options,
                        std::uint32_t* n_learners) const {
  impl_->run([&](const auto& engine) { engine.predict(X, classes, options, n_learners); });
}

template <typename T>
void Predictor::contributions(MatrixView<T> X, double* out, std::size_t n_trees, int n_threads) const {
  rebelboost::contributions(impl_->model, X, out, n_threads, n_trees);
}

template <typename T>
void Predictor::tree_outputs(MatrixView<T> X, std::int8_t* out, int n_threads, std::size_t first_tree,
                             std::size_t n_trees) const {
  if (!impl_->trees)
    throw InvalidArgument(std::string("tree_outputs needs a tree model, not a ") + learner_name(impl_->model.learner) +
                          " one; similarity outputs are real: use learner_outputs");
  impl_->trees->tree_outputs(X, out, n_threads, first_tree, n_trees);
}

template <typename T>
void Predictor::learner_outputs(MatrixView<T> X, double* out, int n_threads, std::size_t first, std::size_t n) const {
  if (impl_->similarities) {
    impl_->similarities->learner_outputs(X, out, n_threads, first, n);
    return;
  }
  const std::size_t all = impl_->model.trees.size(), begin = std::min(first, all), count = std::min(n, all - begin);
  if (impl_->model.is_regression()) {
    real_tree_outputs(impl_->model, X, out, n_threads, begin, count);
    return;
  }
  std::vector<std::int8_t> signs(X.n_rows * count);
  impl_->trees->tree_outputs(X, signs.data(), n_threads, begin, count);
  for (std::size_t i = 0; i < signs.size(); ++i) out[i] = signs[i];
}

template <typename T>
Cascade Predictor::calibrate_cascade(MatrixView<T> X, const std::int32_t* y, const CascadeTarget& target,
                                     int n_threads, CascadeReport* report) const {
  return impl_->run(
      [&](const auto& engine) { return predict::calibrate_cascade(engine, X, y, target, n_threads, report); });
}

template <typename T>
void Predictor::decision_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t n_trees) const {
  impl_->run([&](const auto& engine) { engine.decision_row(x, stride, scores, n_trees); });
}

template <typename T>
std::int32_t Predictor::predict_row(const T* x, std::ptrdiff_t stride, double* scores, const PredictOptions& options,
                                    std::uint32_t* n_learners) const {
  return impl_->run([&](const auto& engine) { return engine.predict_row(x, stride, scores, options, n_learners); });
}

template <typename T>
void decision_function(const Model& model, MatrixView<T> X, double* out, int n_threads, std::size_t n_trees) {
  if (model.learner != LearnerKind::kTree) {
    predict::SimilarityEngine(model).decision_function(X, out, n_trees, n_threads);
    return;
  }
  if (X.n_rows >= predict::Engine::kMinGroupRows) {
    predict::Engine(model).decision_function(X, out, n_trees, n_threads);
    return;
  }
  // A few rows: walking the model's own nodes is cheaper than compiling it.
  predict::check_columns(X.n_cols, model.n_features);
  const std::size_t K = model.n_outputs, n = std::min(n_trees, model.trees.size());
  for (std::size_t r = 0; r < X.n_rows; ++r) {
    const T* x = X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride;
    double* s = out + r * K;
    for (std::size_t k = 0; k < K; ++k) s[k] = model.bias[k];
    for (std::size_t t = 0; t < n; ++t) {
      if (model.is_regression()) {  // f * a, then added: the kernels' order
        s[0] += model.trees[t].output_real(x, X.col_stride) * model.trees[t].step[0];
        continue;
      }
      const bool neg = model.trees[t].output(x, X.col_stride) < 0;
      for (std::size_t k = 0; k < K; ++k) s[k] += neg ? -model.trees[t].step[k] : model.trees[t].step[k];
    }
  }
}

template <typename T>
void tree_outputs(const Model& model, MatrixView<T> X, std::int8_t* out, int n_threads, std::size_t first_tree,
                  std::size_t n_trees) {
  if (model.learner != LearnerKind::kTree)
    throw InvalidArgument(std::string("tree_outputs needs a tree model, not a ") + learner_name(model.learner) +
                          " one; similarity outputs are real: use learner_outputs");
  predict::Engine(model).tree_outputs(X, out, n_threads, first_tree, n_trees);
}

template <typename T>
void learner_outputs(const Model& model, MatrixView<T> X, double* out, int n_threads, std::size_t first,
                     std::size_t n) {
  Predictor(model).learner_outputs(X, out, n_threads, first, n);
}

template <typename T>
void contributions(const Model& model, MatrixView<T> X, double* out, int n_threads, std::size_t n_trees) {
  predict::TreeShap(model, n_trees).contributions(X, out, n_threads);
}

void scores_to_classes(const Model& model, const double* scores, std::size_t n_rows, std::int32_t* out) {
  const std::size_t K = model.n_outputs;
  for (std::size_t r = 0; r < n_rows; ++r) out[r] = predict::class_of(scores + r * K, K);
}

#define REBELBOOST_PREDICT(T)                                                                                      \
  template void Predictor::decision_function<T>(MatrixView<T>, double*, std::size_t, int, bool) const;            \
  template void Predictor::predict<T>(MatrixView<T>, std::int32_t*, const PredictOptions&, std::uint32_t*) const; \
  template void Predictor::tree_outputs<T>(MatrixView<T>, std::int8_t*, int, std::size_t, std::size_t) const;      \
  template void Predictor::learner_outputs<T>(MatrixView<T>, double*, int, std::size_t, std::size_t) const;        \
  template void Predictor::contributions<T>(MatrixView<T>, double*, std::size_t, int) const;                    \
  template void contributions<T>(const Model&, MatrixView<T>, double*, int, std::size_t);                        \
  template void Predictor::decision_row<T>(const T*, std::ptrdiff_t, double*, std::size_t) const;                 \
  template Cascade Predictor::calibrate_cascade<T>(MatrixView<T>, const std::int32_t*, const CascadeTarget&, int, \
                                                  CascadeReport*) const;                                          \
  template std::int32_t Predictor::predict_row<T>(const T*, std::ptrdiff_t, double*, const PredictOptions&,       \
                                                  std::uint32_t*) const;                                          \
  template void decision_function<T>(const Model&, MatrixView<T>, double*, int, std::size_t);                     \
  template void tree_outputs<T>(const Model&, MatrixView<T>, std::int8_t*, int, std::size_t, std::size_t);        \
  template void learner_outputs<T>(const Model&, MatrixView<T>, double*, int, std::size_t, std::size_t);
REBELBOOST_PREDICT(float)
REBELBOOST_PREDICT(double)
#undef REBELBOOST_PREDICT

}  // namespace rebelboost
