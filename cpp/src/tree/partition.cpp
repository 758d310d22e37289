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

// Rule::left without a branch (the side is random).
inline bool goes_left(const RowPartition::Rule& rule, std::uint8_t code) {
  return ((code <= rule.bin) & (code != rule.missing)) | ((code == rule.missing) & rule.nan_left);
}

// How many rows of [begin, end) of `order` (kIdentity: row i is i) `rule` sends left.
template <bool kIdentity>
std::size_t count_left(const RowPartition::Rule& rule, const std::uint32_t* order, std::size_t begin, std::size_t end) {
  std::size_t n_left = 0;
  for (std::size_t i = begin; i < end; ++i) n_left += goes_left(rule, rule.column[kIdentity ? i : order[i]]);
  return n_left;
}

// The rows of [begin, end) of `order` straight to their places: those `rule` sends left to to_left, to_left + 1,
// ..., the others to to_right, ...: each side keeps the rows' order. Branch-free: the destination is selected.
template <bool kIdentity>
void scatter_block(const RowPartition::Rule& rule, const std::uint32_t* order, std::size_t begin, std::size_t end,
                   std::uint32_t* to_left, std::uint32_t* to_right) {
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint32_t row = kIdentity ? static_cast<std::uint32_t>(i) : order[i];
    const bool left = goes_left(rule, rule.column[row]);
    *(left ? to_left : to_right) = row;
    to_left += left;
    to_right += !left;
  }
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
  // Each block counts its left rows, then writes its rows to the new order (scratch_) at offsets fixed by the
  // blocks' counts: the order of a serial stable partition, whatever the thread count.
  if (identity_ && rows != n_) materialise();  // rows outside the ranges keep their places
  const bool from_identity = identity_;
  std::vector<std::size_t> left(blocks.size());
  util::parallel_for(static_cast<std::ptrdiff_t>(blocks.size()), threads, [&](std::ptrdiff_t k) {
    const Block& b = blocks[static_cast<std::size_t>(k)];
    const Rule& rule = splits[b.range].rule;
    left[static_cast<std::size_t>(k)] = from_identity ? count_left<true>(rule, nullptr, b.begin, b.end)
                                                      : count_left<false>(rule, order_.data(), b.begin, b.end);
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
  if (!from_identity) keep_outside(splits);
  util::parallel_for(static_cast<std::ptrdiff_t>(blocks.size()), threads, [&](std::ptrdiff_t k) {
    const auto j = static_cast<std::size_t>(k);
    const Block& b = blocks[j];
    const std::size_t n_left = left[j], n_right = b.end - b.begin - n_left;
    std::uint32_t* to_left = scratch_.data() + left_at[j];
    std::uint32_t* to_right = scratch_.data() + right_at[j];
    const Split& s = splits[b.range];
    if (from_identity) scatter_block<true>(s.rule, nullptr, b.begin, b.end, to_left, to_right);
    else scatter_block<false>(s.rule, order_.data(), b.begin, b.end, to_left, to_right);
    const bool left_smaller = left_is_smaller(mids[b.range] - s.range.begin, s.range.end - mids[b.range]);
    if (carry && (s.carry == Sides::kBoth || (s.carry == Sides::kSmaller && left_smaller)))
      carry_values(*carry, scratch_.data(), left_at[j], n_left);
    if (carry && (s.carry == Sides::kBoth || (s.carry == Sides::kSmaller && !left_smaller)))
      carry_values(*carry, scratch_.data(), right_at[j], n_right);
    if (out == nullptr) return;
    for (std::size_t i = 0; i < n_left; ++i) out[to_left[i]] = s.left_value;
    for (std::size_t i = 0; i < n_right; ++i) out[to_right[i]] = s.right_value;
  });
  order_.swap(scratch_);  // the new order
  identity_ = false;
  return mids;
}

// The rows outside every split's range stay where they are: copied into the new order (scratch_).
void RowPartition::keep_outside(const std::vector<Split>& splits) {
  std::vector<Range> ranges;
  for (const Split& s : splits) ranges.push_back(s.range);
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
  std::size_t at = 0;  // the end of the last range
  for (const Range& r : ranges) {
    std::copy(order_.begin() + static_cast<std::ptrdiff_t>(at), order_.begin() + static_cast<std::ptrdiff_t>(r.begin),
              scratch_.begin() + static_cast<std::ptrdiff_t>(at));
    at = std::max(at, r.end);
  }
  std::copy(order_.begin() + static_cast<std::ptrdiff_t>(at), order_.end(), scratch_.begin() + static_cast<std::ptrdiff_t>(at));
}

void RowPartition::carry_values(const Carry& carry, const std::uint32_t* order, std::size_t begin, std::size_t n) {
  const std::uint32_t* rows = order + begin;
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
