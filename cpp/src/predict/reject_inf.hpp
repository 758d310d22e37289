// Refusing +-inf in the rows handed to prediction (NaN is a missing value, but inf is refused as
// scikit-learn's validation does). One rule, two places it runs: a pass over all of X before a prediction
// (reject_inf), or each chunk of rows checked just before the chunk is gathered, while it is in cache
// (engine.cpp, engine_stopping.cpp), which spares wide rows a second read from memory (docs/guide/cascades.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>

#include "rebelboost/error.hpp"
#include "rebelboost/matrix_view.hpp"
#include "util/parallel.hpp"

namespace rebelboost::predict {

// Throws InvalidArgument if one of the rows [r0, r1) of X holds +-inf. Each row without a branch per value
// (an OR of |v| == inf, which the compiler vectorises): on wide float32 rows a test and a branch per value
// took a third of a cascade's time. The error names no row, so it does not depend on which block finds it.
template <typename T>
void reject_inf_rows(const MatrixView<T>& X, std::size_t r0, std::size_t r1) {
  unsigned inf = 0;
  for (std::size_t r = r0; r < r1; ++r) {
    const T* row = X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride;
    if (X.col_stride == 1) {
      for (std::size_t c = 0; c < X.n_cols; ++c) inf |= static_cast<unsigned>(std::fabs(row[c]) == std::numeric_limits<T>::infinity());
    } else {
      for (std::size_t c = 0; c < X.n_cols; ++c)
        inf |= static_cast<unsigned>(std::isinf(row[static_cast<std::ptrdiff_t>(c) * X.col_stride]));
    }
  }
  if (inf)
    throw InvalidArgument(std::string("Input X contains infinity or a value too large for dtype('") +
                          (sizeof(T) == 4 ? "float32" : "float64") + "').");
}

// The same for all of X, in blocks on n_threads threads.
template <typename T>
void reject_inf(const MatrixView<T>& X, int n_threads) {
  constexpr std::size_t kBlockRows = 1024;
  const auto n_blocks = static_cast<std::ptrdiff_t>((X.n_rows + kBlockRows - 1) / kBlockRows);
  const int threads = util::threads_for(X.n_rows * X.n_cols, n_threads);
  util::parallel_for(n_blocks, threads, [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * kBlockRows;
    reject_inf_rows(X, begin, std::min(X.n_rows, begin + kBlockRows));
  });
}

}  // namespace rebelboost::predict
