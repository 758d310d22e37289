// Tests of the row partition: stable (equal to a naive two-list partition) for any thread count, with
// several leaves split together.
#include "tree/partition.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace rebelboost::tree {
namespace {

// Splits the root, then both halves together, checking every range against a naive stable partition.
TEST(RowPartition, SplitIsStableAndIndependentOfThreads) {
  const std::size_t n = 150000;  // several parallel blocks
  std::mt19937_64 rng(7);
  std::vector<std::uint8_t> a(n), b(n), c(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<std::uint8_t>(rng() % 16);  // 15 = missing
    b[i] = static_cast<std::uint8_t>(rng() % 16);
    c[i] = static_cast<std::uint8_t>(rng() % 16);
  }
  const RowPartition::Rule root{a.data(), 6, 15, true};
  const RowPartition::Rule second{b.data(), 9, 15, false};
  const RowPartition::Rule third{c.data(), 2, 15, true};
  auto naive = [](const std::vector<std::uint32_t>& rows, const RowPartition::Rule& rule) {
    std::vector<std::uint32_t> left, right;
    for (const std::uint32_t r : rows) (rule.left(r) ? left : right).push_back(r);
    return std::make_pair(left, right);
  };
  std::vector<std::uint32_t> all(n);
  for (std::uint32_t r = 0; r < n; ++r) all[r] = r;
  const auto [left, right] = naive(all, root);
  const auto [ll, lr] = naive(left, third);
  const auto [rl, rr] = naive(right, second);
  for (const int threads : {1, 2, 3, 4}) {
    SCOPED_TRACE(threads);
    RowPartition p;
    p.reset(n);
    ASSERT_TRUE(p.identity());
    std::vector<std::int8_t> out(n, 0);
    const std::size_t mid = p.split({{{0, n}, root, -1, 1}}, out.data(), threads)[0];
    ASSERT_FALSE(p.identity());
    ASSERT_EQ(mid, left.size());
    for (std::size_t i = 0; i < left.size(); ++i) ASSERT_EQ(p.row(i), left[i]);
    for (std::size_t i = 0; i < right.size(); ++i) ASSERT_EQ(p.row(mid + i), right[i]);
    for (std::uint32_t r = 0; r < n; ++r) ASSERT_EQ(out[r], root.left(r) ? -1 : 1);
    // Both halves split together: each stays ascending within each side.
    const std::vector<std::size_t> mids = p.split({{{0, mid}, third, 1, -1}, {{mid, n}, second, -1, 1}}, out.data(), threads);
    ASSERT_EQ(mids, (std::vector<std::size_t>{ll.size(), mid + rl.size()}));
    std::vector<std::uint32_t> want = ll;
    for (const auto* part : {&lr, &rl, &rr}) want.insert(want.end(), part->begin(), part->end());
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(p.row(i), want[i]) << i;
    for (const std::uint32_t r : ll) ASSERT_EQ(out[r], 1);
    for (const std::uint32_t r : rr) ASSERT_EQ(out[r], 1);
    // Values in partition order, and labels without partitioning.
    std::vector<std::int64_t> q(n), ordered(n, 0);
    for (std::size_t i = 0; i < n; ++i) q[i] = static_cast<std::int64_t>(i) * 3 - 7;
    p.gather_values({{0, 1000}, {mid, n}}, q.data(), ordered.data(), threads);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(ordered[i], (i < 1000 || i >= mid) ? q[p.row(i)] : 0) << i;
    std::vector<std::int8_t> labels(n, 0);
    p.label({{{0, mid}, second, 1, -1}}, labels.data(), threads);
    for (std::size_t i = 0; i < mid; ++i) ASSERT_EQ(labels[p.row(i)], second.left(p.row(i)) ? 1 : -1);
    for (std::size_t i = mid; i < n; ++i) ASSERT_EQ(labels[p.row(i)], 0);
  }
}

}  // namespace
}  // namespace rebelboost::tree
