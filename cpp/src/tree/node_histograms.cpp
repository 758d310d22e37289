// A budgeted pool of per-leaf histogram buffers and the exact sibling subtraction.
#include "tree/node_histograms.hpp"

#include <algorithm>

#include "tree/histogram.hpp"

namespace rebelboost::tree {

HistogramPool::HistogramPool(std::size_t n_features, int n_parts, std::size_t budget_bytes)
    : n_features_(n_features), stride_(static_cast<std::size_t>(n_parts) * kHistBins), n_parts_(n_parts) {
  const std::size_t bytes = std::max<std::size_t>(1, n_features * stride_ * sizeof(std::int64_t));
  max_buffers_ = budget_bytes / bytes;
}

int HistogramPool::acquire() {
  if (!free_.empty()) {
    const int id = free_.back();
    free_.pop_back();
    return id;
  }
  if (buffers_.size() >= max_buffers_) return -1;
  buffers_.emplace_back(new std::int64_t[n_features_ * stride_]);
  return static_cast<int>(buffers_.size()) - 1;
}

void HistogramPool::release(int id) {
  if (id >= 0) free_.push_back(id);
}

void HistogramPool::release_all() {
  free_.clear();
  // Highest id last out: the same buffers serve the same leaves tree after tree.
  for (int id = static_cast<int>(buffers_.size()) - 1; id >= 0; --id) free_.push_back(id);
}

void subtract_histogram(std::int64_t* parent, const std::int64_t* child, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) parent[i] -= child[i];
}

void negate_histogram(std::int64_t* hist, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) hist[i] = -hist[i];
}

}  // namespace rebelboost::tree
