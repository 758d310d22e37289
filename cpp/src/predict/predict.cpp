// Batch prediction: OpenMP over blocks of rows, trees evaluated on raw values.
#include "rebelboost/predict.hpp"

#include <algorithm>
#include <string>

#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

namespace rebelboost {

namespace {

constexpr std::size_t kRowBlock = 256;

template <typename T>
void check_columns(const Model& model, const MatrixView<T>& X) {
  if (X.n_cols != model.n_features)
    throw InvalidArgument("X has " + std::to_string(X.n_cols) + " features, but the model expects " +
                          std::to_string(model.n_features));
}

std::ptrdiff_t n_blocks(std::size_t n_rows) { return static_cast<std::ptrdiff_t>((n_rows + kRowBlock - 1) / kRowBlock); }

}  // namespace

template <typename T>
void decision_function(const Model& model, MatrixView<T> X, double* out, int n_threads, std::size_t n_trees) {
  check_columns(model, X);
  const std::size_t K = model.n_outputs;
  const std::size_t T_used = std::min(n_trees, model.trees.size());
  util::parallel_for(n_blocks(X.n_rows), n_threads, [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * kRowBlock;
    const std::size_t end = std::min(X.n_rows, begin + kRowBlock);
    for (std::size_t r = begin; r < end; ++r)
      for (std::size_t k = 0; k < K; ++k) out[r * K + k] = model.bias[k];
    // Tree-outer inside a block keeps one tree hot in cache while it sees kRowBlock rows.
    for (std::size_t t = 0; t < T_used; ++t) {
      const Tree& tree = model.trees[t];
      const double* step = tree.step.data();
      for (std::size_t r = begin; r < end; ++r) {
        const T* row = X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride;
        const double f = tree.output(row, X.col_stride);
        double* o = out + r * K;
        for (std::size_t k = 0; k < K; ++k) o[k] += f * step[k];
      }
    }
  });
}

template <typename T>
void tree_outputs(const Model& model, MatrixView<T> X, std::int8_t* out, int n_threads) {
  check_columns(model, X);
  const std::size_t T_all = model.trees.size();
  util::parallel_for(n_blocks(X.n_rows), n_threads, [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * kRowBlock;
    const std::size_t end = std::min(X.n_rows, begin + kRowBlock);
    for (std::size_t t = 0; t < T_all; ++t)
      for (std::size_t r = begin; r < end; ++r) {
        const T* row = X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride;
        out[r * T_all + t] = static_cast<std::int8_t>(model.trees[t].output(row, X.col_stride));
      }
  });
}

void scores_to_classes(const Model& model, const double* scores, std::size_t n_rows, std::int32_t* out) {
  const std::size_t K = model.n_outputs;
  for (std::size_t r = 0; r < n_rows; ++r) {
    if (K == 1) {
      out[r] = scores[r] > 0.0 ? 1 : 0;
      continue;
    }
    const double* s = scores + r * K;
    std::size_t best = 0;
    for (std::size_t k = 1; k < K; ++k)
      if (s[k] > s[best]) best = k;
    out[r] = static_cast<std::int32_t>(best);
  }
}

template void decision_function<float>(const Model&, MatrixView<float>, double*, int, std::size_t);
template void decision_function<double>(const Model&, MatrixView<double>, double*, int, std::size_t);
template void tree_outputs<float>(const Model&, MatrixView<float>, std::int8_t*, int);
template void tree_outputs<double>(const Model&, MatrixView<double>, std::int8_t*, int);

}  // namespace rebelboost
