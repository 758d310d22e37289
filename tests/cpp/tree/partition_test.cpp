// Tests of the row partition: stable (equal to a naive two-list partition) for any thread count.
#include "tree/partition.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace rebelboost::tree {
namespace {

// Splits the root, then each half again, checking every range against a naive stable partition.
TEST(RowPartition, SplitIsStableAndIndependentOfThreads) {
  const std::size_t n = 150000;  // several parallel blocks
  std::mt19937_64 rng(7);
  std::vector<std::uint8_t> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<std::uint8_t>(rng() % 16);  // 15 = missing
    b[i] = static_cast<std::uint8_t>(rng() % 16);
  }
  const RowPartition::Rule root{a.data(), 6, 15, true};
  const RowPartition::Rule second{b.data(), 9, 15, false};
  for (const int threads : {1, 2, 3, 4}) {
    SCOPED_TRACE(threads);
    RowPartition p;
    p.reset(n);
    ASSERT_TRUE(p.identity());
    std::vector<std::int8_t> out(n, 0);
    const std::size_t mid = p.split(0, n, root, -1, 1, out.data(), threads);
    std::vector<std::uint32_t> left, right;
    for (std::uint32_t r = 0; r < n; ++r) (root.left(r) ? left : right).push_back(r);
    ASSERT_EQ(mid, left.size());
    for (std::size_t i = 0; i < left.size(); ++i) ASSERT_EQ(p.row(i), left[i]);
    for (std::size_t i = 0; i < right.size(); ++i) ASSERT_EQ(p.row(mid + i), right[i]);
    for (std::uint32_t r = 0; r < n; ++r) ASSERT_EQ(out[r], root.left(r) ? -1 : 1);
    // The right block split again: its rows stay ascending within each side.
    const std::size_t mid2 = p.split(mid, n, second, 1, -1, out.data(), threads);
    std::vector<std::uint32_t> rl, rr;
    for (const std::uint32_t r : right) (second.left(r) ? rl : rr).push_back(r);
    ASSERT_EQ(mid2, mid + rl.size());
    for (std::size_t i = 0; i < rl.size(); ++i) ASSERT_EQ(p.row(mid + i), rl[i]);
    for (std::size_t i = 0; i < rr.size(); ++i) ASSERT_EQ(p.row(mid2 + i), rr[i]);
    for (std::size_t i = 0; i < left.size(); ++i) ASSERT_EQ(p.row(i), left[i]);  // untouched
    // Values in partition order, and labels without partitioning.
    std::vector<std::int64_t> q(n), ordered(n, 0);
    for (std::size_t i = 0; i < n; ++i) q[i] = static_cast<std::int64_t>(i) * 3 - 7;
    p.gather_values(mid, n, q.data(), ordered.data(), threads);
    for (std::size_t i = mid; i < n; ++i) ASSERT_EQ(ordered[i], q[p.row(i)]);
    std::vector<std::int8_t> labels(n, 0);
    p.label(0, mid, second, 1, -1, labels.data(), threads);
    for (std::size_t i = 0; i < mid; ++i) ASSERT_EQ(labels[p.row(i)], second.left(p.row(i)) ? 1 : -1);
  }
}

}  // namespace
}  // namespace rebelboost::tree
