// The rows of every leaf of a growing tree, each leaf one contiguous range of one array.
//
//   order: [ leaf 0 rows | leaf 1 rows | ... ]   ascending row indices inside each range
//
// Before the first split the order is the identity and is not materialised. Splitting a leaf is a
// stable partition of its range (left rows, then right rows), so ranges stay ascending: gathers from the
// column-major codes then walk each column forward. All leaves of a layer are split (or labelled, or
// gathered) together: one parallel region per step for the whole layer, not one per leaf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rebelboost::tree {

class RowPartition {
 public:
  // A split rule on one feature's codes: code <= bin goes left, the missing code goes to the NaN side.
  struct Rule {
    const std::uint8_t* column;
    std::uint8_t bin;
    std::uint8_t missing;
    bool nan_left;
    bool left(std::uint32_t row) const { return column[row] == missing ? nan_left : column[row] <= bin; }
  };
  struct Range {
    std::size_t begin;
    std::size_t end;
  };
  // Which sides of a split carry values (Carry): the smaller one (left when it holds no more rows than the
  // right: left_is_smaller) or both.
  enum class Sides : std::uint8_t { kNone, kSmaller, kBoth };
  static bool left_is_smaller(std::size_t n_left, std::size_t n_right) { return n_left <= n_right; }

  // One leaf's split: its range, its rule, the output values of its two sides, and the sides that carry values.
  struct Split {
    Range range;
    Rule rule;
    std::int8_t left_value;
    std::int8_t right_value;
    Sides carry = Sides::kNone;
  };

  // Values that split() moves with the rows: to[k][i] = from[k][row(i)] at each carried row's new place i (the
  // next layer's histograms read a leaf's values in its rows' order: no separate gather pass).
  struct Carry {
    const std::int64_t* from[2] = {};  // by row; null: not carried
    std::int64_t* to[2] = {};          // by place in the order
  };

  // Starts over with every row 0..n_samples-1 in one range, in order (not materialised).
  void reset(std::size_t n_samples);

  bool identity() const { return identity_; }
  std::uint32_t row(std::size_t i) const { return identity_ ? static_cast<std::uint32_t>(i) : order_[i]; }
  // Rows [begin, end) of the order (materialised on first use when still the identity).
  const std::uint32_t* rows(std::size_t begin);

  // Stable partition of each split's range (ranges disjoint): the rows its rule sends left first. Writes
  // out[row] = left_value or right_value for every row of the ranges (out null: no outputs), and the carried
  // values of each split's `carry` sides (carry null: none). Returns, per split, the end of its left block.
  // Blocks of rows run in parallel (each sorted into its stretch of scratch, then moved to offsets fixed by
  // the blocks' counts), so the order never depends on n_threads.
  std::vector<std::size_t> split(const std::vector<Split>& splits, std::int8_t* out, int n_threads,
                                 const Carry* carry = nullptr);

  // Only the outputs of each split (the last layer): out[row] = left_value or right_value. Returns, per
  // split, how many of its rows go left.
  std::vector<std::size_t> label(const std::vector<Split>& splits, std::int8_t* out, int n_threads) const;

  // values[i] = q[row(i)] for i in each range: leaves' values in their row order, for gathers.
  void gather_values(const std::vector<Range>& ranges, const std::int64_t* q, std::int64_t* values, int n_threads) const;

 private:
  // A block of one range: the unit of parallel work.
  struct Block {
    std::size_t range;  // index into the caller's list
    std::size_t begin;
    std::size_t end;
  };
  static constexpr std::size_t kBlock = 1 << 15;  // rows per parallel block
  template <typename GetRange>
  static std::vector<Block> blocks_of(std::size_t n_ranges, GetRange&& get);
  void materialise();
  static void place_blocks(const std::vector<Split>& splits, const std::vector<Block>& blocks,
                           const std::vector<std::size_t>& left, std::vector<std::size_t>& mids,
                           std::vector<std::size_t>& left_at, std::vector<std::size_t>& right_at);
  void move_block(const std::vector<Split>& splits, const Block& b, const std::vector<std::size_t>& mids, std::size_t n_left,
                  std::size_t left_at, std::size_t right_at, std::int8_t* out, const Carry* carry);
  // to[k][i] = from[k][order_[i]] for i in [begin, begin + n): a block's carried rows after its move.
  void carry_values(const Carry& carry, std::size_t begin, std::size_t n) const;

  std::size_t n_ = 0;
  bool identity_ = true;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint32_t> scratch_;
};

}  // namespace rebelboost::tree
