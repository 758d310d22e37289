// The rows of every leaf of a growing tree, each leaf one contiguous range of one array.
//
//   order: [ leaf 0 rows | leaf 1 rows | ... ]   ascending row indices inside each range
//
// Before the first split the order is the identity and is not materialised. Splitting a leaf is a
// stable partition of its range (left rows, then right rows), so ranges stay ascending: gathers from the
// column-major codes then walk each column forward.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rebelboost::tree {

class RowPartition {
 public:
  // Starts over with every row 0..n_samples-1 in one range, in order (not materialised).
  void reset(std::size_t n_samples);

  bool identity() const { return identity_; }
  std::uint32_t row(std::size_t i) const { return identity_ ? static_cast<std::uint32_t>(i) : order_[i]; }
  // Rows [begin, end) of the order (materialised on first use when still the identity).
  const std::uint32_t* rows(std::size_t begin);

  // A split rule on one feature's codes: code <= bin goes left, the missing code goes to the NaN side.
  struct Rule {
    const std::uint8_t* column;
    std::uint8_t bin;
    std::uint8_t missing;
    bool nan_left;
    bool left(std::uint32_t row) const { return column[row] == missing ? nan_left : column[row] <= bin; }
  };

  // Stable partition of [begin, end): the rows the rule sends left first. Writes out[row] = left_value or
  // right_value for each row on the way. Returns the end of the left block. Row blocks run in parallel
  // (counted, then scattered to offsets fixed by the counts), so the order never depends on n_threads.
  std::size_t split(std::size_t begin, std::size_t end, const Rule& rule, std::int8_t left_value,
                    std::int8_t right_value, std::int8_t* out, int n_threads);

  // Only the outputs: out[row] = left_value or right_value for the rows of [begin, end) (the last layer).
  void label(std::size_t begin, std::size_t end, const Rule& rule, std::int8_t left_value, std::int8_t right_value,
             std::int8_t* out, int n_threads) const;

  // values[i] = q[row(i)] for i in [begin, end): a leaf's values in its row order, for gathers.
  void gather_values(std::size_t begin, std::size_t end, const std::int64_t* q, std::int64_t* values,
                     int n_threads) const;

 private:
  void materialise();
  static constexpr std::size_t kBlock = 1 << 15;  // rows per parallel block

  std::size_t n_ = 0;
  bool identity_ = true;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint32_t> scratch_;
  std::vector<std::size_t> block_left_;  // left rows per block of the range being split
};

}  // namespace rebelboost::tree
