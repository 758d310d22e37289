// A node's rows cut into the segments of the QuickBoost schedule (quick_driver.hpp) for the impurity
// criteria: subset 0, the heaviest rows holding eta of the mass, then n_chunks chunks of about equal mass,
// heaviest first (docs/quickboost.md, "The schedule").
//
// Rows are ranked by the binary exponent of their mass (rows within a factor 2 of each other rank alike,
// ascending row index among them: the ordering of order_by_weight), and a cut that falls inside one
// exponent is placed by row count, so a segment's mass is near its target. Any cut gives the same winner;
// the bounds need only each segment's exact mass, which is summed here. Inside a segment the rows keep the
// node's order, which RowPartition keeps ascending, so reading a segment streams each feature's column
// forward once (rows heaviest first would stream it once per exponent). Two passes over the node's rows,
// no sort.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/default_init_allocator.hpp"

namespace rebelboost::tree {

template <typename T>
using Buffer = std::vector<T, util::DefaultInitAllocator<T>>;  // filled whole after resize(): not zeroed first

struct MassSegments {
  Buffer<std::uint32_t> rows;              // segment after segment
  Buffer<std::int64_t> s, t;               // their values (t only when asked for)
  std::vector<std::size_t> bounds;         // segment j is rows [bounds[j], bounds[j + 1]); bounds[0] = 0
  std::vector<std::size_t> second_class;   // split_sign: where segment j's rows with s < 0 begin
  std::vector<std::int64_t> mass_before;   // per bound: the mass before it (start: `mass_before_first`)
  Buffer<std::uint8_t> rank;               // scratch: each of the node's rows' rank (mass_segments.cpp)
};

struct SegmentOptions {
  double eta = 0.9;                 // subset 0's share of the mass (ignored with first_empty)
  int n_chunks = 20;                // the chunks after subset 0
  bool first_empty = false;         // subset 0 is kept elsewhere (a cache): segment 0 is empty
  std::int64_t mass_before_first = 0;  // the mass kept elsewhere
  bool split_sign = false;          // Gini, entropy: each segment lists its rows with s > 0 first
  bool with_t = false;              // also list t
  std::int64_t s_offset = 0;        // added to every listed s (the variance's packing)
};

// The rows of a node (rows[0..n)) cut into segments, into `out` (its buffers reused: a pruned pass keeps
// one across nodes, so a node costs no allocation). Rows with skip[row] != 0 (optional) and rows with mass
// 0 and t = 0 are left out (they change no sum); rows with mass 0 and t != 0 (the variance's weight alone)
// go to the last chunk. mass[row] >= 0 and their sum below 2^62.
void segment_by_mass(const std::uint32_t* rows, std::size_t n, const std::int64_t* s, const std::int64_t* t,
                     const std::int64_t* mass, const std::uint8_t* skip, const SegmentOptions& options,
                     MassSegments& out);

}  // namespace rebelboost::tree
