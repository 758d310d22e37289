// Histogram accumulation: the hot loop of training (DESIGN "The histogram kernel").
//
// Values are int64 fixed-point numbers (a weight normalised to total 1 is scaled by 2^52): integer sums
// are exact and order-independent, so any thread count and any subset order give the same histogram.
// One histogram is kHistBins int64 slots indexed by bin code.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rebelboost::tree {

inline constexpr int kHistBins = 256;

// Fixed-point scale: values are round(v * 2^52) for v normalised so that sum |v| <= 1.
inline constexpr double kFixedPointScale = 4503599627370496.0;  // 2^52

// Rounds an already scaled value to the nearest integer, halves away from zero; inline and vectorisable
// (std::llround is a libm call, which cost more than the histogram itself on wide, short data).
inline std::int64_t to_fixed_point(double scaled) {
  return static_cast<std::int64_t>(scaled + (scaled >= 0.0 ? 0.5 : -0.5));
}

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
