// A regression tree's leaf values for runs of rows of the binned training matrix, in row order
// (docs/guide/regression.md, the passes per tree): the loss's update pass takes each run's outputs as it goes, so no
// array of outputs over all rows is written and read again, and no scatter through the rows' partition.
//
// Every split's rule is evaluated for every row of a run and the leaf found by byte selects from the
// deepest splits up (one sequential pass per split over its column's codes, which the compiler vectorises):
// the leaf that RegressionTree::output gives, so the values are the tree's, bit for bit. For small trees
// only (fits()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/binned_matrix.hpp"
#include "tree/regression_tree.hpp"

namespace rebelboost::tree {

class BinnedLeaves {
 public:
  BinnedLeaves() = default;
  // Whether the tree is small enough (at most 31 splits): larger ones cost more per row than the grower's
  // scatter through its partition (VarianceGrower::outputs).
  static bool fits(const RegressionTree& tree);
  // A tree that fits; the matrix must outlive this object (it keeps pointers to its columns).
  BinnedLeaves(const RegressionTree& tree, const data::BinnedMatrix& X);

  // f[i - begin] = the value of the leaf that holds row i, for i in [begin, end).
  void values(std::size_t begin, std::size_t end, double* f) const;

 private:
  struct Split {  // an internal node: code <= bin goes left, the missing code to the NaN side
    const std::uint8_t* column;
    std::uint8_t bin;
    bool nan_left;
    std::uint32_t left, right;  // child slots: a split's index in splits_, or kLeaf + a leaf's index in values_
  };
  static constexpr std::uint32_t kLeaf = std::uint32_t{1} << 31;
  void select(std::size_t begin, std::size_t end, double* f) const;

  std::uint8_t missing_ = 0;
  std::vector<Split> splits_;   // the internal nodes, parents before children (the root first)
  std::vector<double> values_;  // the leaves' values
};

}  // namespace rebelboost::tree
