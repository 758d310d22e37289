// Preliminary-error pruning of features inside one node (see quick_prune.hpp).
#include "tree/quick_prune.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>

#include "tree/histogram.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

void HeavyRows::build(const data::BinnedMatrix& X, std::vector<std::uint32_t> new_rows, int n_threads) {
  std::sort(new_rows.begin(), new_rows.end());
  rows = std::move(new_rows);
  const std::size_t m = rows.size();
  const std::size_t n_features = X.n_features;
  perm.resize(n_features * m);
  bits.assign(n_features * 4, 0);
  member.assign(X.n_samples, 0);
  for (const std::uint32_t r : rows) member[r] = 1;
  std::vector<std::uint16_t> counts(n_features * kHistBins);  // per feature, rows per bin
  const int threads = util::threads_for(n_features * (2 * m + kHistBins), n_threads);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_features), threads, [&](std::ptrdiff_t fi) {
    const auto f = static_cast<std::size_t>(fi);
    const std::uint8_t* column = X.column(f);
    std::uint16_t* count = &counts[f * kHistBins];
    std::uint16_t start[kHistBins];
    for (std::size_t i = 0; i < m; ++i) ++count[column[rows[i]]];
    std::uint16_t offset = 0;
    for (int b = 0; b < kHistBins; ++b) {
      start[b] = offset;
      offset = static_cast<std::uint16_t>(offset + count[b]);
      if (count[b]) bits[f * 4 + static_cast<std::size_t>(b >> 6)] |= std::uint64_t{1} << (b & 63);
    }
    std::uint16_t* out = &perm[f * m];
    for (std::size_t i = 0; i < m; ++i) out[start[column[rows[i]]]++] = static_cast<std::uint16_t>(i);
  });
  run_begin.assign(n_features + 1, 0);
  for (std::size_t f = 0; f < n_features; ++f) {
    std::uint32_t runs = 0;
    for (int w = 0; w < 4; ++w) runs += static_cast<std::uint32_t>(__builtin_popcountll(bits[f * 4 + static_cast<std::size_t>(w)]));
    run_begin[f + 1] = run_begin[f] + runs;
  }
  run_bin.resize(run_begin[n_features]);
  run_end.resize(run_begin[n_features]);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_features), threads, [&](std::ptrdiff_t fi) {
    const auto f = static_cast<std::size_t>(fi);
    const std::uint16_t* count = &counts[f * kHistBins];
    std::size_t r = run_begin[f];
    std::uint16_t end = 0;
    for (int b = 0; b < kHistBins; ++b) {
      if (!count[b]) continue;
      end = static_cast<std::uint16_t>(end + count[b]);
      run_bin[r] = static_cast<std::uint8_t>(b);
      run_end[r] = end;
      ++r;
    }
  });
}

void HeavyRows::clear() {
  rows.clear();
  perm.clear();
  run_begin.clear();
  run_bin.clear();
  run_end.clear();
  bits.clear();
  member.clear();
}

void order_by_weight(const std::uint32_t* rows, std::size_t n, const std::int64_t* q, std::vector<std::uint32_t>& out_rows,
                     std::vector<std::int64_t>& out_values, const std::uint8_t* skip) {
  // Bucket 63 - clz(|q|): rows within a factor 2 of each other share a bucket; buckets heaviest first.
  std::size_t count[65] = {};
  auto bucket = [&](std::uint32_t row) -> int {
    const std::int64_t v = q[row];
    if (v == 0 || (skip && skip[row])) return 64;
    return 63 - __builtin_clzll(static_cast<std::uint64_t>(abs64(v)));
  };
  for (std::size_t i = 0; i < n; ++i) ++count[bucket(rows[i])];
  std::size_t start[65];
  std::size_t offset = 0;
  for (int b = 63; b >= 0; --b) {
    start[b] = offset;
    offset += count[b];
  }
  out_rows.resize(offset);
  out_values.resize(offset);
  for (std::size_t i = 0; i < n; ++i) {
    const int b = bucket(rows[i]);
    if (b == 64) continue;
    const std::size_t at = start[b]++;
    out_rows[at] = rows[i];
    out_values[at] = q[rows[i]];
  }
}

