// Copies a group of rows' values of the used features into the column-wise layout the kernels read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "predict/forest_arrays.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/matrix_view.hpp"

namespace rebelboost::predict {

// Row-major rows are read in address order before their columns are copied (stream_rows) when a block of
// them fits in this many bytes (it must stay in the core's cache until the copies) ...
inline constexpr std::size_t kStreamBytes = std::size_t{1} << 20;
// ... and the features the trees read lie in at least this share of a row's 64-byte lines (then reading
// them all costs at most twice the lines the copies need, most of which the hardware fetches in pairs).
inline constexpr double kStreamLineShare = 0.5;

// The share of the 64-byte lines of a row of n_features values of value_bytes bytes (starting on a line)
// that hold one of the features[0..n_slots).
inline double used_line_share(const std::int32_t* features, std::size_t n_slots, std::size_t n_features,
                              std::size_t value_bytes) {
  const std::size_t n_lines = (n_features * value_bytes + 63) / 64;
  if (n_lines == 0) return 0.0;
  std::vector<bool> used(n_lines, false);
  std::size_t count = 0;
  for (std::size_t u = 0; u < n_slots; ++u) {
    const std::size_t line = static_cast<std::size_t>(features[u]) * value_bytes / 64;
    count += !used[line];
    used[line] = true;
  }
  return static_cast<double>(count) / static_cast<double>(n_lines);
}

// Reads one byte of every 64-byte line of the rows [r0, r1) of a row-major X, in address order. The copies
// below read a row's features in slot order, scattered over its lines: on wide rows each first touch of a
// line then waits for memory, while a read in address order is streamed by the hardware at full
// bandwidth, so copying after it is much faster (docs/cascades.md: full evaluation of F-MNIST, 584 of 784
// features used, took about 0.63x the CPU time).
template <typename T>
inline void stream_rows(const MatrixView<T>& X, std::size_t r0, std::size_t r1) {
  unsigned char acc = 0;
  for (std::size_t r = r0; r < r1; ++r) {
    const char* row = reinterpret_cast<const char*>(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride);
    for (std::size_t b = 0; b < X.n_cols * sizeof(T); b += 64) acc ^= static_cast<unsigned char>(row[b]);
  }
  asm volatile("" : : "r"(acc));  // keeps the loads, which have no other use
}

// Whether one of Xt[u * 16 + j], u in [u_begin, u_end), all 16 lanes, is NaN: a separate pass over the
// contiguous columns (vectorised), so the copies below are plain loads and stores. Lanes that hold no row
// may hold a NaN left over: the answer is then true for nothing, which only picks the NaN-aware kernel.
template <typename T>
inline bool any_nan(const T* Xt, std::size_t u_begin, std::size_t u_end) {
  unsigned nan = 0;
  for (std::size_t i = u_begin * kLanes; i < u_end * kLanes; ++i) nan |= static_cast<unsigned>(Xt[i] != Xt[i]);
  return nan != 0;
}

// Copies rows r0 .. r0 + n_lanes of the used features into Xt[slot * 16 + lane]; true if one is NaN, or
// without `scan` always true (no pass over the copies; the kernels' NaN-aware compares are right for any
// value). Lanes >= n_lanes keep whatever they held (their results are never read).
template <typename T>
inline bool gather_group(const MatrixView<T>& X, std::size_t r0, std::size_t n_lanes, const ForestArrays& f, T* Xt,
                         bool scan) {
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
  return !scan || any_nan(Xt, 0, f.n_slots);
}

// Copies the slots [u_begin, u_end) of the rows rows[j] of the lanes j in `lanes` into Xt[slot * 16 + j];
// true if one is NaN (or a leftover NaN in another lane, see any_nan), or without `scan` always true (as
// gather_group). Other lanes keep what they held.
template <typename T>
inline bool gather_lanes(const MatrixView<T>& X, const std::size_t* rows, std::uint32_t lanes, std::size_t u_begin,
                         std::size_t u_end, const ForestArrays& f, T* Xt, bool scan) {
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
  return !scan || any_nan(Xt, u_begin, u_end);
}

}  // namespace rebelboost::predict
