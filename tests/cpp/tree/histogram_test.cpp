// Tests that the interleaved fixed-point histogram kernels equal a naive one-copy loop.
#include "tree/histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace rebelboost::tree {
namespace {

struct Input {
  std::vector<std::uint8_t> column;  // codes for all samples
  std::vector<std::uint32_t> rows;   // a sorted subset of sample indices
  std::vector<std::int64_t> values;  // one per selected row
};

std::vector<std::int64_t> random_values(std::size_t n, std::mt19937_64& rng) {
  // Signed values spanning the fixed-point range (sum of |v| stays below 2^62: no overflow).
  std::uniform_int_distribution<std::int64_t> dist(-(std::int64_t{1} << 52), std::int64_t{1} << 52);
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<std::uint8_t> random_codes(std::size_t n, int n_codes, std::mt19937_64& rng, bool runs) {
  std::vector<std::uint8_t> c(n);
  std::uniform_int_distribution<int> code(0, n_codes - 1);
  for (std::size_t i = 0; i < n; ++i)
    c[i] = static_cast<std::uint8_t>((runs && i > 0 && rng() % 4 != 0) ? c[i - 1] : code(rng));
  return c;
}

std::vector<std::int64_t> naive(const std::uint8_t* codes, const std::int64_t* values, std::size_t n,
                                const std::vector<std::int64_t>& start) {
  std::vector<std::int64_t> h = start;
  for (std::size_t i = 0; i < n; ++i) h[codes[i]] += values[i];
  return h;
}

std::vector<std::size_t> lengths() {
  std::vector<std::size_t> n(14);
  std::iota(n.begin(), n.end(), 0);  // 0..13: every remainder of the 4-way unrolling, several times
  for (std::size_t big : {63, 64, 65, 1000, 4099, 100003}) n.push_back(big);
  return n;
}

TEST(Histogram, AccumulateEqualsNaiveLoop) {
  std::mt19937_64 rng(1);
  for (std::size_t n : lengths()) {
    for (int n_codes : {1, 2, 7, 256}) {
      for (bool runs : {false, true}) {
        const auto codes = random_codes(n, n_codes, rng, runs);
        const auto values = random_values(n, rng);
        // Start from a partial sum: the kernel must add to, not overwrite, the caller's histogram.
        std::vector<std::int64_t> start = random_values(kHistBins, rng);
        std::vector<std::int64_t> hist = start;
        accumulate(codes.data(), values.data(), n, hist.data());
        ASSERT_EQ(hist, naive(codes.data(), values.data(), n, start))
            << "n " << n << " n_codes " << n_codes << " runs " << runs;
      }
    }
  }
}

TEST(Histogram, AccumulateGatherEqualsNaiveLoop) {
  std::mt19937_64 rng(2);
  for (std::size_t n : lengths()) {
    for (int n_codes : {1, 3, 256}) {
      const std::size_t n_all = n * 2 + 5;
      const auto column = random_codes(n_all, n_codes, rng, true);
      std::vector<std::uint32_t> all(n_all);
      std::iota(all.begin(), all.end(), 0u);
      std::shuffle(all.begin(), all.end(), rng);
      std::vector<std::uint32_t> rows(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
      std::sort(rows.begin(), rows.end());
      const auto values = random_values(n, rng);
      std::vector<std::uint8_t> gathered(n);
      for (std::size_t i = 0; i < n; ++i) gathered[i] = column[rows[i]];

      std::vector<std::int64_t> start = random_values(kHistBins, rng);
      std::vector<std::int64_t> hist = start;
      accumulate_gather(column.data(), rows.data(), values.data(), n, hist.data());
      ASSERT_EQ(hist, naive(gathered.data(), values.data(), n, start)) << "n " << n << " n_codes " << n_codes;

      // Same histogram as the contiguous kernel on the gathered codes.
      std::vector<std::int64_t> direct(kHistBins, 0);
      std::vector<std::int64_t> via_gather(kHistBins, 0);
      accumulate(gathered.data(), values.data(), n, direct.data());
      accumulate_gather(column.data(), rows.data(), values.data(), n, via_gather.data());
      ASSERT_EQ(direct, via_gather);
    }
  }
}

TEST(Histogram, SplittingTheInputAndAddingGivesTheWhole) {
  // Order independence: two partial accumulations into one histogram equal one pass over everything.
  std::mt19937_64 rng(3);
  const std::size_t n = 5001;
  const auto codes = random_codes(n, 256, rng, false);
  const auto values = random_values(n, rng);
  std::vector<std::int64_t> whole(kHistBins, 0), parts(kHistBins, 0);
  accumulate(codes.data(), values.data(), n, whole.data());
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{2501}, n}) {
    std::fill(parts.begin(), parts.end(), 0);
    accumulate(codes.data(), values.data(), cut, parts.data());
    accumulate(codes.data() + cut, values.data() + cut, n - cut, parts.data());
    ASSERT_EQ(parts, whole) << "cut " << cut;
  }
}

TEST(FixedPoint, RoundsToNearestWithHalvesAwayFromZero) {
  EXPECT_EQ(to_fixed_point(0.0), 0);
  EXPECT_EQ(to_fixed_point(2.5), 3);
  EXPECT_EQ(to_fixed_point(-2.5), -3);
  EXPECT_EQ(to_fixed_point(2.4999), 2);
  EXPECT_EQ(to_fixed_point(-2.4999), -2);
  EXPECT_EQ(to_fixed_point(kFixedPointScale), std::int64_t{1} << 52);
  EXPECT_EQ(to_fixed_point(-kFixedPointScale), -(std::int64_t{1} << 52));
  // Agrees with std::llround over the whole range a normalised weight can take.
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int i = 0; i < 200000; ++i) {
    const double scaled = unit(rng) * std::ldexp(1.0, static_cast<int>(rng() % 53));
    ASSERT_EQ(to_fixed_point(scaled), std::llround(scaled)) << scaled;
  }
}

}  // namespace
}  // namespace rebelboost::tree
