// Tests of the QuickBoost schedule shared by the pruned searches: chunk cuts and the finishing order.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "tree/quick_prune.hpp"

namespace rebelboost::tree {
namespace {

TEST(QuickSchedule, ChunksCoverTheRowsInOrderWithEqualMass) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + rng() % 3000;
    std::vector<std::int64_t> prefix(n + 1, static_cast<std::int64_t>(trial % 3 == 0 ? rng() % 1000 : 0));
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned bits = static_cast<unsigned>(rng() % 20);  // drawn first, in every compiler
      prefix[i + 1] = prefix[i] + static_cast<std::int64_t>(rng() % (1u << bits));
    }
    const double eta = 0.5 + 0.45 * static_cast<double>(trial % 10) / 10.0;
    const int chunks = 1 + static_cast<int>(rng() % 25);
    const std::size_t first = first_subset_end(prefix, eta);
    const std::int64_t total = prefix[n];
    // The fewest rows reaching eta of the mass.
    ASSERT_LE(first, n);
    ASSERT_GE(static_cast<double>(prefix[first]), std::min(static_cast<double>(total), eta * static_cast<double>(total)) - 1.0);
    if (first > 0) {
      ASSERT_LT(static_cast<double>(prefix[first - 1]), eta * static_cast<double>(total));
    }
    const std::vector<std::size_t> b = chunk_bounds(prefix, first, chunks);
    ASSERT_GE(b.size(), 2u);
    ASSERT_EQ(b[0], 0u);
    ASSERT_EQ(b[1], first);
    ASSERT_EQ(b.back(), n);
    ASSERT_LE(b.size(), static_cast<std::size_t>(chunks) + 3);
    for (std::size_t j = 2; j < b.size(); ++j) ASSERT_GT(b[j], b[j - 1]);
    // Every chunk but the last ends at the first row reaching its share of the remaining mass.
    const std::int64_t base = prefix[first];
    for (std::size_t j = 2; j + 1 < b.size(); ++j) {
      const double share = static_cast<double>(total - base) / chunks;
      ASSERT_GE(static_cast<double>(prefix[b[j]] - base) + 1.0, share * 0.999) << "chunk " << j;
    }
  }
}

TEST(QuickSchedule, FinishingOrderIsByBoundThenIndex) {
  const std::vector<std::int64_t> prelim{5, 3, 9, 3, 1, 5, 1};
  const std::vector<std::uint8_t> active{1, 1, 1, 1, 0, 1, 1};
  EXPECT_EQ(finishing_order(prelim, active.data()), (std::vector<std::size_t>{6, 1, 3, 0, 5, 2}));
  EXPECT_EQ(finishing_order(prelim, nullptr), (std::vector<std::size_t>{4, 6, 1, 3, 0, 5, 2}));
  const std::vector<double> losses{0.5, 0.25, 0.25};
  EXPECT_EQ(finishing_order(losses, nullptr), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(finishing_threads(8, 4), 1);
  EXPECT_EQ(finishing_threads(9, 4), 4);
}

}  // namespace
}  // namespace rebelboost::tree
