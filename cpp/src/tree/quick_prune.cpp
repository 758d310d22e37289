// Preliminary-error pruning of features inside one node (see quick_prune.hpp).
#include "tree/quick_prune.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <numeric>

#include "tree/histogram.hpp"
#include "tree/quick_driver.hpp"
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

namespace {

// The loss criterion (|L| + |R|, the binary losses' weighted error) for the schedule of quick_driver.hpp:
// errors are 2 E = T_m - (|L| + |R|) in exact integers, so "loses" is a plain comparison. Histograms and
// touched-bin bitmaps per feature live in QuickScratch (left all zero); with `heavy`, subset 0 is the
// cached rows, read as prefix sums in bin order (most features are pruned on them without a histogram).
class LossCriterion {
 public:
  using Bound = std::int64_t;
  static constexpr Bound kNone = std::numeric_limits<std::int64_t>::max();  // no candidate split at all
  struct Progress {
    std::size_t f;
    std::int64_t* h;
    std::uint64_t* bits;
    std::int64_t unchecked;  // mass added since the error was last computed: it grew by at most twice that
  };

  LossCriterion(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::uint32_t* rows,
                const std::int64_t* values, const std::vector<std::int64_t>& prefix, const std::vector<std::size_t>& bounds,
                QuickScratch& scratch, int n_threads, const HeavyRows* heavy, const std::int64_t* heavy_values)
      : X_(X), bins_(bins), rows_(rows), values_(values), prefix_(prefix), bounds_(bounds), scratch_(scratch),
        heavy_(heavy), heavy_values_(heavy_values), n_heavy_(heavy ? heavy->rows.size() : 0), results_(X.n_features) {
    if (scratch_.hists.size() != X.n_features * kHistBins) {
      scratch_.hists.assign(X.n_features * kHistBins, 0);
      scratch_.bits.assign(X.n_features * 4, 0);
    }
    if (heavy_) scratch_.cum.resize(static_cast<std::size_t>(util::resolve_threads(n_threads)) * (n_heavy_ + 1));
  }

  Bound first_subset(std::size_t f) {
    std::int64_t score;
    if (heavy_) {  // the cached rows alone (bounds[1] == 0)
      const std::int64_t* cum = cached_prefix(f);
      const std::uint32_t r0 = heavy_->run_begin[f], r1 = heavy_->run_begin[f + 1];
      score = best_split_score_runs(cum, &heavy_->run_bin[r0], &heavy_->run_end[r0], r1 - r0, bins_.n_value_bins(f),
                                    bins_.missing_bin());
    } else {
      const Progress p = progress(f);
      add_marked(X_.column(f), rows_, values_, bounds_[1], p.h, p.bits);
      score = best_split_score(p.h, p.bits, bins_.n_value_bins(f), bins_.missing_bin());
    }
    return score == std::numeric_limits<std::int64_t>::min() ? kNone : prefix_[bounds_[1]] - score;
  }

  static bool loses(Bound prelim, Bound best) { return prelim > best; }

  Progress start(std::size_t f) {
    Progress p = progress(f);
    if (heavy_) {  // subset 0 into the histogram (a re-read of the cached rows, not counted as work)
      const std::int64_t* cum = cached_prefix(f);
      std::size_t prev = 0;
      for (std::uint32_t r = heavy_->run_begin[f]; r < heavy_->run_begin[f + 1]; ++r) {
        const std::size_t end = heavy_->run_end[r];
        p.h[heavy_->run_bin[r]] = cum[end] - cum[prev];
        prev = end;
      }
      for (int w = 0; w < 4; ++w) p.bits[w] = heavy_->bits[f * 4 + static_cast<std::size_t>(w)];
    }
    return p;
  }

  void add(Progress& p, std::size_t j) {
    add_marked(X_.column(p.f), rows_ + bounds_[j], values_ + bounds_[j], bounds_[j + 1] - bounds_[j], p.h, p.bits);
    p.unchecked += prefix_[bounds_[j + 1]] - prefix_[bounds_[j]];
  }

  void refresh(Progress& p, std::size_t j, Bound& prelim, Bound best) {
    if (prelim != kNone && prelim + 2 * p.unchecked <= best) return;  // cannot lose yet: no rescan
    const std::int64_t score = best_split_score(p.h, p.bits, bins_.n_value_bins(p.f), bins_.missing_bin());
    if (score != std::numeric_limits<std::int64_t>::min()) prelim = prefix_[bounds_[j + 1]] - score;
    p.unchecked = 0;
  }