double estimate_mass90_fraction(const std::uint32_t* rows, std::size_t n, const std::int64_t* q) {
  return estimate_mass_fraction(rows, n, q, 0.9);
}

double estimate_mass_fraction(const std::uint32_t* rows, std::size_t n, const std::int64_t* q, double mass_share) {
  if (n == 0) return 1.0;
  const std::size_t stride = std::max<std::size_t>(1, n / 2048);
  double count[64] = {}, mass[64] = {};
  double total_mass = 0.0, total_count = 0.0;
  for (std::size_t i = 0; i < n; i += stride) {
    const std::int64_t v = abs64(q[rows[i]]);
    total_count += 1.0;
    if (v == 0) continue;
    const int b = 63 - __builtin_clzll(static_cast<std::uint64_t>(v));
    count[b] += 1.0;
    mass[b] += static_cast<double>(v);
    total_mass += static_cast<double>(v);
  }
  if (total_mass <= 0.0) return 1.0;
  const double target = mass_share * total_mass;
  double m = 0.0, c = 0.0;
  for (int b = 63; b >= 0; --b) {
    if (m + mass[b] >= target) return (c + count[b] * (target - m) / mass[b]) / total_count;
    m += mass[b];
    c += count[b];
  }
  return 1.0;
}

std::vector<std::size_t> chunk_bounds(const std::vector<std::int64_t>& prefix, std::size_t first, int n_chunks) {
  const std::size_t n = prefix.size() - 1;
  const std::int64_t total = prefix[n];
  std::vector<std::size_t> bounds{0, first};
  const std::int64_t base = prefix[first];
  for (int j = 1; j <= n_chunks; ++j) {
    const auto target = base + static_cast<std::int64_t>(static_cast<double>(total - base) * j / n_chunks);
    std::size_t m = static_cast<std::size_t>(std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin());
    m = j == n_chunks ? n : std::min(m, n);
    if (m > bounds.back()) bounds.push_back(m);
  }
  if (bounds.back() != n) bounds.push_back(n);
  return bounds;
}

std::size_t first_subset_end(const std::vector<std::int64_t>& prefix, double eta) {
  const std::size_t n = prefix.size() - 1;
  const auto target = static_cast<std::int64_t>(eta * static_cast<double>(prefix[n]));
  return std::min(n, static_cast<std::size_t>(std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin()));
}

namespace {

// |L| + |R| of the candidates at one threshold (value bins up to it on the left, `left` their sum): NaN
// right, and NaN left unless the threshold is after the last value bin.
inline std::int64_t threshold_score(std::int64_t left, std::int64_t values_total, std::int64_t missing, bool last_bin) {
  const std::int64_t right = values_total - left;
  const std::int64_t nan_right = abs64(left) + abs64(right + missing);
  return last_bin ? nan_right : std::max(nan_right, abs64(left + missing) + abs64(right));
}

// The candidates with no value bin on the left (only NaN there, or nothing): they count for the bound.
inline std::int64_t empty_left_score(std::int64_t values_total, std::int64_t missing, int n_value_bins) {
  if (n_value_bins < 2) return abs64(values_total) + abs64(missing);  // only "values left, NaN right"
  return std::max(abs64(values_total + missing), abs64(missing) + abs64(values_total));
}

// The same maximum by a plain scan of every bin (faster once many bins are non-empty).
std::int64_t best_split_score_dense(const std::int64_t* hist, int n_value_bins, int missing_bin) {
  std::int64_t values_total = 0;
  for (int b = 0; b < n_value_bins; ++b) values_total += hist[b];
  const std::int64_t missing = hist[missing_bin];
  std::int64_t best = std::numeric_limits<std::int64_t>::min(), left = 0;
  for (int bin = 0; bin < n_value_bins; ++bin) {
    left += hist[bin];
    best = std::max(best, threshold_score(left, values_total, missing, bin == n_value_bins - 1));
  }
  return best;
}

}  // namespace

