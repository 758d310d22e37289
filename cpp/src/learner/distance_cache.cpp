// Stored distance columns with least-recently-requested eviction inside a fixed number of slots.
#include "learner/distance_cache.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "util/physical_memory.hpp"

namespace rebelboost::learner {

std::size_t cache_columns(double budget_mib, std::size_t n, std::size_t memory_bytes) {
  if (n == 0 || !(budget_mib > 0.0)) return 0;
  double bytes = budget_mib * 1048576.0;
  if (memory_bytes > 0) bytes = std::min(bytes, 0.5 * static_cast<double>(memory_bytes));
  const double columns = std::floor(bytes / (static_cast<double>(n) * sizeof(double)));
  return columns >= static_cast<double>(n) ? n : static_cast<std::size_t>(columns);
}

DistanceCache::DistanceCache(const PointSet& points, double budget_mib)
    : points_(points),
      capacity_(cache_columns(budget_mib, points.size(), util::physical_memory_bytes())),
      slot_of_(points.size(), -1) {}

void DistanceCache::touch(std::size_t slot) {
  Slot& s = slots_[slot];
  s.request = request_;
  recency_.splice(recency_.end(), recency_, s.recency);
}

double* DistanceCache::claim(std::uint32_t j) {
  std::size_t slot;
  if (slots_.size() < capacity_) {
    slot = slots_.size();
    slots_.push_back({std::vector<double>(points_.size()), j, request_, recency_.insert(recency_.end(), slot)});
  } else {
    // The least recent slot; if this request asked for it too, every slot holds one of its columns.
    if (recency_.empty() || slots_[recency_.front()].request == request_) return nullptr;
    slot = recency_.front();
    slot_of_[slots_[slot].owner] = -1;
    slots_[slot].owner = j;
    touch(slot);
  }
  slot_of_[j] = static_cast<std::int64_t>(slot);
  return slots_[slot].values.data();
}

const std::vector<const double*>& DistanceCache::columns(const std::uint32_t* index, std::size_t count) {
  ++request_;
  out_.assign(count, nullptr);
  for (std::size_t b = 0; b < count; ++b) {
    const std::int64_t slot = slot_of_[index[b]];
    if (slot < 0) continue;
    touch(static_cast<std::size_t>(slot));
    out_[b] = slots_[static_cast<std::size_t>(slot)].values.data();
    ++hits_;
  }
  missing_.clear();
  missing_out_.clear();
  std::size_t scratch_used = 0;
  for (std::size_t b = 0; b < count; ++b) {
    if (out_[b] != nullptr) continue;
    assert(slot_of_[index[b]] < 0 && "DistanceCache::columns: indices must be distinct");
    double* column = claim(index[b]);
    if (column == nullptr) {
      if (scratch_used == scratch_.size()) scratch_.emplace_back(points_.size());
      column = scratch_[scratch_used++].data();
    }
    missing_.push_back(index[b]);
    missing_out_.push_back(column);
    out_[b] = column;
  }
  misses_ += missing_.size();
  if (!missing_.empty()) points_.squared_distances(points_.probes(missing_.data(), missing_.size()), missing_out_.data());
  return out_;
}

}  // namespace rebelboost::learner
