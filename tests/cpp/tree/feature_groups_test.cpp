// Tests that a group's one pass over the rows gives each feature the histogram of a naive per-feature loop,
// and that the groups cover every feature once within the size limit.
#include "tree/feature_groups.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace rebelboost::tree {
namespace {

constexpr std::size_t kBins = 256;

struct Data {
  std::vector<std::vector<std::uint8_t>> columns;  // codes of every row, per feature
  std::vector<std::uint32_t> rows;                 // an ascending subset of the rows
  std::vector<std::int64_t> s, t;                  // one per pass position (a subset's values in its order)
};

Data random_data(std::size_t n_rows, std::size_t n_features, std::mt19937_64& rng) {
  Data d;
  std::uniform_int_distribution<int> code(0, 255);
  std::uniform_int_distribution<std::int64_t> value(-(std::int64_t{1} << 30), std::int64_t{1} << 30);
  d.columns.assign(n_features, std::vector<std::uint8_t>(n_rows));
  for (auto& c : d.columns)
    for (auto& x : c) x = static_cast<std::uint8_t>(rng() % 3 == 0 ? 7 : code(rng));  // runs of one code too
  for (std::uint32_t r = 0; r < n_rows; ++r)
    if (rng() % 3 != 0) d.rows.push_back(r);
  d.s.resize(n_rows);
  d.t.resize(n_rows);
  for (std::size_t i = 0; i < n_rows; ++i) {
    d.s[i] = value(rng);
    d.t[i] = value(rng) & 0xffff;
  }
  return d;
}

TEST(FeatureGroups, OnePassEqualsAPassPerFeature) {
  std::mt19937_64 rng(5);
  for (std::size_t size = 1; size <= kMaxGroup; ++size) {
    for (const bool gather : {false, true}) {
      const Data d = random_data(3001, size, rng);
      const std::uint32_t* rows = gather ? d.rows.data() : nullptr;
      const std::size_t n = gather ? d.rows.size() : d.s.size();
      std::vector<std::vector<std::int64_t>> packed(size, std::vector<std::int64_t>(kBins, 3));  // a partial sum
      std::vector<std::vector<std::int64_t>> pairs(size, std::vector<std::int64_t>(2 * kBins, 0));
      FeatureGroup p, q;
      for (std::size_t k = 0; k < size; ++k) {
        p.columns[k] = q.columns[k] = d.columns[k].data();
        p.hists[k] = packed[k].data();
        q.hists[k] = pairs[k].data();
      }
      p.size = q.size = size;
      const std::int64_t offset = std::int64_t{1} << 40;
      add_group_packed(p, rows, n, d.s.data(), offset);
      add_group_pairs(q, rows, n, d.s.data(), d.t.data());
      for (std::size_t k = 0; k < size; ++k) {
        std::vector<std::int64_t> want_packed(kBins, 3), want_pairs(2 * kBins, 0);
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint8_t c = d.columns[k][gather ? d.rows[i] : i];
          want_packed[c] += d.s[i] + offset;
          want_pairs[2 * c] += d.s[i];
          want_pairs[2 * c + 1] += d.t[i];
        }
        EXPECT_EQ(packed[k], want_packed) << "size " << size << " gather " << gather << " feature " << k;
        EXPECT_EQ(pairs[k], want_pairs) << "size " << size << " gather " << gather << " feature " << k;
      }
    }
  }
}

TEST(FeatureGroups, CountCoversEveryFeatureWithinTheLimit) {
  for (std::size_t features = 1; features <= 40; ++features)
    for (std::size_t most = 1; most <= kMaxGroup; ++most)
      for (std::size_t parts = 1; parts <= 6; ++parts) {
        const std::size_t groups = group_count(features, most, parts);
        EXPECT_GE(groups, std::min(parts, features));
        EXPECT_LE(groups, features);
        std::size_t covered = 0;
        for (std::size_t g = 0; g < groups; ++g) {
          const std::size_t size = (g + 1) * features / groups - g * features / groups;
          EXPECT_GE(size, 1u);
          EXPECT_LE(size, most);
          covered += size;
        }
        EXPECT_EQ(covered, features);
      }
}

}  // namespace
}  // namespace rebelboost::tree
