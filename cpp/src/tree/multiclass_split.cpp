// K-vector histograms by class block, then the exact joint split search of REBEL's first layer.
//
// Per feature group, the histograms of G features stay in cache while the rows stream past once:
//   for class block c: snapshot slot c, accumulate the block's vectors, W-[b][c] = slot c - snapshot
// (only class-c rows put weight in slot c as w-; every other row's slot c is its w+).
#include "tree/multiclass_split.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tree/histogram.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

namespace {

constexpr std::size_t kGroup = 8;    // features whose histograms share the cache
constexpr std::size_t kChunk = 512;  // rows whose vectors stay in L1 while the group sees them

// Losses within a relative 1e-10 count as equal: they differ only by fixed-point rounding (e.g. a
// weight-2 row vs the row twice), and the tie then goes to the lower feature / bin, so equivalent data
// gives the same tree.
constexpr double kTieTolerance = 1e-10;

bool clearly_less(double a, double b) { return a < b - kTieTolerance * std::fabs(b); }

bool better_root(const RootSplit& a, const RootSplit& b) {
  if (clearly_less(a.loss, b.loss)) return true;
  if (clearly_less(b.loss, a.loss)) return false;
  if (a.feature != b.feature) return a.feature < b.feature;
  if (a.bin != b.bin) return a.bin < b.bin;
  return !a.nan_left && b.nan_left;
}

double pair_loss(const std::int64_t* sp, const std::int64_t* sm, std::size_t K) {
  double s = 0.0;
  for (std::size_t k = 0; k < K; ++k) s += std::sqrt(static_cast<double>(sp[k]) * static_cast<double>(sm[k]));
  return s;
}

}  // namespace

void evaluate_multiclass_feature(const std::int64_t* wplus, const std::int64_t* wminus, std::size_t K,
                                 int n_value_bins, int missing_bin, std::int32_t feature, RootSplit& best) {
  std::vector<std::int64_t> tp(K, 0), tm(K, 0), lp(K, 0), lm(K, 0), sp(K), sm(K);
  for (int b = 0; b < n_value_bins; ++b)
    for (std::size_t k = 0; k < K; ++k) {
      tp[k] += wplus[static_cast<std::size_t>(b) * K + k];
      tm[k] += wminus[static_cast<std::size_t>(b) * K + k];
    }
  const std::int64_t* mp = wplus + static_cast<std::size_t>(missing_bin) * K;
  const std::int64_t* mm = wminus + static_cast<std::size_t>(missing_bin) * K;
  bool has_missing = false;
  for (std::size_t k = 0; k < K; ++k) has_missing = has_missing || mp[k] != 0 || mm[k] != 0;
  std::vector<std::int64_t> all_p(K), all_m(K);
  for (std::size_t k = 0; k < K; ++k) {
    all_p[k] = tp[k] + mp[k];
    all_m[k] = tm[k] + mm[k];
  }
  const double unsplit = pair_loss(all_p.data(), all_m.data(), K);
  best.loss_unsplit = unsplit;
  auto consider = [&](int bin, bool nan_left) {
    // left = value bins 0..bin (+ missing if nan_left): f = -1 there, +1 on the right.
    for (std::size_t k = 0; k < K; ++k) {
      const std::int64_t left_p = lp[k] + (nan_left ? mp[k] : 0), left_m = lm[k] + (nan_left ? mm[k] : 0);
      sp[k] = (all_p[k] - left_p) + left_m;
      sm[k] = (all_m[k] - left_m) + left_p;
    }
    RootSplit candidate;
    candidate.found = true;
    candidate.feature = feature;
    candidate.bin = bin;
    candidate.nan_left = nan_left;
    candidate.loss = pair_loss(sp.data(), sm.data(), K);
    candidate.loss_unsplit = unsplit;
    if (clearly_less(candidate.loss, unsplit) && (!best.found || better_root(candidate, best))) best = candidate;
  };
  for (int bin = 0; bin < n_value_bins; ++bin) {
    for (std::size_t k = 0; k < K; ++k) {
      lp[k] += wplus[static_cast<std::size_t>(bin) * K + k];
      lm[k] += wminus[static_cast<std::size_t>(bin) * K + k];
    }
    if (bin < n_value_bins - 1 || has_missing) consider(bin, false);
    if (has_missing && bin < n_value_bins - 1) consider(bin, true);
  }
}

