// The seeded draws of the subsampling heuristics (StochasticBoost rows, LazyBoost features), shared by the
// tree families: portable streams, so the same seed gives the same model on every platform.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

namespace rebelboost::learner {

// splitmix64: a portable, seedable stream (std:: distributions differ between standard libraries).
inline std::uint64_t mix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline double unit(std::uint64_t z) { return static_cast<double>(mix(z) >> 11) * (1.0 / 9007199254740992.0); }

// The stream of iteration `iteration` of a fit seeded with `seed`.
inline std::uint64_t iteration_stream(std::int64_t seed, int iteration) {
  return mix(static_cast<std::uint64_t>(seed)) ^ mix(static_cast<std::uint64_t>(iteration) + 0x51ED);
}

// Whether row `row` (its index in the user's X, or the global index of a distributed fit) is searched.
inline bool row_drawn(std::uint64_t stream, std::uint64_t row, double fraction) {
  return unit(stream ^ mix(row + 1)) < fraction;
}

// Exactly round(fraction * d) features (at least 1) marked 1 in active[0..d): a seeded partial Fisher-Yates
// shuffle of pool (d entries, scratch).
inline void draw_features(std::uint64_t stream, double fraction, std::size_t d, std::vector<std::size_t>& pool,
                          std::vector<std::uint8_t>& active) {
  const std::size_t k = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(fraction * static_cast<double>(d))));
  pool.resize(d);
  std::iota(pool.begin(), pool.end(), std::size_t{0});
  active.assign(d, 0);
  for (std::size_t j = 0; j < k; ++j) {
    const std::size_t pick = j + static_cast<std::size_t>(unit(stream + 0xFEA7 + j) * static_cast<double>(d - j));
    std::swap(pool[j], pool[std::min(pick, d - 1)]);
    active[pool[j]] = 1;
  }
}

}  // namespace rebelboost::learner
