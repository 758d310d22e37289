// Exact, order-independent sums of doubles (exact_sum.hpp).
#include "util/exact_sum.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace rebelboost::util {

namespace {

constexpr std::int64_t kBase = std::int64_t{1} << 32;

// Carries digits 0..n-2 into [0, 2^32) (floor division, so negative digits borrow); the top keeps the sign.
void carry_digits(std::int64_t* d, std::size_t n) {
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const std::int64_t c = d[i] >> 32;  // arithmetic shift: floor(d / 2^32)
    d[i] -= c * kBase;
    d[i + 1] += c;
  }
}

}  // namespace

void ExactSum::carry() {
  carry_digits(digit_.data(), kDigits);
  pending_ = 1;  // carried digits are below 2^32 + 2^32: as if one add were pending
}

void ExactSum::merge(const ExactSum& other) {
  carry();
  const std::array<std::int64_t, kDigits> o = other.digits();
  for (std::size_t i = 0; i < kDigits; ++i) digit_[i] += o[i];
  pending_ = 2;
}

std::array<std::int64_t, ExactSum::kDigits> ExactSum::digits() const {
  std::array<std::int64_t, kDigits> d = digit_;
  carry_digits(d.data(), kDigits);
  return d;
}

ExactSum ExactSum::from_digits(const std::int64_t* digits) {
  ExactSum s;
  std::memcpy(s.digit_.data(), digits, sizeof(std::int64_t) * kDigits);
  s.carry();
  return s;
}

double ExactSum::value() const {
  std::array<std::int64_t, kDigits> d = digits();
  const bool negative = d[kDigits - 1] < 0;
  if (negative) {  // the magnitude: negate every digit and carry again
    for (std::int64_t& v : d) v = -v;
    carry_digits(d.data(), kDigits);
  }
  std::size_t h = kDigits;
  while (h > 0 && d[h - 1] == 0) --h;
  if (h == 0) return 0.0;
  --h;  // the top non-zero digit
  if (h == kDigits - 1 && d[h] >= kBase) return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();  // beyond 2^1038
  // The top three digits a2 a1 a0 (a2 != 0) are v = x 2^32 + a0 with x = a2 2^32 + a1; the value is
  // v 2^(32 (h - 2) - 1074) plus the digits below (a sticky bit). Round v to 53 bits.
  const auto a2 = static_cast<std::uint64_t>(d[h]);
  const auto a1 = h >= 1 ? static_cast<std::uint64_t>(d[h - 1]) : 0, a0 = h >= 2 ? static_cast<std::uint64_t>(d[h - 2]) : 0;
  bool sticky = false;
  for (std::size_t i = 0; i + 2 < h; ++i) sticky = sticky || d[i] != 0;
  int a2_bits = 0;
  for (std::uint64_t t = a2; t != 0; t >>= 1) ++a2_bits;
  const int shift = 64 + a2_bits - 53;  // 12..43
  const std::uint64_t x = (a2 << 32) | a1;
  std::uint64_t q, rest;
  if (shift >= 32) {
    const int s = shift - 32;
    q = x >> s;
    rest = ((x & ((std::uint64_t{1} << s) - 1)) << 32) | a0;
  } else {
    q = (x << (32 - shift)) | (a0 >> shift);
    rest = a0 & ((std::uint64_t{1} << shift) - 1);
  }
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (sticky || (q & 1)))) ++q;  // to nearest, ties to even
  const double magnitude = std::ldexp(static_cast<double>(q), shift + 32 * (static_cast<int>(h) - 2) - 1074);
  return negative ? -magnitude : magnitude;
}

}  // namespace rebelboost::util
