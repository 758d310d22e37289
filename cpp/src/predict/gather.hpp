// Copies a group of rows' values of the used features into the column-wise layout the kernels read.
#pragma once

#include <cstddef>

#include "predict/forest_arrays.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/matrix_view.hpp"

namespace rebelboost::predict {

// Copies rows r0 .. r0 + n_lanes of the used features into Xt[slot * 16 + lane]; true if one is NaN.
// Lanes >= n_lanes keep whatever they held (their results are never read).
template <typename T>
inline bool gather_group(const MatrixView<T>& X, std::size_t r0, std::size_t n_lanes, const ForestArrays& f, T* Xt) {
  bool nan = false;
  const auto rs = X.row_stride, cs = X.col_stride;
  if (cs == 1) {
    for (std::size_t j = 0; j < n_lanes; ++j) {
      const T* row = X.data + static_cast<std::ptrdiff_t>(r0 + j) * rs;
      for (std::size_t u = 0; u < f.n_slots; ++u) {
        const T v = row[f.features[u]];
        nan |= v != v;
        Xt[u * kLanes + j] = v;
      }
    }
    return nan;
  }
  for (std::size_t u = 0; u < f.n_slots; ++u) {
    const T* col = X.data + static_cast<std::ptrdiff_t>(f.features[u]) * cs + static_cast<std::ptrdiff_t>(r0) * rs;
    for (std::size_t j = 0; j < n_lanes; ++j) {
      const T v = col[static_cast<std::ptrdiff_t>(j) * rs];
      nan |= v != v;
      Xt[u * kLanes + j] = v;
    }
  }
  return nan;
}

}  // namespace rebelboost::predict
