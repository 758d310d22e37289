// Histograms of several features of one leaf in one pass over its rows (VarianceGrower::build): a row's
// index and value are read once for the whole group instead of once per feature, and the group's adds are
// independent of each other. Integer sums in any order, so the histograms are those of one pass per feature
// (docs/design/determinism.md "Histograms are integer sums").
#pragma once

#include <cstddef>
#include <cstdint>

namespace rebelboost::tree {

// Features per group at most: the group's histograms stay in the first-level cache (8 packed histograms of
// 256 int64 are 16 KiB; pairs take twice that per feature, so pairs' groups are half as large).
inline constexpr std::size_t kMaxGroup = 8;

struct FeatureGroup {
  std::size_t size = 0;
  const std::uint8_t* columns[kMaxGroup] = {};  // each feature's codes, by row
  std::int64_t* hists[kMaxGroup] = {};          // each feature's histogram (zeroed or a partial sum)
};

// How many groups `n_features` features make: at least `parts` (when there are that many features) and
// none above `most` features (most <= kMaxGroup). Group g of n holds features [g F / n, (g + 1) F / n).
std::size_t group_count(std::size_t n_features, std::size_t most, std::size_t parts);

// Pass i of n reads row rows[i]'s codes (rows null: row i, the root) and its value(s) at i: below the root,
// the caller gathers the leaf's values in its rows' order first, so that they are read in sequence.
// Packed: hist[code] += p[i] + offset for each feature of the group.
void add_group_packed(const FeatureGroup& group, const std::uint32_t* rows, std::size_t n, const std::int64_t* p,
                      std::int64_t offset);
// Pairs: hist[2 code] += s[i], hist[2 code + 1] += t[i] for each feature of the group.
void add_group_pairs(const FeatureGroup& group, const std::uint32_t* rows, std::size_t n, const std::int64_t* s,
                     const std::int64_t* t);

}  // namespace rebelboost::tree
