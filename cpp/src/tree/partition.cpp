// Stable, parallel partition of a leaf's rows (see partition.hpp).
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

std::size_t RowPartition::split(std::size_t begin, std::size_t end, const Rule& rule, std::int8_t left_value,
                                std::int8_t right_value, std::int8_t* out, int n_threads) {
  const std::size_t n = end - begin;
  const auto n_blocks = static_cast<std::ptrdiff_t>((n + kBlock - 1) / kBlock);
  const int threads = n_blocks > 1 ? util::threads_for(4 * n, n_threads) : 1;
  if (threads == 1) {
    // Left rows compact in place (the write never passes the read), right rows wait in scratch.
    std::size_t n_left = 0, n_right = 0;
    for (std::size_t i = begin; i < end; ++i) {  // branch-free: the side is random
      const std::uint32_t r = row(i);
      const bool left = rule.left(r);
      order_[begin + n_left] = r;  // a right row here is overwritten later
      scratch_[n_right] = r;
      n_left += left;
      n_right += !left;
      out[r] = left ? left_value : right_value;
    }
    std::copy(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(n_right),
              order_.begin() + static_cast<std::ptrdiff_t>(begin + n_left));
    identity_ = false;
    return begin + n_left;
  }
  // Count per block, then each block scatters to offsets fixed by the counts: the same stable order as
  // the serial loop. Reading from order_ while writing it would race, so the scatter goes to scratch_
  // (unless the order is still the identity, which is never read).
  block_left_.assign(static_cast<std::size_t>(n_blocks), 0);
  util::parallel_for(n_blocks, threads, [&](std::ptrdiff_t b) {
    const std::size_t b0 = begin + static_cast<std::size_t>(b) * kBlock, b1 = std::min(end, b0 + kBlock);
    std::size_t count = 0;
    for (std::size_t i = b0; i < b1; ++i) count += rule.left(row(i));
    block_left_[static_cast<std::size_t>(b)] = count;
  });
  const std::size_t n_left = std::accumulate(block_left_.begin(), block_left_.end(), std::size_t{0});
  const bool from_identity = identity_;
  std::uint32_t* dst = from_identity ? order_.data() : scratch_.data();
  util::parallel_for(n_blocks, threads, [&](std::ptrdiff_t b) {
    const std::size_t b0 = begin + static_cast<std::size_t>(b) * kBlock, b1 = std::min(end, b0 + kBlock);
    std::size_t left_at = begin, right_at = begin + n_left;
    for (std::ptrdiff_t p = 0; p < b; ++p) {
      left_at += block_left_[static_cast<std::size_t>(p)];
      right_at += kBlock - block_left_[static_cast<std::size_t>(p)];
    }
    for (std::size_t i = b0; i < b1; ++i) {
      const std::uint32_t r = from_identity ? static_cast<std::uint32_t>(i) : order_[i];
      const bool left = rule.left(r);
      dst[left ? left_at : right_at] = r;
      left_at += left;
      right_at += !left;
      out[r] = left ? left_value : right_value;
    }
  });
  if (!from_identity)
    util::parallel_for(n_blocks, threads, [&](std::ptrdiff_t b) {
      const std::size_t b0 = begin + static_cast<std::size_t>(b) * kBlock, b1 = std::min(end, b0 + kBlock);
      std::memcpy(order_.data() + b0, scratch_.data() + b0, (b1 - b0) * sizeof(std::uint32_t));
    });
  identity_ = false;
  return begin + n_left;
}

void RowPartition::label(std::size_t begin, std::size_t end, const Rule& rule, std::int8_t left_value,
                         std::int8_t right_value, std::int8_t* out, int n_threads) const {
  const std::size_t n = end - begin;
  const auto n_blocks = static_cast<std::ptrdiff_t>((n + kBlock - 1) / kBlock);
  util::parallel_for(n_blocks, util::threads_for(2 * n, n_threads), [&](std::ptrdiff_t b) {
    const std::size_t b0 = begin + static_cast<std::size_t>(b) * kBlock, b1 = std::min(end, b0 + kBlock);
    for (std::size_t i = b0; i < b1; ++i) {
      const std::uint32_t r = row(i);
      out[r] = rule.left(r) ? left_value : right_value;
    }
  });
}

void RowPartition::gather_values(std::size_t begin, std::size_t end, const std::int64_t* q, std::int64_t* values,
                                 int n_threads) const {
  const std::size_t n = end - begin;
  const auto n_blocks = static_cast<std::ptrdiff_t>((n + kBlock - 1) / kBlock);
  util::parallel_for(n_blocks, util::threads_for(2 * n, n_threads), [&](std::ptrdiff_t b) {
    const std::size_t b0 = begin + static_cast<std::size_t>(b) * kBlock, b1 = std::min(end, b0 + kBlock);
    for (std::size_t i = b0; i < b1; ++i) values[i] = q[row(i)];
  });
}

}  // namespace rebelboost::tree