RootSplit best_multiclass_root(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* v,
                               std::size_t K, const std::vector<std::size_t>& class_begin, int n_threads,
                               const std::uint8_t* active_features) {
  const std::size_t n_features = X.n_features;
  const std::size_t n_groups = (n_features + kGroup - 1) / kGroup;
  const std::size_t hist_size = static_cast<std::size_t>(kHistBins) * K;
  std::vector<RootSplit> per_feature(n_features);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_groups), n_threads, [&](std::ptrdiff_t g) {
    const std::size_t f0 = static_cast<std::size_t>(g) * kGroup;
    const std::size_t nf = std::min(kGroup, n_features - f0);
    // Two interleaved copies per feature (even / odd rows) so equal consecutive codes do not chain.
    std::vector<std::int64_t> sums(nf * 2 * hist_size, 0), minus(nf * hist_size, 0);
    for (std::size_t c = 0; c < K; ++c) {
      const std::size_t begin = class_begin[c], end = class_begin[c + 1];
      if (begin == end) continue;
      for (std::size_t j = 0; j < nf; ++j) {
        const std::int64_t* h = &sums[j * 2 * hist_size];
        for (int b = 0; b < kHistBins; ++b)
          minus[j * hist_size + static_cast<std::size_t>(b) * K + c] =
              h[static_cast<std::size_t>(b) * K + c] + h[hist_size + static_cast<std::size_t>(b) * K + c];
      }
      for (std::size_t chunk = begin; chunk < end; chunk += kChunk) {
        const std::size_t chunk_end = std::min(end, chunk + kChunk);
        for (std::size_t j = 0; j < nf; ++j) {
          if (active_features && !active_features[f0 + j]) continue;
          std::int64_t* h0 = &sums[j * 2 * hist_size];
          accumulate_vectors(X.column(f0 + j), v, chunk, chunk_end, K, h0, h0 + hist_size);
        }
      }
      // W-[b][c] = (slot c after the block) - (slot c before it).
      for (std::size_t j = 0; j < nf; ++j) {
        const std::int64_t* h = &sums[j * 2 * hist_size];
        for (int b = 0; b < kHistBins; ++b) {
          const std::size_t at = static_cast<std::size_t>(b) * K + c;
          minus[j * hist_size + at] = h[at] + h[hist_size + at] - minus[j * hist_size + at];
        }
      }
    }
    std::vector<std::int64_t> plus(hist_size);
    for (std::size_t j = 0; j < nf; ++j) {
      const std::int64_t* h = &sums[j * 2 * hist_size];
      const std::int64_t* m = &minus[j * hist_size];
      for (std::size_t at = 0; at < hist_size; ++at) plus[at] = h[at] + h[hist_size + at] - m[at];
      RootSplit best;
      if (active_features && !active_features[f0 + j]) continue;
      evaluate_multiclass_feature(plus.data(), m, K, bins.n_value_bins(f0 + j), bins.missing_bin(),
                                  static_cast<std::int32_t>(f0 + j), best);
      per_feature[f0 + j] = best;
    }
  });
  RootSplit winner;
  double unsplit = 0.0;  // the same for every searched feature (the node's totals)
  for (const RootSplit& r : per_feature) {
    if (r.loss_unsplit != 0.0) unsplit = r.loss_unsplit;
    if (r.found && (!winner.found || better_root(r, winner))) winner = r;
  }
  winner.loss_unsplit = unsplit;
  const std::size_t n_active =
      active_features ? static_cast<std::size_t>(std::count(active_features, active_features + n_features, 1)) : n_features;
  winner.bin_accumulations = static_cast<std::int64_t>(X.n_samples * n_active);
  return winner;
}

}  // namespace rebelboost::tree
