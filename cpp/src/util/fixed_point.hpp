// Fixed-point weights: a weight normalised so that the total is 1 becomes round(w * 2^52) in an int64.
//
// Integer sums are exact and order-independent, so histograms, split values and their differences are
// the same for any thread count and any order of accumulation (docs/design/determinism.md). Losses
// produce these values; the tree stage consumes them.
#pragma once

#include <cmath>
#include <cstdint>

namespace rebelboost::util {

// Fixed-point scale: values are round(v * 2^52) for v normalised so that sum |v| <= 1.
inline constexpr double kFixedPointScale = 4503599627370496.0;  // 2^52

// Rounds an already scaled value to the nearest integer, halves away from zero; inline and vectorisable
// (std::llround is a libm call, which cost more than the histogram itself on wide, short data).
// copysign keeps it branch-free (a branch on the sign of a weight mispredicts half the time); -0.0 and
// +0.0 both give 0.
inline std::int64_t to_fixed_point(double scaled) { return static_cast<std::int64_t>(scaled + std::copysign(0.5, scaled)); }

}  // namespace rebelboost::util
