// Histograms of every feature for the leaves of one layer, kept so that the next layer can take a
// sibling as parent - child: exact, because every slot is an int64 fixed-point sum (docs/design/determinism.md).
//
//   buffer: [ feature 0: n_parts x kHistBins ][ feature 1 ] ... [ feature F-1 ]
//
// n_parts is 1 (the split values q) or 2 (Gini: class 0's values, then class 1's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rebelboost::tree {

class HistogramPool {
 public:
  // At most budget_bytes of buffers exist at once; they are recycled across layers and trees, so a fit
  // allocates (and page-faults) them once.
  static constexpr std::size_t kDefaultBudget = std::size_t{256} << 20;
  HistogramPool(std::size_t n_features, int n_parts, std::size_t budget_bytes = kDefaultBudget);

  // A free buffer's id, or -1 when one more buffer would pass the budget. Its contents are undefined.
  int acquire();
  void release(int id);
  void release_all();
  std::int64_t* at(int id, std::size_t feature) { return buffers_[static_cast<std::size_t>(id)].get() + feature * stride_; }
  std::size_t stride() const { return stride_; }  // slots per feature: n_parts x kHistBins
  int n_parts() const { return n_parts_; }

 private:
  std::size_t n_features_;
  std::size_t stride_;
  int n_parts_;
  std::size_t max_buffers_;
  std::vector<std::unique_ptr<std::int64_t[]>> buffers_;
  std::vector<int> free_;
};

// parent[i] -= child[i] for i in [0, n): the parent's histogram becomes the sibling's, exactly.
void subtract_histogram(std::int64_t* parent, const std::int64_t* child, std::size_t n);

// hist[i] = -hist[i]: histograms of values that changed sign.
void negate_histogram(std::int64_t* hist, std::size_t n);

}  // namespace rebelboost::tree
