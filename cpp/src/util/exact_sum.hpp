// Exact sums of doubles: the value of a sum does not depend on the order of its terms, on how they are
// split between threads, or between machines (docs/distributed.md).
//
// A double is m 2^(p - 1074) with an integer mantissa m < 2^53 and p in [0, 2046). ExactSum keeps the sum
// as a fixed-point integer of 67 digits of 32 bits (bit 0 is 2^-1074, the smallest subnormal), each digit
// in an int64 so that adds need no carry for 2^30 terms. Adding is a shift and three integer adds; merging
// two sums adds digits. value() rounds the exact integer to the nearest double (ties to even) once, so
// the result is the correctly rounded sum, whatever the order. Distributed training reduces the digits
// (integers) across workers, which is why every floating-point total of the training loop is one of these.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rebelboost::util {

class ExactSum {
 public:
  static constexpr std::size_t kDigits = 67;  // 64 x 32 bits cover p in [0, 2048), plus 3 for a carry-out

  inline void add(double x);  // x finite (inf and NaN are the caller's to refuse)
  void merge(const ExactSum& other);
  // The sum rounded to the nearest double (ties to even); +-inf if it exceeds the largest double.
  double value() const;

  // The digits, carried so that digits 0..kDigits-2 lie in [0, 2^32): sums of up to 2^31 of these,
  // digit by digit, are exact (Reducer::sum), and from_digits of their sum is the sum of the sums.
  std::array<std::int64_t, kDigits> digits() const;
  static ExactSum from_digits(const std::int64_t* digits);

 private:
  void carry();
  std::array<std::int64_t, kDigits> digit_{};
  std::uint32_t pending_ = 0;  // adds since the last carry
  static constexpr std::uint32_t kCarryEvery = 1u << 30;  // adds of < 2^32 before a digit could overflow
};

// Inline: it runs once per row and class in the losses' passes.
void ExactSum::add(double x) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  const auto e = static_cast<unsigned>((bits >> 52) & 0x7FF);
  std::uint64_t m = bits & ((std::uint64_t{1} << 52) - 1);
  unsigned p = 0;  // x = m 2^(p - 1074)
  if (e == 0) {
    if (m == 0) return;
  } else {
    m |= std::uint64_t{1} << 52;
    p = e - 1;
  }
  // m 2^(p & 31) spans three digits: each gets less than 2^32 (so 2^30 adds fit in an int64).
  const unsigned c = p >> 5, s = p & 31;
  const std::uint64_t low = (m & 0xFFFFFFFFu) << s;                  // < 2^63
  const std::uint64_t middle = (low >> 32) + ((m >> 32) << s);        // < 2^53
  const std::int64_t sign = (bits >> 63) ? -1 : 1;
  digit_[c] += sign * static_cast<std::int64_t>(low & 0xFFFFFFFFu);
  digit_[c + 1] += sign * static_cast<std::int64_t>(middle & 0xFFFFFFFFu);
  digit_[c + 2] += sign * static_cast<std::int64_t>(middle >> 32);
  if (++pending_ == kCarryEvery) carry();
}

}  // namespace rebelboost::util
