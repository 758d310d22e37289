// Layer-wise regression trees by the variance criterion (see regression_tree.hpp).
#include "tree/regression_tree.hpp"

#include <numeric>

#include "tree/histogram.hpp"
#include "tree/quick_impurity.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

double RegressionTree::output(const data::BinnedMatrix& X, std::size_t row) const {
  std::uint32_t i = 0;
  for (;;) {
    const RegressionNode& n = nodes[i];
    if (n.feature < 0) return n.value;
    const std::uint8_t code = X.column(static_cast<std::size_t>(n.feature))[row];
    const bool missing = code == missing_bin;
    i = (missing ? n.nan_left : code <= n.bin) ? n.left : n.right;
  }
}

namespace {

// The full scan of one node: every feature's (S, W) histograms, the best split by the tie rule.
SplitInfo full_scan(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::vector<std::uint32_t>& rows,
                    const std::int64_t* s, const std::int64_t* t, int n_threads, QuickWork& work) {
  std::vector<SplitInfo> best(X.n_features);
  const int threads = util::threads_for(rows.size() * X.n_features, n_threads);
  util::parallel_for(static_cast<std::ptrdiff_t>(X.n_features), threads, [&](std::ptrdiff_t fi) {
    const auto f = static_cast<std::size_t>(fi);
    std::int64_t h[2 * kHistBins] = {};
    const std::uint8_t* column = X.column(f);
    for (const std::uint32_t r : rows) {
      h[column[r]] += s[r];
      h[kHistBins + column[r]] += t[r];
    }
    best[f] = best_split_variance(h, h + kHistBins, bins.n_value_bins(f), bins.missing_bin(), static_cast<std::int32_t>(f));
  });
  work.bin_accumulations += static_cast<std::int64_t>(rows.size() * X.n_features);
  return best_of(best);
}

double leaf_value(const std::vector<std::uint32_t>& rows, const std::int64_t* s, const std::int64_t* t) {
  std::int64_t S = 0, W = 0;
  for (const std::uint32_t r : rows) {
    S += s[r];
    W += t[r];
  }
  return W > 0 ? static_cast<double>(S) / static_cast<double>(W) : 0.0;
}

}  // namespace

RegressionTree grow_regression_tree(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* s,
                                    const std::int64_t* t, int max_depth, bool quick, int n_threads,
                                    const QuickParams& params) {
  RegressionTree tree;
  tree.missing_bin = bins.missing_bin();
  std::vector<std::int64_t> mass(X.n_samples);
  for (std::size_t r = 0; r < X.n_samples; ++r) mass[r] = variance_mass(s[r], t[r]);
  std::vector<std::uint32_t> all(X.n_samples);
  std::iota(all.begin(), all.end(), 0u);
  tree.nodes.emplace_back();
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> open{{0u, std::move(all)}};
  for (int layer = 0; layer <= max_depth && !open.empty(); ++layer) {
    std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> next;
    for (auto& [node, rows] : open) {
      tree.nodes[node].value = leaf_value(rows, s, t);
      if (layer == max_depth || rows.size() < 2) continue;
      const SplitInfo split =
          quick ? quick_impurity_split(X, bins, ImpurityCriterion::kVariance, rows.data(), rows.size(), s, t, mass.data(),
                                       n_threads, params, tree.work)
                : full_scan(X, bins, rows, s, t, n_threads, tree.work);
      if (!split.found()) continue;
      const auto left = static_cast<std::uint32_t>(tree.nodes.size());
      RegressionNode& n = tree.nodes[node];
      n = {split.feature, split.bin, split.nan_left, left, left + 1, 0.0, split.gini_gain, 0};
      tree.nodes.emplace_back();
      tree.nodes.emplace_back();
      std::vector<std::uint32_t> go_left, go_right;
      const std::uint8_t* column = X.column(static_cast<std::size_t>(split.feature));
      for (const std::uint32_t r : rows) {
        const bool missing = column[r] == bins.missing_bin();
        ((missing ? split.nan_left : column[r] <= split.bin) ? go_left : go_right).push_back(r);
      }
      next.emplace_back(left, std::move(go_left));
      next.emplace_back(left + 1, std::move(go_right));
    }
    open = std::move(next);
  }
  return tree;
}

}  // namespace rebelboost::tree
