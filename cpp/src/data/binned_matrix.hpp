// The quantized training matrix: one contiguous uint8 column of bin codes per feature.
//
//   codes: [ feature 0: n_samples bytes ][ feature 1: n_samples bytes ] ... [ feature F-1 ]
//
// Code b < missing_bin means the value lies in value bin b; missing_bin (n_bins - 1) means NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/default_init_allocator.hpp"

namespace rebelboost::data {

struct BinnedMatrix {
  std::size_t n_samples = 0;
  std::size_t n_features = 0;
  // Not zeroed on resize: BinMapper::transform writes every code, in parallel.
  std::vector<std::uint8_t, util::DefaultInitAllocator<std::uint8_t>> codes;

  const std::uint8_t* column(std::size_t feature) const { return codes.data() + feature * n_samples; }
  std::uint8_t* column(std::size_t feature) { return codes.data() + feature * n_samples; }
};

}  // namespace rebelboost::data
