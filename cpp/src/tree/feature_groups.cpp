// One pass over a leaf's rows for a group of features (see feature_groups.hpp).
#include "tree/feature_groups.hpp"

#include <algorithm>

namespace rebelboost::tree {

namespace {

// The group's size is a template argument, so each feature's column and histogram stay in registers.
// row(i) is the pass's i-th row (two instances, so the root's has no indirection); value(i) is read once per
// row and add(hist, code, value) adds it for each feature.
template <std::size_t G, typename Row, typename Value, typename Add>
void pass(const FeatureGroup& group, Row row, std::size_t n, Value value, Add add) {
  const std::uint8_t* columns[G];
  std::int64_t* hists[G];
  std::copy(group.columns, group.columns + G, columns);
  std::copy(group.hists, group.hists + G, hists);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = row(i);
    const auto v = value(i);
    for (std::size_t k = 0; k < G; ++k) add(hists[k], columns[k][r], v);
  }
}

template <std::size_t G, typename Value, typename Add>
void rows_pass(const FeatureGroup& group, const std::uint32_t* rows, std::size_t n, Value value, Add add) {
  if (rows == nullptr) return pass<G>(group, [](std::size_t i) { return i; }, n, value, add);
  pass<G>(group, [rows](std::size_t i) { return static_cast<std::size_t>(rows[i]); }, n, value, add);
}

// rows_pass<G> for the group's size G (group_count keeps it within 1..kMaxGroup).
template <typename Value, typename Add>
void sized_pass(const FeatureGroup& group, const std::uint32_t* rows, std::size_t n, Value value, Add add) {
  switch (group.size) {
    case 1: return rows_pass<1>(group, rows, n, value, add);
    case 2: return rows_pass<2>(group, rows, n, value, add);
    case 3: return rows_pass<3>(group, rows, n, value, add);
    case 4: return rows_pass<4>(group, rows, n, value, add);
    case 5: return rows_pass<5>(group, rows, n, value, add);
    case 6: return rows_pass<6>(group, rows, n, value, add);
    case 7: return rows_pass<7>(group, rows, n, value, add);
    case 8: return rows_pass<8>(group, rows, n, value, add);
    default: return;
  }
}

struct Pair {
  std::int64_t s, t;
};

}  // namespace

std::size_t group_count(std::size_t n_features, std::size_t most, std::size_t parts) {
  const std::size_t by_size = (n_features + most - 1) / most;
  return std::max(by_size, std::min(parts, n_features));
}

void add_group_packed(const FeatureGroup& group, const std::uint32_t* rows, std::size_t n, const std::int64_t* p,
                      std::int64_t offset) {
  sized_pass(
      group, rows, n, [p, offset](std::size_t i) { return p[i] + offset; },
      [](std::int64_t* h, std::uint8_t code, std::int64_t v) { h[code] += v; });
}

void add_group_pairs(const FeatureGroup& group, const std::uint32_t* rows, std::size_t n, const std::int64_t* s,
                     const std::int64_t* t) {
  sized_pass(
      group, rows, n, [s, t](std::size_t i) { return Pair{s[i], t[i]}; },
      [](std::int64_t* h, std::uint8_t code, Pair v) {
        h[2 * code] += v.s;
        h[2 * code + 1] += v.t;
      });
}

}  // namespace rebelboost::tree
