// K-vector gradient histograms per feature, then the Newton gain of every candidate root split.
#include "tree/newton_root.hpp"

#include <algorithm>
#include <limits>

#include "tree/histogram.hpp"
#include "tree/split.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"

namespace rebelboost::tree {

namespace {

constexpr std::size_t kGroup = 8;              // features whose histograms share one pass over the rows
constexpr std::size_t kChunk = 512;            // rows whose gradients stay in cache while the group sees them
constexpr std::size_t kBlockBytes = 64 << 20;  // histograms held at once (features per block follow)

// hist[j][b * K + k] += G_nk over the rows, for features f0 .. f0 + nf - 1 (zeroed first).
void build_group(const data::BinnedMatrix& X, const std::int64_t* G, std::size_t K, std::size_t f0, std::size_t nf,
                 const std::uint8_t* active_features, std::int64_t* hist) {
  const std::size_t hist_size = static_cast<std::size_t>(kHistBins) * K;
  std::fill(hist, hist + nf * hist_size, 0);
  for (std::size_t begin = 0; begin < X.n_samples; begin += kChunk) {
    const std::size_t end = std::min(X.n_samples, begin + kChunk);
    for (std::size_t j = 0; j < nf; ++j) {
      if (active_features && !active_features[f0 + j]) continue;
      const std::uint8_t* codes = X.column(f0 + j);
      std::int64_t* h = hist + j * hist_size;
      for (std::size_t i = begin; i < end; ++i) {
        std::int64_t* slot = h + static_cast<std::size_t>(codes[i]) * K;
        const std::int64_t* g = G + i * K;
        for (std::size_t k = 0; k < K; ++k) slot[k] += g[k];
      }
    }
  }
}

// sum_k D_k^2 / h_k for D = T - 2 L (classes with h_k = 0 have D_k = 0 and add nothing).
long double newton_gain(const std::int64_t* total, const std::int64_t* left, const std::vector<long double>& inv_h) {
  long double gain = 0.0L;
  for (std::size_t k = 0; k < inv_h.size(); ++k) {
    const long double d = static_cast<long double>(total[k] - 2 * left[k]);
    gain += d * d * inv_h[k];
  }
  return gain;
}

// The best split of one feature (found == false unless its gain is strictly above the unsplit node's).
RootSplit best_of_feature(const std::int64_t* hist, const std::vector<long double>& inv_h, int n_value_bins,
                          int missing_bin, std::int32_t feature) {
  const std::size_t K = inv_h.size();
  std::vector<std::int64_t> total(K, 0), left(K, 0), with_nan(K);
  const std::int64_t* missing = hist + static_cast<std::size_t>(missing_bin) * K;
  bool has_missing = false;
  for (std::size_t k = 0; k < K; ++k) has_missing = has_missing || missing[k] != 0;
  for (int b = 0; b < n_value_bins; ++b)
    for (std::size_t k = 0; k < K; ++k) total[k] += hist[static_cast<std::size_t>(b) * K + k];
  for (std::size_t k = 0; k < K; ++k) total[k] += missing[k];
  const std::vector<std::int64_t> none(K, 0);
  const long double unsplit = newton_gain(total.data(), none.data(), inv_h);
  RootSplit best;
  long double best_gain = unsplit;
  auto consider = [&](int bin, bool nan_left, const std::int64_t* l) {
    const long double gain = newton_gain(total.data(), l, inv_h);
    if (gain > best_gain) {  // bins ascend, NaN right before left: the first of equal gains stays
      best_gain = gain;
      best.found = true;
      best.feature = feature;
      best.bin = bin;
      best.nan_left = nan_left;
    }
  };
  for (int bin = 0; bin < n_value_bins; ++bin) {
    for (std::size_t k = 0; k < K; ++k) left[k] += hist[static_cast<std::size_t>(bin) * K + k];
    if (bin < n_value_bins - 1 || has_missing) consider(bin, false, left.data());
    if (has_missing && bin < n_value_bins - 1) {
      for (std::size_t k = 0; k < K; ++k) with_nan[k] = left[k] + missing[k];
      consider(bin, true, with_nan.data());
    }
  }
  best.precise_loss = -best_gain;
  best.loss = static_cast<double>(-best_gain);
  best.loss_unsplit = static_cast<double>(-unsplit);
  return best;
}

}  // namespace

RootSplit best_newton_root(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* G,
                           const std::vector<std::int64_t>& curvature, std::size_t K, int n_threads,
                           const std::uint8_t* active_features, Reducer* reducer) {
  std::vector<long double> inv_h(K, 0.0L);
  for (std::size_t k = 0; k < K; ++k)
    if (curvature[k] > 0) inv_h[k] = 1.0L / static_cast<long double>(curvature[k]);
  const std::size_t n_features = X.n_features, hist_size = static_cast<std::size_t>(kHistBins) * K;
  const std::size_t per_block = std::max<std::size_t>(
      kGroup, kBlockBytes / (hist_size * sizeof(std::int64_t)) / kGroup * kGroup);
  std::vector<RootSplit> per_feature(n_features);
  std::vector<std::int64_t> hist;
  const int threads = util::threads_for(X.n_samples * std::min(n_features, per_block) * K, n_threads);
  for (std::size_t b0 = 0; b0 < n_features; b0 += per_block) {
    const std::size_t nb = std::min(per_block, n_features - b0);
    hist.assign(nb * hist_size, 0);
    const auto n_groups = static_cast<std::ptrdiff_t>((nb + kGroup - 1) / kGroup);
    util::parallel_for(n_groups, threads, [&](std::ptrdiff_t g) {
      const std::size_t j0 = static_cast<std::size_t>(g) * kGroup;
      build_group(X, G, K, b0 + j0, std::min(kGroup, nb - j0), active_features, &hist[j0 * hist_size]);
    });
    util::reduce_counts(hist.data(), hist.size(), reducer);
    util::parallel_for(static_cast<std::ptrdiff_t>(nb), threads, [&](std::ptrdiff_t j) {
      const std::size_t f = b0 + static_cast<std::size_t>(j);
      if (active_features && !active_features[f]) return;
      per_feature[f] = best_of_feature(&hist[static_cast<std::size_t>(j) * hist_size], inv_h, bins.n_value_bins(f),
                                       bins.missing_bin(), static_cast<std::int32_t>(f));
    });
  }
  RootSplit winner;
  std::size_t n_active = 0;
  for (std::size_t f = 0; f < n_features; ++f) {
    if (active_features && !active_features[f]) continue;
    ++n_active;
    const RootSplit& c = per_feature[f];
    winner.loss_unsplit = c.loss_unsplit;
    if (c.found && (!winner.found || c.precise_loss < winner.precise_loss)) {  // features ascend: ties stay
      const double unsplit = winner.loss_unsplit;
      winner = c;
      winner.loss_unsplit = unsplit;
    }
  }
  winner.bin_accumulations = static_cast<std::int64_t>(X.n_samples * n_active);
  return winner;
}

}  // namespace rebelboost::tree
