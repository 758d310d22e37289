// Columns of squared distances D(x_j, .) between the training points, kept from one selection to the
// next within a memory budget (the anchors and candidates of §5.4 recur across iterations).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <vector>

#include "learner/point_set.hpp"

namespace rebelboost::learner {

// The columns of n doubles that a budget of budget_mib MiB holds: at most n (every column), and within
// half of memory_bytes, the machine's physical memory (0: unknown, no such bound), so that no budget, however
// large, can claim memory the machine does not have.
std::size_t cache_columns(double budget_mib, std::size_t n, std::size_t memory_bytes);

// Every column is computed by PointSet::squared_distances (fixed row blocks, one product per probe), so a
// column has the same bits whether it was stored, evicted and computed again, or never stored: the
// budget changes the time a selection takes, never a model. Which columns are stored depends only on the
// sequence of requests (not on threads). Not thread-safe.
class DistanceCache {
 public:
  // budget_mib: memory for stored columns (n doubles each), in MiB; 0 stores none. Holds
  // cache_columns(budget_mib, n, physical memory) columns, allocated as they are first stored. Scratch
  // space for columns that find no room: at most one request's worth.
  DistanceCache(const PointSet& points, double budget_mib);

  // The columns of the distinct points index[0..count), valid until the next call. Stored ones are
  // returned as they are; missing ones are computed in one pass over the row blocks and stored while
  // the budget allows. When it is full, the least recently requested column outside this request gives
  // way; a column with no such column left is computed into scratch space. A stored column costs O(1),
  // a missing one O(n d).
  const std::vector<const double*>& columns(const std::uint32_t* index, std::size_t count);

  std::size_t capacity() const { return capacity_; }  // columns the budget holds
  std::size_t stored() const { return slots_.size(); }
  std::size_t hits() const { return hits_; }      // columns served from storage so far
  std::size_t misses() const { return misses_; }  // columns computed so far

 private:
  struct Slot {
    std::vector<double> values;
    std::uint32_t owner = 0;        // the point whose column this is
    std::uint64_t request = 0;      // the last request that asked for it
    std::list<std::size_t>::iterator recency;
  };

  // A stored column for point j (a new slot or the least recent one's), or nullptr when none may be used.
  double* claim(std::uint32_t j);
  void touch(std::size_t slot);

  const PointSet& points_;
  std::size_t capacity_;
  std::vector<std::int64_t> slot_of_;  // per point: its slot, -1 when not stored
  std::vector<Slot> slots_;
  std::list<std::size_t> recency_;     // slots, least recently requested first
  std::vector<std::vector<double>> scratch_;
  std::uint64_t request_ = 0;
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
  std::vector<const double*> out_;
  std::vector<std::uint32_t> missing_;
  std::vector<double*> missing_out_;
};

}  // namespace rebelboost::learner
