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

std::size_t RowPartition::split_serial(const Split& s, std::int8_t* out) {
  // Left rows compact in place (the write never passes the read), right rows wait in scratch; branch-free,
  // as the side is random.
  const std::size_t begin = s.range.begin;
  std::size_t n_left = 0, n_right = 0;
  for (std::size_t i = begin; i < s.range.end; ++i) {
    const std::uint32_t r = row(i);
    const bool left = s.rule.left(r);
    order_[begin + n_left] = r;  // a right row here is overwritten later
    scratch_[n_right] = r;
    n_left += left;
    n_right += !left;
    out[r] = left ? s.left_value : s.right_value;
  }
  std::copy(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(n_right),
            order_.begin() + static_cast<std::ptrdiff_t>(begin + n_left));
  return begin + n_left;
}

std::vector<std::size_t> RowPartition::split(const std::vector<Split>& splits, std::int8_t* out, int n_threads) {
  // An empty range (a leaf split for rows that all sit on other participants of a distributed fit) has
  // no block: its mid is its begin.
  std::vector<std::size_t> mids(splits.size());
  for (std::size_t k = 0; k < splits.size(); ++k) mids[k] = splits[k].range.begin;
  std::size_t rows = 0;
  for (const Split& s : splits) rows += s.range.end - s.range.begin;
  const std::vector<Block> blocks = blocks_of(splits.size(), [&](std::size_t r) { return splits[r].range; });
  const int threads = blocks.size() > 1 ? util::threads_for(4 * rows, n_threads) : 1;
  if (threads == 1) {
    if (identity_ && !splits.empty()) materialise();
    for (std::size_t k = 0; k < splits.size(); ++k) mids[k] = split_serial(splits[k], out);
    return mids;
  }
  // Count per block, then each block scatters to offsets fixed by the counts: the order of the serial
  // loop. Reading order_ while writing it would race, so the scatter goes to scratch_ (unless the order is
  // still the identity, which is never read).
  std::vector<std::size_t> left(blocks.size());
  util::parallel_for(static_cast<std::ptrdiff_t>(blocks.size()), threads, [&](std::ptrdiff_t k) {
    const Block& b = blocks[static_cast<std::size_t>(k)];
    const Rule& rule = splits[b.range].rule;
    std::size_t count = 0;
    for (std::size_t i = b.begin; i < b.end; ++i) count += rule.left(row(i));
    left[static_cast<std::size_t>(k)] = count;
  });
  std::vector<std::size_t> left_at(blocks.size()), right_at(blocks.size());
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
  const bool from_identity = identity_;
  std::uint32_t* dst = from_identity ? order_.data() : scratch_.data();
  util::parallel_for(static_cast<std::ptrdiff_t>(blocks.size()), threads, [&](std::ptrdiff_t k) {
    const Block& b = blocks[static_cast<std::size_t>(k)];
    const Split& s = splits[b.range];
    std::size_t l = left_at[static_cast<std::size_t>(k)], r = right_at[static_cast<std::size_t>(k)];
    for (std::size_t i = b.begin; i < b.end; ++i) {
      const std::uint32_t row_i = from_identity ? static_cast<std::uint32_t>(i) : order_[i];
      const bool goes_left = s.rule.left(row_i);
      dst[goes_left ? l : r] = row_i;
      l += goes_left;
      r += !goes_left;
      out[row_i] = goes_left ? s.left_value : s.right_value;
    }
  });
  if (!from_identity)
    util::parallel_for(static_cast<std::ptrdiff_t>(blocks.size()), threads, [&](std::ptrdiff_t k) {
      const Block& b = blocks[static_cast<std::size_t>(k)];
      std::memcpy(order_.data() + b.begin, scratch_.data() + b.begin, (b.end - b.begin) * sizeof(std::uint32_t));
    });
  identity_ = false;
  return mids;
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
  util::parallel_for(static_cast<std::ptrdiff_t>(blocks.size()), util::threads_for(2 * rows, n_threads), [&](std::ptrdiff_t k) {
    const Block& b = blocks[static_cast<std::size_t>(k)];
    for (std::size_t i = b.begin; i < b.end; ++i) values[i] = q[row(i)];
  });
}

}  // namespace rebelboost::tree
