// Stable, parallel partition of the leaves' rows (see partition.hpp).
#include "tree/partition.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "util/parallel.hpp"

namespace rebelboost::tree {

void RowPartition::reset(std::size_t n_samples) {
  n_ = n_samples;
  identity_ = true;
  if (order_.size() != n_samples) {
    order_.resize(n_samples);
    scratch_.resize(n_samples);
  }
}

void RowPartition::materialise() {
  std::iota(order_.begin(), order_.end(), 0u);
  identity_ = false;
}

const std::uint32_t* RowPartition::rows(std::size_t begin) {
  if (identity_) materialise();
  return order_.data() + begin;
}

template <typename GetRange>
std::vector<RowPartition::Block> RowPartition::blocks_of(std::size_t n_ranges, GetRange&& get) {
  std::vector<Block> blocks;
  for (std::size_t r = 0; r < n_ranges; ++r) {
    const Range range = get(r);
    for (std::size_t b = range.begin; b < range.end; b += kBlock) blocks.push_back({r, b, std::min(range.end, b + kBlock)});
  }
  return blocks;
}

namespace {

// Rows [begin, end) of `order` (kIdentity: row i is i) sorted into dst[begin, end): the rows `rule` sends left
// ascending from begin, the others descending from end - 1; returns how many went left. Branch-free (the side
// is random): each row is written to both cursors and only its side's advances, so every slot ends holding
// the row it should, and nothing outside [begin, end) is written.
template <bool kIdentity>
std::size_t sort_block(const RowPartition::Rule& rule, const std::uint32_t* order, std::size_t begin, std::size_t end,
                       std::uint32_t* dst) {
  const std::uint8_t* column = rule.column;
  const std::uint8_t bin = rule.bin, missing = rule.missing;
  const bool nan_left = rule.nan_left;
  std::uint32_t* right = dst + end - 1;
  std::size_t n_left = 0, n_right = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint32_t row = kIdentity ? static_cast<std::uint32_t>(i) : order[i];
    const std::uint8_t code = column[row];
    const bool left = ((code <= bin) & (code != missing)) | ((code == missing) & nan_left);  // Rule::left
    dst[begin + n_left] = row;
    *(right - n_right) = row;
    n_left += left;
    n_right += !left;
  }
  return n_left;
}

}  // namespace

std::vector<std::size_t> RowPartition::split(const std::vector<Split>& splits, std::int8_t* out, int n_threads,
                                            const Carry* carry) {
  // An empty range (a leaf split for rows that all sit on other participants of a distributed fit) has
  // no block: its mid is its begin.
  std::vector<std::size_t> mids(splits.size());
  for (std::size_t k = 0; k < splits.size(); ++k) mids[k] = splits[k].range.begin;
  std::size_t rows = 0;
  for (const Split& s : splits) rows += s.range.end - s.range.begin;
  const std::vector<Block> blocks = blocks_of(splits.size(), [&](std::size_t r) { return splits[r].range; });
  const int threads = blocks.size() > 1 ? util::threads_for(4 * rows, n_threads) : 1;
  // Each block sorts its rows into its own stretch of scratch_, then they move to offsets fixed by the
  // blocks' counts: the order of a serial stable partition, whatever the thread count.
  if (identity_ && rows != n_) materialise();  // rows outside the ranges keep their places
  const bool from_identity = identity_;
  std::vector<std::size_t> left(blocks.size()), left_at(blocks.size()), right_at(blocks.size());
  // One region for the sort, the offsets and the move (util::parallel_phases).
  util::parallel_phases(
      static_cast<std::ptrdiff_t>(blocks.size()), threads,
      [&](std::ptrdiff_t k) {
        const Block& b = blocks[static_cast<std::size_t>(k)];
        const Rule& rule = splits[b.range].rule;
        left[static_cast<std::size_t>(k)] = from_identity ? sort_block<true>(rule, nullptr, b.begin, b.end, scratch_.data())
                                                          : sort_block<false>(rule, order_.data(), b.begin, b.end, scratch_.data());
      },
      [&] { place_blocks(splits, blocks, left, mids, left_at, right_at); },
      [&](std::ptrdiff_t k) { move_block(splits, blocks[static_cast<std::size_t>(k)], mids, left[static_cast<std::size_t>(k)],
                                         left_at[static_cast<std::size_t>(k)], right_at[static_cast<std::size_t>(k)], out, carry); });
  identity_ = false;
  return mids;
}