std::int64_t best_split_score(const std::int64_t* hist, const std::uint64_t* bits, int n_value_bins, int missing_bin) {
  int touched = 0;
  for (int w = 0; w < 4; ++w) touched += __builtin_popcountll(bits[w]);
  if (touched > 64) return best_split_score_dense(hist, n_value_bins, missing_bin);
  // Every candidate the full search may take, whatever the subset holds: a split valid on the full node
  // (e.g. one that isolates NaN, absent from the first rows) must keep a counterpart here, or the bound
  // would not hold. Extra candidates only lower the preliminary error, which keeps pruning safe. An empty
  // bin leaves the left sum as it was, so the candidates at the non-empty bins (and at "nothing on the
  // left") cover all of them.
  std::int64_t values_total = 0;
  for (int w = 0; w < 4; ++w)
    for (std::uint64_t word = bits[w]; word; word &= word - 1) {
      const int b = 64 * w + __builtin_ctzll(word);
      if (b < n_value_bins) values_total += hist[b];
    }
  const std::int64_t missing = hist[missing_bin];
  std::int64_t best = empty_left_score(values_total, missing, n_value_bins);
  std::int64_t left = 0;
  for (int w = 0; w < 4; ++w)
    for (std::uint64_t word = bits[w]; word; word &= word - 1) {
      const int bin = 64 * w + __builtin_ctzll(word);
      if (bin >= n_value_bins) continue;
      left += hist[bin];
      best = std::max(best, threshold_score(left, values_total, missing, bin == n_value_bins - 1));
    }
  return best;
}

namespace {

// best_split_score() of the cached rows, from their prefix sums in bin order (cum[i] = sum of the first i
// values; run r of bin run_bins[r] ends at run_ends[r]): the same candidates, no histogram reads.
std::int64_t best_split_score_runs(const std::int64_t* cum, const std::uint8_t* run_bins, const std::uint16_t* run_ends,
                                   std::size_t n_runs, int n_value_bins, int missing_bin) {
  // Bins ascend and the missing bin is the highest code, so it can only be the last run.
  std::size_t n_value_runs = n_runs;
  std::int64_t missing = 0;
  if (n_runs > 0 && run_bins[n_runs - 1] == missing_bin) {
    --n_value_runs;
    missing = cum[run_ends[n_runs - 1]] - (n_value_runs ? cum[run_ends[n_value_runs - 1]] : 0);
  }
  const std::int64_t values_total = n_value_runs ? cum[run_ends[n_value_runs - 1]] : 0;
  std::int64_t best = empty_left_score(values_total, missing, n_value_bins);
  for (std::size_t r = 0; r < n_value_runs; ++r)
    best = std::max(best, threshold_score(cum[run_ends[r]], values_total, missing, run_bins[r] == n_value_bins - 1));
  return best;
}

// hist[column[rows[i]]] += values[i], marking the touched bins (the pruned pass visits few rows).
void add_marked(const std::uint8_t* column, const std::uint32_t* rows, const std::int64_t* values, std::size_t n,
                std::int64_t* hist, std::uint64_t* bits) {
  if (n >= 1024) {  // big chunks: the interleaved kernel, and every bin counts as touched
    accumulate_gather(column, rows, values, n, hist);
    for (int w = 0; w < 4; ++w) bits[w] = ~std::uint64_t{0};
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t c = column[rows[i]];
    hist[c] += values[i];
    bits[c >> 6] |= std::uint64_t{1} << (c & 63);
  }
}

}  // namespace

