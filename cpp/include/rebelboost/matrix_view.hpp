// Non-owning strided view of a dense 2-D array (C- or F-ordered, float or double), so no copy is needed.
#pragma once

#include <cstddef>

namespace rebelboost {

// Element (r, c) lives at data[r * row_stride + c * col_stride]; strides are in elements, not bytes.
template <typename T>
struct MatrixView {
  const T* data = nullptr;
  std::size_t n_rows = 0;
  std::size_t n_cols = 0;
  std::ptrdiff_t row_stride = 0;
  std::ptrdiff_t col_stride = 1;

  T operator()(std::size_t r, std::size_t c) const {
    return data[static_cast<std::ptrdiff_t>(r) * row_stride + static_cast<std::ptrdiff_t>(c) * col_stride];
  }

  static MatrixView row_major(const T* data, std::size_t n_rows, std::size_t n_cols) {
    return {data, n_rows, n_cols, static_cast<std::ptrdiff_t>(n_cols), 1};
  }
  static MatrixView col_major(const T* data, std::size_t n_rows, std::size_t n_cols) {
    return {data, n_rows, n_cols, 1, static_cast<std::ptrdiff_t>(n_rows)};
  }
};

}  // namespace rebelboost
