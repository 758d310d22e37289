// Tests segment_by_mass against what the schedule needs of it: every row that changes a sum listed exactly
// once, in the segment its mass rank puts it in (a slow reference that sorts the rows heaviest first by
// binary exponent, ascending row index among equals), the node's order kept inside a segment, the signs
// apart, and each cut's exact mass before it.
#include "tree/mass_segments.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <vector>

namespace rebelboost::tree {
namespace {

struct Node {
  std::vector<std::uint32_t> rows;  // ascending
  std::vector<std::int64_t> s, t, mass;
  std::vector<std::uint8_t> skip;
};

Node random_node(std::size_t n_samples, std::mt19937_64& rng) {
  Node d;
  d.s.resize(n_samples);
  d.t.resize(n_samples);
  d.mass.resize(n_samples);
  d.skip.assign(n_samples, 0);
  for (std::uint32_t r = 0; r < n_samples; ++r) {
    if (rng() % 4 != 0) d.rows.push_back(r);
    const int kind = static_cast<int>(rng() % 8);
    const std::int64_t size = static_cast<std::int64_t>(rng() % (std::uint64_t{1} << (rng() % 40)));
    d.s[r] = kind == 0 ? 0 : (rng() % 2 ? size : -size);
    d.t[r] = kind == 1 ? 0 : static_cast<std::int64_t>(rng() % 100);
    d.mass[r] = d.s[r] == 0 ? 0 : (d.s[r] < 0 ? -d.s[r] : d.s[r]);
    d.skip[r] = rng() % 10 == 0;
  }
  return d;
}

MassSegments segments_of(const Node& d, std::size_t n, const std::uint8_t* skip, const SegmentOptions& options) {
  MassSegments out;
  segment_by_mass(d.rows.data(), n, d.s.data(), d.t.data(), d.mass.data(), skip, options, out);
  return out;
}

int exponent(std::int64_t m) { return 63 - __builtin_clzll(static_cast<std::uint64_t>(m)); }

// The rows listed, in reading order: heavier exponents first, ascending rows among equals, then the rows
// with mass 0 and t != 0.
std::vector<std::uint32_t> reading_order(const Node& d, bool use_skip) {
  std::vector<std::uint32_t> listed;
  for (std::uint32_t r : d.rows)
    if (!(use_skip && d.skip[r]) && (d.mass[r] != 0 || d.t[r] != 0)) listed.push_back(r);
  std::stable_sort(listed.begin(), listed.end(), [&](std::uint32_t a, std::uint32_t b) {
    const int ea = d.mass[a] ? exponent(d.mass[a]) : -1, eb = d.mass[b] ? exponent(d.mass[b]) : -1;
    return ea > eb;
  });
  return listed;
}

void check(const Node& d, const SegmentOptions& options, bool use_skip, const MassSegments& out) {
  const std::vector<std::uint32_t> order = reading_order(d, use_skip);
  ASSERT_EQ(out.rows.size(), order.size());
  ASSERT_GE(out.bounds.size(), 2u);
  EXPECT_EQ(out.bounds.front(), 0u);
  EXPECT_EQ(out.bounds.back(), order.size());
  if (options.first_empty) {
    EXPECT_EQ(out.bounds[1], 0u);
  }
  for (std::size_t j = 2; j < out.bounds.size(); ++j) EXPECT_LT(out.bounds[j - 1], out.bounds[j]);
  EXPECT_LE(out.bounds.size(), static_cast<std::size_t>(options.n_chunks) + 2);
  ASSERT_EQ(out.mass_before.size(), out.bounds.size());
  EXPECT_EQ(out.mass_before[0], options.mass_before_first);
  std::map<std::uint32_t, std::size_t> place;  // row -> position in reading order
  for (std::size_t i = 0; i < order.size(); ++i) place[order[i]] = i;
  for (std::size_t j = 0; j + 1 < out.bounds.size(); ++j) {
    // The segment holds exactly the rows of reading positions [bounds[j], bounds[j + 1]).
    std::vector<std::uint32_t> got(out.rows.begin() + static_cast<std::ptrdiff_t>(out.bounds[j]),
                                   out.rows.begin() + static_cast<std::ptrdiff_t>(out.bounds[j + 1]));
    std::vector<std::uint32_t> want(order.begin() + static_cast<std::ptrdiff_t>(out.bounds[j]),
                                    order.begin() + static_cast<std::ptrdiff_t>(out.bounds[j + 1]));
    std::int64_t mass = 0;
    for (std::uint32_t r : want) mass += d.mass[r];
    EXPECT_EQ(out.mass_before[j + 1] - out.mass_before[j], mass) << "segment " << j;
    std::sort(want.begin(), want.end());
    if (options.split_sign) {
      // s > 0 first, ascending; then s < 0 (any order).
      const std::size_t mid = out.second_class[j] - out.bounds[j];
      ASSERT_LE(mid, got.size());
      for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(d.s[got[i]] < 0, i >= mid) << "segment " << j;
      EXPECT_TRUE(std::is_sorted(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(mid)));
      std::sort(got.begin(), got.end());
    } else {
      EXPECT_TRUE(std::is_sorted(got.begin(), got.end())) << "segment " << j << " keeps the node's order";
    }
    EXPECT_EQ(got, want) << "segment " << j;
  }
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    EXPECT_EQ(out.s[i], d.s[out.rows[i]] + options.s_offset);
    if (options.with_t) {
      EXPECT_EQ(out.t[i], d.t[out.rows[i]]);
    }
  }
}

TEST(MassSegments, ListsEachRowOnceInItsRanksSegment) {
  std::mt19937_64 rng(11);
  MassSegments reused;  // one output for every trial, as a pruned pass keeps it across nodes
  for (int trial = 0; trial < 60; ++trial) {
    const Node d = random_node(1 + rng() % 3000, rng);
    SegmentOptions options;
    options.eta = trial % 3 == 0 ? 0.5 : 0.9;
    options.n_chunks = 1 + static_cast<int>(rng() % 25);
    options.first_empty = trial % 5 == 0;
    options.mass_before_first = options.first_empty ? 12345 : 0;
    options.split_sign = trial % 2 == 0;
    options.with_t = !options.split_sign;
    options.s_offset = trial % 4 == 1 ? std::int64_t{1} << 40 : 0;
    const bool use_skip = trial % 3 != 2;
    check(d, options, use_skip, segments_of(d, d.rows.size(), use_skip ? d.skip.data() : nullptr, options));
    segment_by_mass(d.rows.data(), d.rows.size(), d.s.data(), d.t.data(), d.mass.data(),
                    use_skip ? d.skip.data() : nullptr, options, reused);
    check(d, options, use_skip, reused);
  }
}

TEST(MassSegments, SubsetZeroHoldsAboutEtaOfTheMass) {
  // Masses spread over many exponents: subset 0 holds at least eta of the mass less one rank's share of a
  // row count (the cut inside a rank counts rows at the rank's mean mass; its rows are within a factor 2).
  std::mt19937_64 rng(3);
  Node d;
  const std::size_t n = 20000;
  for (std::uint32_t r = 0; r < n; ++r) {
    d.rows.push_back(r);
    const std::int64_t m = 1 + static_cast<std::int64_t>(rng() % (std::uint64_t{1} << (rng() % 30)));
    d.s.push_back(m);
    d.t.push_back(1);
    d.mass.push_back(m);
  }
  d.skip.assign(n, 0);
  const std::int64_t total = std::accumulate(d.mass.begin(), d.mass.end(), std::int64_t{0});
  for (double eta : {0.5, 0.9, 0.97}) {
    SegmentOptions options;
    options.eta = eta;
    const MassSegments out = segments_of(d, n, nullptr, options);
    const double share = static_cast<double>(out.mass_before[1]) / static_cast<double>(total);
    EXPECT_GT(share, eta - 0.01) << eta;
    EXPECT_LT(share, eta + 0.01) << eta;
    EXPECT_LT(out.bounds[1], n);
  }
}

TEST(MassSegments, WeightlessRowsComeLastAndEmptyNodesHaveOneEmptySegment) {
  Node d;
  d.rows = {0, 1, 2, 3};
  d.s = {0, 5, 0, -3};
  d.t = {2, 1, 0, 1};  // row 0: weight only; row 2: nothing
  d.mass = {0, 25, 0, 9};
  SegmentOptions options;
  options.with_t = true;
  const MassSegments out = segments_of(d, 4, nullptr, options);
  ASSERT_EQ(out.rows.size(), 3u);
  EXPECT_EQ(out.rows.back(), 0u);
  EXPECT_EQ(out.mass_before.back(), 34);
  const MassSegments none = segments_of(d, 0, nullptr, options);
  EXPECT_EQ(none.bounds, (std::vector<std::size_t>{0, 0}));
  EXPECT_EQ(none.mass_before, (std::vector<std::int64_t>{0, 0}));
}

}  // namespace
}  // namespace rebelboost::tree