SplitInfo quick_best_split(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::uint32_t* rows,
                           const std::int64_t* values, std::size_t n, int n_threads, const QuickParams& params,
                           QuickWork& work, QuickScratch& scratch, const std::uint8_t* active_features,
                           const HeavyRows* heavy, const std::int64_t* heavy_values) {
  const std::size_t n_features = X.n_features;
  const int missing = bins.missing_bin();
  const std::size_t n_heavy = heavy ? heavy->rows.size() : 0;
  // The work record counts the node's rows: cached rows outside the node add zeros (a cost the wall
  // clock sees, not an accumulation of the node's data).
  // Masses T_m after the first subset and m further rows: prefix[m] (prefix[0] = the cached rows' mass).
  std::size_t heavy_in_node = 0;
  std::int64_t heavy_mass = 0, node_sum = 0;
  for (std::size_t i = 0; i < n_heavy; ++i) {
    heavy_in_node += heavy_values[i] != 0;
    heavy_mass += abs64(heavy_values[i]);
    node_sum += heavy_values[i];
  }
  std::vector<std::int64_t> prefix(n + 1, heavy_mass);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + abs64(values[i]);
  const std::int64_t total_mass = prefix[n];
  for (std::size_t i = 0; i < n; ++i) node_sum += values[i];
  // Subset 0 is the cached rows plus rows[0, bounds[1]): without a cache, the heaviest rows up to eta of
  // the mass. The rest of `rows` then forms M chunks of equal mass.
  const std::vector<std::size_t> bounds = chunk_bounds(prefix, heavy ? 0 : first_subset_end(prefix, params.eta), params.n_chunks);

  // First subset for every feature: its preliminary error. From the cache, the histogram is not written
  // yet (most features are pruned on this error alone); a feature that goes on fills it first.
  if (scratch.hists.size() != n_features * kHistBins) {
    scratch.hists.assign(n_features * kHistBins, 0);
    scratch.bits.assign(n_features * 4, 0);
  }
  std::int64_t* hists = scratch.hists.data();
  const std::size_t n_scratch_threads = static_cast<std::size_t>(util::resolve_threads(n_threads));
  if (heavy) scratch.cum.resize(n_scratch_threads * (n_heavy + 1));
  // Prefix sums of the node's values on the cached rows in feature f's bin order.
  auto cached_prefix = [&](std::size_t f) {
    const std::uint16_t* perm = &heavy->perm[f * n_heavy];
    std::int64_t* cum = &scratch.cum[static_cast<std::size_t>(util::thread_index()) * (n_heavy + 1)];
    std::int64_t running = 0;
    cum[0] = 0;
    for (std::size_t i = 0; i < n_heavy; ++i) {
      running += heavy_values[perm[i]];
      cum[i + 1] = running;
    }
    return cum;
  };
  std::vector<std::int64_t> err2(n_features);  // 2 E_f(m) = T_m - best score
  const int first_threads = util::threads_for(n_features * (bounds[1] + n_heavy + kHistBins), n_threads);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_features), first_threads, [&](std::ptrdiff_t fi) {
    const auto f = static_cast<std::size_t>(fi);
    if (active_features && !active_features[f]) {  // not searched this iteration (LazyBoost)
      err2[f] = std::numeric_limits<std::int64_t>::max();
      return;
    }
    std::int64_t score;
    if (heavy) {  // the cached rows alone (bounds[1] == 0)
      const std::int64_t* cum = cached_prefix(f);
      const std::uint32_t r0 = heavy->run_begin[f], r1 = heavy->run_begin[f + 1];
      score = best_split_score_runs(cum, &heavy->run_bin[r0], &heavy->run_end[r0], r1 - r0, bins.n_value_bins(f), missing);
    } else {
      std::int64_t* h = &hists[f * kHistBins];
      std::uint64_t* bits = &scratch.bits[f * 4];
      add_marked(X.column(f), rows, values, bounds[1], h, bits);
      score = best_split_score(h, bits, bins.n_value_bins(f), missing);
    }
    err2[f] = score == std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::max()
                                                                : prefix[bounds[1]] - score;
  });
  std::size_t n_active = n_features;
  if (active_features) n_active = static_cast<std::size_t>(std::count(active_features, active_features + n_features, 1));
  work.bin_accumulations += static_cast<std::int64_t>((heavy_in_node + bounds[1]) * n_active);

  // Finishing a feature: the M chunks, pruned as soon as its preliminary error exceeds the best complete
  // error known at that moment (the unsplit node's error to begin with). Any bound at least the final best
  // is safe, so the shared bound may lag between threads: the work done varies with timing, the winner
  // never does. The histogram is left all zero afterwards.
  std::atomic<std::int64_t> best_err2{total_mass - abs64(node_sum)};
  std::vector<SplitInfo> results(n_features);
  std::vector<std::int64_t> done(n_features, 0);
  std::vector<std::uint8_t> pruned(n_features, 0);
  auto clear = [&](std::size_t f) {
    std::int64_t* h = &hists[f * kHistBins];
    std::uint64_t* bits = &scratch.bits[f * 4];
    for (int w = 0; w < 4; ++w) {
      for (std::uint64_t word = bits[w]; word; word &= word - 1) h[64 * w + __builtin_ctzll(word)] = 0;
      bits[w] = 0;
    }
  };
  auto finish = [&](std::size_t f) {
    std::int64_t* h = &hists[f * kHistBins];
    std::uint64_t* bits = &scratch.bits[f * 4];
    const int n_value_bins = bins.n_value_bins(f);
    if (heavy) {  // the first subset into the histogram (a re-read of the cached rows, not counted as work)
      const std::int64_t* cum = cached_prefix(f);
      std::size_t prev = 0;
      for (std::uint32_t r = heavy->run_begin[f]; r < heavy->run_begin[f + 1]; ++r) {
        const std::size_t end = heavy->run_end[r];
        h[heavy->run_bin[r]] = cum[end] - cum[prev];
        prev = end;
      }
      for (int w = 0; w < 4; ++w) bits[w] = heavy->bits[f * 4 + static_cast<std::size_t>(w)];
    }
    std::int64_t e2 = err2[f];
    std::int64_t unchecked = 0;  // mass added since e2 was last computed: e2 grew by at most twice that
    std::int64_t rows_done = 0;
    for (std::size_t j = 1; j + 1 < bounds.size(); ++j) {
      const std::int64_t bound = best_err2.load(std::memory_order_relaxed);
      if (e2 > bound) {
        pruned[f] = 1;
        break;
      }
      add_marked(X.column(f), rows + bounds[j], values + bounds[j], bounds[j + 1] - bounds[j], h, bits);
      rows_done += static_cast<std::int64_t>(bounds[j + 1] - bounds[j]);
      unchecked += prefix[bounds[j + 1]] - prefix[bounds[j]];
      // Rescan only when the error could now exceed the bound.
      if (e2 != std::numeric_limits<std::int64_t>::max() && e2 + 2 * unchecked <= bound) continue;
      const std::int64_t score = best_split_score(h, bits, n_value_bins, missing);
      if (score != std::numeric_limits<std::int64_t>::min()) e2 = prefix[bounds[j + 1]] - score;
      unchecked = 0;
    }
    done[f] = rows_done;
    if (!pruned[f]) {
      results[f] = best_split(h, n_value_bins, missing, static_cast<std::int32_t>(f));
      if (results[f].found()) {
        const std::int64_t e = total_mass - results[f].score;
        std::int64_t current = best_err2.load(std::memory_order_relaxed);
        while (e < current && !best_err2.compare_exchange_weak(current, e, std::memory_order_relaxed)) {
        }
      }
    }
    clear(f);
  };

  // The feature with the best preliminary error first, alone: its complete error bounds all others, most
  // of which are then pruned without being dispatched at all. A feature without any candidate split
  // (error "max") is finished, which drops it.
  std::vector<std::size_t> order = finishing_order(err2, active_features);
  if (!order.empty()) finish(order[0]);
  const std::int64_t lead_bound = best_err2.load(std::memory_order_relaxed);
  std::vector<std::size_t> survivors, dropped;
  for (std::size_t k = 1; k < order.size(); ++k) {
    const std::size_t f = order[k];
    if (err2[f] != std::numeric_limits<std::int64_t>::max() && err2[f] > lead_bound) {
      pruned[f] = 1;
      if (!heavy) dropped.push_back(f);  // its histogram holds the first subset
    } else {
      survivors.push_back(f);
    }
  }
  util::parallel_for(static_cast<std::ptrdiff_t>(survivors.size()), finishing_threads(survivors.size(), n_threads),
                     [&](std::ptrdiff_t k) { finish(survivors[static_cast<std::size_t>(k)]); }, /*dynamic=*/true);
  util::parallel_for(static_cast<std::ptrdiff_t>(dropped.size()), util::threads_for(dropped.size() * kHistBins, n_threads),
                     [&](std::ptrdiff_t k) { clear(dropped[static_cast<std::size_t>(k)]); });
  SplitInfo winner;
  for (std::size_t f = 0; f < n_features; ++f) {  // a strict total order: the same winner for any timing
    work.bin_accumulations += done[f];
    work.features_pruned += pruned[f];
    const SplitInfo& s = results[f];
    if (s.found() && (!winner.found() || better(s, winner))) winner = s;
  }
  return winner;
}

}  // namespace rebelboost::tree
