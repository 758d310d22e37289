// Tests of the row partition: stable (equal to a naive two-list partition) for any thread count, with
// several leaves split together.
#include "tree/partition.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

// Values carried by split(): at each carried side's new places, from[row]; other places untouched. The smaller
// side (left on a tie) for kSmaller, both for kBoth, none for kNone or without a Carry.
TEST(RowPartition, SplitCarriesTheValuesOfTheAskedSides) {
  const std::size_t n = 100003;  // several parallel blocks, one of them short
  std::mt19937_64 rng(11);
  std::vector<std::uint8_t> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<std::uint8_t>(rng() % 16);
    b[i] = static_cast<std::uint8_t>(rng() % 16);
  }
  const RowPartition::Rule mostly_left{a.data(), 11, 15, true}, mostly_right{b.data(), 3, 15, false};
  std::vector<std::int64_t> s(n), t(n);
  for (std::size_t i = 0; i < n; ++i) {
    s[i] = static_cast<std::int64_t>(i) * 5 - 11;
    t[i] = static_cast<std::int64_t>(i) + 1;
  }
  for (const int threads : {1, 2, 3}) {
    for (const bool two : {false, true}) {
      SCOPED_TRACE(testing::Message() << "threads " << threads << " two arrays " << two);
      RowPartition p;
      p.reset(n);
      std::vector<std::int64_t> to_s(n, 0), to_t(n, 0);
      RowPartition::Carry carry;
      carry.from[0] = s.data();
      carry.to[0] = to_s.data();
      if (two) {
        carry.from[1] = t.data();
        carry.to[1] = to_t.data();
      }
      const std::size_t mid = p.split({{{0, n}, mostly_left, 0, 0, RowPartition::Sides::kSmaller}}, nullptr, threads, &carry)[0];
      ASSERT_GT(mid, n - mid);  // the right side is the smaller
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(to_s[i], i >= mid ? s[p.row(i)] : 0) << i;
        ASSERT_EQ(to_t[i], i >= mid && two ? t[p.row(i)] : 0) << i;
      }
      std::fill(to_s.begin(), to_s.end(), 0);
      const std::vector<std::size_t> mids = p.split(
          {{{0, mid}, mostly_right, 0, 0, RowPartition::Sides::kSmaller}, {{mid, n}, mostly_left, 0, 0, RowPartition::Sides::kBoth}},
          nullptr, threads, &carry);
      ASSERT_LT(mids[0], mid - mids[0]);  // the left side is the smaller
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(to_s[i], i < mids[0] || i >= mid ? s[p.row(i)] : 0) << i;
      std::fill(to_s.begin(), to_s.end(), 0);
      p.split({{{0, mids[0]}, mostly_left, 0, 0, RowPartition::Sides::kNone}}, nullptr, threads, &carry);
      p.split({{{mid, n}, mostly_right, 0, 0, RowPartition::Sides::kBoth}}, nullptr, threads);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(to_s[i], 0) << i;
    }
  }
}

}  // namespace
}  // namespace rebelboost::tree
