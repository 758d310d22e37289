// Copies a group of rows' values of the used features into the column-wise layout the kernels read.
#pragma once

#include <cstddef>

#include "predict/forest_arrays.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/matrix_view.hpp"

namespace rebelboost::predict {

// Whether one of Xt[u * 16 + j], u in [u_begin, u_end), all 16 lanes, is NaN: a separate pass over the
// contiguous columns (vectorised), so the copies below are plain loads and stores. Lanes that hold no row
// may hold a NaN left over: the answer is then true for nothing, which only picks the NaN-aware kernel.
template <typename T>
inline bool any_nan(const T* Xt, std::size_t u_begin, std::size_t u_end) {
  unsigned nan = 0;
  for (std::size_t i = u_begin * kLanes; i < u_end * kLanes; ++i) nan |= static_cast<unsigned>(Xt[i] != Xt[i]);
  return nan != 0;
}

// Copies rows r0 .. r0 + n_lanes of the used features into Xt[slot * 16 + lane]; true if one is NaN.
// Lanes >= n_lanes keep whatever they held (their results are never read).
template <typename T>
inline bool gather_group(const MatrixView<T>& X, std::size_t r0, std::size_t n_lanes, const ForestArrays& f, T* Xt) {
  const auto rs = X.row_stride, cs = X.col_stride;
  if (cs == 1) {
    for (std::size_t j = 0; j < n_lanes; ++j) {
      const T* row = X.data + static_cast<std::ptrdiff_t>(r0 + j) * rs;
      for (std::size_t u = 0; u < f.n_slots; ++u) Xt[u * kLanes + j] = row[f.features[u]];
    }
  } else {
    for (std::size_t u = 0; u < f.n_slots; ++u) {
      const T* col = X.data + static_cast<std::ptrdiff_t>(f.features[u]) * cs + static_cast<std::ptrdiff_t>(r0) * rs;
      for (std::size_t j = 0; j < n_lanes; ++j) Xt[u * kLanes + j] = col[static_cast<std::ptrdiff_t>(j) * rs];
    }
  }
  return any_nan(Xt, 0, f.n_slots);
}

// Copies the slots [u_begin, u_end) of the rows rows[j] of the lanes j in `lanes` into Xt[slot * 16 + j];
// true if one is NaN (or a leftover NaN in another lane, see any_nan). Other lanes keep what they held.
template <typename T>
inline bool gather_lanes(const MatrixView<T>& X, const std::size_t* rows, std::uint32_t lanes, std::size_t u_begin,
                         std::size_t u_end, const ForestArrays& f, T* Xt) {
  if (!lanes) return false;
  const auto cs = X.col_stride;
  // One full line of Xt per slot: the 16 values of a feature come from 16 rows (a lane without a row reads
  // the first lane's), rather than 16 passes writing a value per line.
  const T* row[kLanes];
  const auto first = static_cast<std::size_t>(__builtin_ctz(lanes));
  for (std::size_t j = 0; j < kLanes; ++j)
    row[j] = X.data + static_cast<std::ptrdiff_t>(rows[((lanes >> j) & 1u) ? j : first]) * X.row_stride;
  // The rows' lines are mostly not in cache yet: their loads are requested kAhead slots early.
  constexpr std::size_t kAhead = 8;
  for (std::size_t u = u_begin; u < u_end; ++u) {
    if (u + kAhead < u_end) {
      const std::ptrdiff_t ahead = static_cast<std::ptrdiff_t>(f.features[u + kAhead]) * cs;
      for (std::size_t j = 0; j < kLanes; ++j) __builtin_prefetch(row[j] + ahead);
    }
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(f.features[u]) * cs;
    T* out = Xt + u * kLanes;
    for (std::size_t j = 0; j < kLanes; ++j) out[j] = row[j][at];
  }
  return any_nan(Xt, u_begin, u_end);
}

}  // namespace rebelboost::predict