  bool complete(Progress& p, Bound& error) {
    SplitInfo& s = results_[p.f];
    s = best_split(p.h, bins_.n_value_bins(p.f), bins_.missing_bin(), static_cast<std::int32_t>(p.f));
    error = prefix_.back() - s.score;
    return s.found();
  }

  void release(Progress& p) { clear(p.h, p.bits); }
  void drop(std::size_t f) {
    if (heavy_) return;  // subset 0 was never written to the histogram
    const Progress p = progress(f);
    clear(p.h, p.bits);
  }
  static bool finish_in_bulk(const std::vector<std::size_t>&, std::vector<std::int64_t>&) { return false; }

  // The winner over features, by the strict order of split.hpp.
  SplitInfo winner() const { return best_of(results_); }

 private:
  Progress progress(std::size_t f) { return {f, &scratch_.hists[f * kHistBins], &scratch_.bits[f * 4], 0}; }

  // Prefix sums of the node's values on the cached rows in feature f's bin order (per-thread buffer).
  const std::int64_t* cached_prefix(std::size_t f) {
    const std::uint16_t* perm = &heavy_->perm[f * n_heavy_];
    std::int64_t* cum = &scratch_.cum[static_cast<std::size_t>(util::thread_index()) * (n_heavy_ + 1)];
    std::int64_t running = 0;
    cum[0] = 0;
    for (std::size_t i = 0; i < n_heavy_; ++i) {
      running += heavy_values_[perm[i]];
      cum[i + 1] = running;
    }
    return cum;
  }

  static void clear(std::int64_t* h, std::uint64_t* bits) {
    for (int w = 0; w < 4; ++w) {
      for (std::uint64_t word = bits[w]; word; word &= word - 1) h[64 * w + __builtin_ctzll(word)] = 0;
      bits[w] = 0;
    }
  }

  const data::BinnedMatrix& X_;
  const data::BinMapper& bins_;
  const std::uint32_t* rows_;
  const std::int64_t* values_;
  const std::vector<std::int64_t>& prefix_;
  const std::vector<std::size_t>& bounds_;
  QuickScratch& scratch_;
  const HeavyRows* heavy_;
  const std::int64_t* heavy_values_;
  std::size_t n_heavy_;
  std::vector<SplitInfo> results_;
};

}  // namespace

SplitInfo quick_best_split(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::uint32_t* rows,
                           const std::int64_t* values, std::size_t n, int n_threads, const QuickParams& params,
                           QuickWork& work, QuickScratch& scratch, const std::uint8_t* active_features,
                           const HeavyRows* heavy, const std::int64_t* heavy_values) {
  const std::size_t n_features = X.n_features;
  const std::size_t n_heavy = heavy ? heavy->rows.size() : 0;
  // The work record counts the node's rows: cached rows outside the node add zeros (a cost the wall
  // clock sees, not an accumulation of the node's data).
  // Masses T_m after subset 0 and m further rows: prefix[m] (prefix[0] = the cached rows' mass).
  std::size_t heavy_in_node = 0;
  std::int64_t heavy_mass = 0, node_sum = 0;
  for (std::size_t i = 0; i < n_heavy; ++i) {
    heavy_in_node += heavy_values[i] != 0;
    heavy_mass += abs64(heavy_values[i]);
    node_sum += heavy_values[i];
  }
  std::vector<std::int64_t> prefix(n + 1, heavy_mass);
  for (std::size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + abs64(values[i]);
  for (std::size_t i = 0; i < n; ++i) node_sum += values[i];
  // Subset 0 is the cached rows plus rows[0, bounds[1]): without a cache, the heaviest rows up to eta of
  // the mass. The rest of `rows` then forms M chunks of equal mass.
  const std::vector<std::size_t> bounds =
      chunk_bounds(prefix, heavy ? 0 : first_subset_end(prefix, params.eta), params.n_chunks);
  std::size_t n_active = n_features;
  if (active_features) n_active = static_cast<std::size_t>(std::count(active_features, active_features + n_features, 1));
  work.bin_accumulations += static_cast<std::int64_t>((heavy_in_node + bounds[1]) * n_active);
  LossCriterion c(X, bins, rows, values, prefix, bounds, scratch, n_threads, heavy, heavy_values);
  const int first_threads = util::threads_for(n_features * (bounds[1] + n_heavy + kHistBins), n_threads);
  run_quick_schedule(c, bounds, n_features, active_features, n_threads, first_threads, prefix[n] - abs64(node_sum), work);
  return c.winner();
}

}  // namespace rebelboost::tree
