// Totals over every participant of a distributed fit (rebelboost::Reducer, docs/distributed.md); with no
// reducer (a local fit) each call leaves the local totals as they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rebelboost/train.hpp"
#include "util/exact_sum.hpp"

namespace rebelboost::util {

// Every sum becomes the sum over all participants (one reduction for all of them).
void reduce_sums(std::vector<ExactSum>& sums, Reducer* reducer);
// The values of `sums` after reduce_sums.
std::vector<double> reduced_values(std::vector<ExactSum>& sums, Reducer* reducer);
double reduced_value(ExactSum sum, Reducer* reducer);
// Integer totals / maxima in place.
void reduce_counts(std::int64_t* data, std::size_t n, Reducer* reducer);
void reduce_max(std::int64_t* data, std::size_t n, Reducer* reducer);

// Exact per-block sums of fn(i, sums) over [0, n) in blocks of `block` rows on `threads` threads, merged
// (exactly: the result does not depend on the blocks or the threads), then reduced. fn adds row i's
// terms to the `width` sums it is handed.
template <typename Fn>
std::vector<ExactSum> block_sums(std::size_t n, std::size_t width, std::size_t block, int threads, Fn&& fn);

}  // namespace rebelboost::util

#include "util/parallel.hpp"

namespace rebelboost::util {

template <typename Fn>
std::vector<ExactSum> block_sums(std::size_t n, std::size_t width, std::size_t block, int threads, Fn&& fn) {
  const std::size_t n_blocks = (n + block - 1) / block;
  std::vector<std::vector<ExactSum>> partial(n_blocks, std::vector<ExactSum>(width));
  parallel_for(static_cast<std::ptrdiff_t>(n_blocks), threads, [&](std::ptrdiff_t b) {
    std::vector<ExactSum>& sums = partial[static_cast<std::size_t>(b)];
    const std::size_t begin = static_cast<std::size_t>(b) * block;
    const std::size_t end = begin + block < n ? begin + block : n;
    for (std::size_t i = begin; i < end; ++i) fn(i, sums.data());
  });
  std::vector<ExactSum> total(width);
  for (const std::vector<ExactSum>& sums : partial)
    for (std::size_t k = 0; k < width; ++k) total[k].merge(sums[k]);
  return total;
}

}  // namespace rebelboost::util