// Where each block's left and right rows go (blocks of a range in order: the order of a serial stable
// partition), and each range's mid, from the blocks' counts of left rows.
void RowPartition::place_blocks(const std::vector<Split>& splits, const std::vector<Block>& blocks,
                                const std::vector<std::size_t>& left, std::vector<std::size_t>& mids,
                                std::vector<std::size_t>& left_at, std::vector<std::size_t>& right_at) {
  for (std::size_t k = 0, first = 0; k < blocks.size(); ++k) {  // first: the first block of this range
    if (k == 0 || blocks[k].range != blocks[k - 1].range) first = k;
    const Range range = splits[blocks[k].range].range;
    if (k == first) {
      std::size_t n_left = 0;
      for (std::size_t j = k; j < blocks.size() && blocks[j].range == blocks[k].range; ++j) n_left += left[j];
      mids[blocks[k].range] = range.begin + n_left;
      left_at[k] = range.begin;
      right_at[k] = range.begin + n_left;
    } else {
      left_at[k] = left_at[k - 1] + left[k - 1];
      right_at[k] = right_at[k - 1] + (blocks[k - 1].end - blocks[k - 1].begin - left[k - 1]);
    }
  }
}

// Block b's sorted rows (in scratch) to their places in the order, with their carried values and outputs.
void RowPartition::move_block(const std::vector<Split>& splits, const Block& b, const std::vector<std::size_t>& mids,
                              std::size_t n_left, std::size_t left_at, std::size_t right_at, std::int8_t* out,
                              const Carry* carry) {
  const std::size_t n_right = b.end - b.begin - n_left;
  std::uint32_t* to_left = order_.data() + left_at;
  std::uint32_t* to_right = order_.data() + right_at;
  const std::uint32_t* from_right = scratch_.data() + b.end - 1;
  std::memcpy(to_left, scratch_.data() + b.begin, n_left * sizeof(std::uint32_t));
  for (std::size_t i = 0; i < n_right; ++i) to_right[i] = *(from_right - i);
  const Split& s = splits[b.range];
  const bool left_smaller = left_is_smaller(mids[b.range] - s.range.begin, s.range.end - mids[b.range]);
  if (carry && (s.carry == Sides::kBoth || (s.carry == Sides::kSmaller && left_smaller))) carry_values(*carry, left_at, n_left);
  if (carry && (s.carry == Sides::kBoth || (s.carry == Sides::kSmaller && !left_smaller))) carry_values(*carry, right_at, n_right);
  if (out == nullptr) return;
  for (std::size_t i = 0; i < n_left; ++i) out[to_left[i]] = s.left_value;
  for (std::size_t i = 0; i < n_right; ++i) out[to_right[i]] = s.right_value;
}

void RowPartition::carry_values(const Carry& carry, std::size_t begin, std::size_t n) const {
  const std::uint32_t* rows = order_.data() + begin;
  for (int k = 0; k < 2; ++k) {
    if (carry.from[k] == nullptr) continue;
    const std::int64_t* from = carry.from[k];
    std::int64_t* to = carry.to[k] + begin;
    for (std::size_t i = 0; i < n; ++i) to[i] = from[rows[i]];
  }
}

std::vector<std::size_t> RowPartition::label(const std::vector<Split>& splits, std::int8_t* out, int n_threads) const {
  std::size_t rows = 0;
  for (const Split& s : splits) rows += s.range.end - s.range.begin;
  const std::vector<Block> blocks = blocks_of(splits.size(), [&](std::size_t r) { return splits[r].range; });
  std::vector<std::size_t> block_left(blocks.size(), 0);
  util::parallel_for(static_cast<std::ptrdiff_t>(blocks.size()), util::threads_for(2 * rows, n_threads), [&](std::ptrdiff_t k) {
    const Block& b = blocks[static_cast<std::size_t>(k)];
    const Split& s = splits[b.range];
    std::size_t left = 0;
    for (std::size_t i = b.begin; i < b.end; ++i) {
      const std::uint32_t r = row(i);
      const bool goes_left = s.rule.left(r);
      out[r] = goes_left ? s.left_value : s.right_value;
      left += goes_left;
    }
    block_left[static_cast<std::size_t>(k)] = left;
  });
  std::vector<std::size_t> left(splits.size(), 0);
  for (std::size_t k = 0; k < blocks.size(); ++k) left[blocks[k].range] += block_left[k];
  return left;
}

void RowPartition::gather_values(const std::vector<Range>& ranges, const std::int64_t* q, std::int64_t* values,
                                 int n_threads) const {
  std::size_t rows = 0;
  for (const Range& r : ranges) rows += r.end - r.begin;
  const std::vector<Block> blocks = blocks_of(ranges.size(), [&](std::size_t r) { return ranges[r]; });
  // A random read per row (a cache miss, often): many elementary steps.
  util::parallel_for(static_cast<std::ptrdiff_t>(blocks.size()), util::threads_for(16 * rows, n_threads), [&](std::ptrdiff_t k) {
    const Block& b = blocks[static_cast<std::size_t>(k)];
    for (std::size_t i = b.begin; i < b.end; ++i) values[i] = q[row(i)];
  });
}

}  // namespace rebelboost::tree
