// Histogram accumulation: the hot loop of training (docs/design/data_flow.md "The boosting loop").
//
// Values are int64 fixed-point numbers (a weight normalised to total 1 is scaled by 2^52): integer sums
// are exact and order-independent, so any thread count and any subset order give the same histogram.
// One histogram is kHistBins int64 slots indexed by bin code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "util/fixed_point.hpp"

namespace rebelboost::tree {

inline constexpr int kHistBins = 256;

// The fixed-point scale and rounding live with the losses' shared vocabulary.
using util::kFixedPointScale;
using util::to_fixed_point;

// hist[codes[i]] += values[i] for i in [0, n). hist must be zeroed by the caller (or hold a partial sum).
// Uses 4 interleaved copies so consecutive equal codes do not serialise on one store.
void accumulate(const std::uint8_t* codes, const std::int64_t* values, std::size_t n, std::int64_t* hist);

// hist[column[rows[i]]] += values[i] for i in [0, n): the same for a node whose samples are listed in
// `rows` (ascending for locality), with `values` already in that order.
void accumulate_gather(const std::uint8_t* column, const std::uint32_t* rows, const std::int64_t* values,
                       std::size_t n, std::int64_t* hist);

// Multi-class rows [begin, end): h[column[i] * K + k] += v[i * K + k] for every k, alternating between
// two histogram copies h0 (even i) and h1 (odd i) so equal consecutive codes do not chain. Specialised for
// K <= 16 and compiled for AVX2 as well as the baseline (chosen at load time).
void accumulate_vectors(const std::uint8_t* column, const std::int64_t* v, std::size_t begin, std::size_t end,
                        std::size_t K, std::int64_t* h0, std::int64_t* h1);

}  // namespace rebelboost::tree
