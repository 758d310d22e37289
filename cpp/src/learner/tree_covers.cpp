// Node covers: each row adds its weight to the leaf it reaches; internal nodes merge their children's
// exact sums, so cover[node] is the correctly rounded total of the rows below it.
#include "learner/tree_covers.hpp"

#include <algorithm>

#include "util/exact_sum.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"

namespace rebelboost::learner {

namespace {

template <typename T>
std::uint32_t leaf_of(const Tree& tree, const T* x, std::ptrdiff_t stride) {
  std::uint32_t i = 0;
  for (;;) {
    const Node& n = tree.nodes[i];
    if (n.feature < 0) return i;
    const T v = x[static_cast<std::ptrdiff_t>(n.feature) * stride];
    const bool go_left = (v != v) ? (n.nan_left != 0) : (static_cast<double>(v) <= n.threshold);
    i = go_left ? n.left : n.right;
  }
}

}  // namespace

template <typename T>
std::vector<double> tree_covers(const Tree& tree, const MatrixView<T>& X, const double* sample_weight, int n_threads,
                                Reducer* reducer) {
  const std::size_t n_nodes = tree.nodes.size();
  // Blocks of fixed size: how many partial sums exist does not depend on the threads (nor would the
  // exact result if it did).
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  const int threads = util::threads_for(X.n_rows * static_cast<std::size_t>(1 + tree.depth()), n_threads);
  std::vector<util::ExactSum> sums = util::block_sums(X.n_rows, n_nodes, kBlock, threads,
                                                      [&](std::size_t r, util::ExactSum* s) {
    const T* x = X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride;
    s[leaf_of(tree, x, X.col_stride)].add(sample_weight ? sample_weight[r] : 1.0);
  });
  for (std::size_t i = n_nodes; i-- > 0;) {  // children have larger indices than their parent
    const Node& n = tree.nodes[i];
    if (n.feature < 0) continue;
    sums[i].merge(sums[n.left]);
    sums[i].merge(sums[n.right]);
  }
  return util::reduced_values(sums, reducer);
}

template std::vector<double> tree_covers<float>(const Tree&, const MatrixView<float>&, const double*, int, Reducer*);
template std::vector<double> tree_covers<double>(const Tree&, const MatrixView<double>&, const double*, int, Reducer*);

}  // namespace rebelboost::learner
