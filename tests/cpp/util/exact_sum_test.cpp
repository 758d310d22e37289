// Tests of the exact sum: identities that naive summation breaks, the correctly rounded result against an
// independent __int128 reference, and independence of order, splitting and digit round trips.
#include "util/exact_sum.hpp"
#include "util/reduce.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace rebelboost::util {
namespace {

__extension__ typedef __int128 Int128;  // the test's independent reference (GCC, Clang)

double exact(const std::vector<double>& v) {
  ExactSum s;
  for (double x : v) s.add(x);
  return s.value();
}

TEST(ExactSum, CancellationAndRounding) {
  EXPECT_EQ(exact({1e100, 1.0, -1e100}), 1.0);  // naive left-to-right: 0
  EXPECT_EQ(exact({}), 0.0);
  EXPECT_EQ(exact({0.5, -0.5}), 0.0);
  const double tiny = std::ldexp(1.0, -53);
  EXPECT_EQ(exact({1.0, tiny}), 1.0);  // a tie goes to the even neighbour
  EXPECT_EQ(exact({1.0, tiny, std::numeric_limits<double>::denorm_min()}), std::nextafter(1.0, 2.0));
  EXPECT_EQ(exact({std::nextafter(1.0, 2.0), tiny}), std::nextafter(std::nextafter(1.0, 2.0), 2.0));  // tie, to even
  EXPECT_EQ(exact({-1.0, -tiny, -std::numeric_limits<double>::denorm_min()}), -std::nextafter(1.0, 2.0));
  const double dmin = std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(exact({dmin, dmin, dmin}), 3 * dmin);
  EXPECT_EQ(exact({std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                   -std::numeric_limits<double>::max()}),
            std::numeric_limits<double>::max());
  EXPECT_TRUE(std::isinf(exact({std::numeric_limits<double>::max(), std::numeric_limits<double>::max()})));
  std::vector<double> tenths(10, 0.1);
  EXPECT_EQ(exact(tenths), 1.0);
}

// Independent reference: terms m 2^k with k in [-60, 0] are integers N 2^-60 with N < 2^123 for 1 000
// terms; __int128 holds N exactly and its conversion to double rounds to nearest, ties to even.
TEST(ExactSum, MatchesAnInt128Reference) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 1000);
    std::vector<double> v;
    Int128 N = 0;
    for (int i = 0; i < n; ++i) {
      const auto magnitude = static_cast<std::int64_t>(rng() >> 11);  // one draw per statement: the same data
      const auto m = magnitude * ((rng() & 1) ? 1 : -1);               // for every compiler
      const int k = -static_cast<int>(rng() % 61);
      v.push_back(std::ldexp(static_cast<double>(m), k));
      N += static_cast<Int128>(m) * (static_cast<Int128>(1) << (60 + k));  // no shift of a negative value
    }
    EXPECT_EQ(exact(v), std::ldexp(static_cast<double>(N), -60)) << trial;
  }
}

TEST(ExactSum, OrderSplitsAndDigitsDoNotMatter) {
  std::mt19937_64 rng(11);
  std::vector<double> v(5000);
  for (double& x : v) x = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), static_cast<int>(rng() % 400) - 200);
  const double whole = exact(v);
  for (int trial = 0; trial < 20; ++trial) {
    std::shuffle(v.begin(), v.end(), rng);
    const std::size_t cut = rng() % v.size();
    ExactSum a, b;
    for (std::size_t i = 0; i < cut; ++i) a.add(v[i]);
    for (std::size_t i = cut; i < v.size(); ++i) b.add(v[i]);
    // Digits summed elementwise (what a reduction across workers does) give the sum of the sums.
    const auto da = a.digits(), db = b.digits();
    std::int64_t sum[ExactSum::kDigits];
    for (std::size_t d = 0; d < ExactSum::kDigits; ++d) sum[d] = da[d] + db[d];
    EXPECT_EQ(ExactSum::from_digits(sum).value(), whole);
    a.merge(b);
    EXPECT_EQ(a.value(), whole);
  }
}

TEST(ExactSum, MillionsOfFullMantissasStayExact) {
  ExactSum s;
  const double big = std::ldexp(1.0, 60) - 1024.0;  // a full 53-bit mantissa: three digits per add
  const long n = (1L << 31) / 1000;
  for (long i = 0; i < n; ++i) s.add(big);
  EXPECT_EQ(s.value(), static_cast<double>(static_cast<Int128>(n) * static_cast<Int128>(big)));
}

// The losses' totals: per-block exact sums merged, the same bits for any thread count and block size.
TEST(BlockSums, SameBitsForAnyThreadCountAndBlock) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{200001}}) {
    std::vector<double> v(n);
    for (double& x : v) x = dist(rng) * std::pow(10.0, static_cast<double>(rng() % 12));
    const auto sum = [&](std::size_t block, int threads) {
      std::vector<ExactSum> s = block_sums(n, 2, block, threads, [&](std::size_t i, ExactSum* t) {
        t[0].add(v[i]);
        t[1].add(std::fabs(v[i]));
      });
      return reduced_values(s, nullptr);
    };
    const std::vector<double> ref = sum(n + 1, 1);
    EXPECT_EQ(ref[0], exact(v));
    for (int threads : {2, 3, 7})
      for (std::size_t block : {std::size_t{1000}, std::size_t{8192}}) EXPECT_EQ(sum(block, threads), ref) << n;
  }
}

}  // namespace
}  // namespace rebelboost::util
