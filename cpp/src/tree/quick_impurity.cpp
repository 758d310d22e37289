// The impurity criteria's pruned pass (see quick_impurity.hpp).
#include "tree/quick_impurity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "tree/feature_groups.hpp"
#include "tree/histogram.hpp"
#include "tree/impurity_bound.hpp"
#include "tree/mass_segments.hpp"
#include "tree/quick_driver.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

SplitInfo impurity_split(ImpurityCriterion criterion, const std::int64_t* sums, const std::int64_t* weights,
                         int n_value_bins, int missing_bin, std::int32_t feature, std::int64_t min_side_weight) {
  switch (criterion) {
    case ImpurityCriterion::kGini: return best_split_gini(sums, weights, n_value_bins, missing_bin, feature);
    case ImpurityCriterion::kEntropy: return best_split_entropy(sums, weights, n_value_bins, missing_bin, feature);
    case ImpurityCriterion::kVariance: return best_split_variance(sums, weights, n_value_bins, missing_bin, feature, min_side_weight);
  }
  return {};
}

std::int64_t variance_mass(std::int64_t s, std::int64_t t) {
  if (t <= 0) return 0;
  __extension__ typedef unsigned __int128 u128;  // s^2 needs 126 bits
  const u128 a = s < 0 ? static_cast<u128>(-(s + 1)) + 1 : static_cast<u128>(s);
  const u128 m = (a * a + static_cast<u128>(t) - 1) / static_cast<u128>(t);
  if (m >= (u128{1} << 62)) throw std::overflow_error("variance mass s^2 / t beyond 2^62: scale the values down");
  return static_cast<std::int64_t>(m);
}

namespace {

constexpr int kPackShift = 40;  // VarianceOptions::packed_t: a bin's count above bit 40, its S below

// The non-empty bins of one feature's rows so far, ascending: what a bound scans.
struct BinSteps {
  int n = 0;
  std::int64_t s[kHistBins], t[kHistBins];
  int bin[kHistBins];
  std::int64_t missing_s = 0, missing_t = 0;
};

// The impurity criteria for the schedule of quick_driver.hpp. Each feature's histogram (in `store`, kept
// across nodes) has two halves of kHistBins: for Gini and entropy the two classes' values (s > 0, then
// s < 0: one add per row, and t = |s| follows), for the variance s then t. Without a cache it holds subset
// 0 from the first pass on (build_first_subsets, features in groups), so finishing a feature reads only
// its chunks. With a cache, subset 0 is the cached rows, summed per bin in the cache's bin order (as the
// loss criterion does), and written to the histogram only for the features that are finished.
class ImpurityBound {
 public:
  using Bound = double;
  struct Progress {
    std::size_t f;
    std::int64_t* h;             // the two halves above
    std::int64_t unchecked = 0;  // mass added since the bound was last computed
  };

  // The segments (mass_segments.hpp) list each segment's rows with s > 0 first for Gini and entropy, so
  // that each class adds to its own histogram half.
  ImpurityBound(const data::BinnedMatrix& X, const data::BinMapper& bins, ImpurityCriterion criterion,
                const MassSegments& rows, std::int64_t* store, int n_threads, const ImpurityCache* cache,
                VarianceOptions variance)
      : X_(X), bins_(bins), criterion_(criterion),
        kind_(criterion == ImpurityCriterion::kEntropy ? ImpurityKind::kEntropy : ImpurityKind::kPurity),
        classes_(criterion != ImpurityCriterion::kVariance), rows_(rows),
        mass_before_(rows.mass_before), bounds_(rows.bounds), store_(store), cache_(cache),
        scratch_stride_(cache ? 2 * (cache->rows->rows.size() + 1) : 0),
        scratch_(static_cast<std::size_t>(util::resolve_threads(n_threads)) * scratch_stride_), results_(X.n_features),
        mass_unit_(std::ldexp(1.0, variance.mass_shift)), min_side_weight_(variance.min_side_weight),
        packed_t_(variance.packed_t) {}

  // The node's error without a split, and the margin a bound must exceed the best error by.
  double unsplit(std::int64_t S, std::int64_t T) {
    S_ = S;
    T_ = T;
    const double T_d = static_cast<double>(T), Q = static_cast<double>(mass_before_.back()) * mass_unit_;
    // The variance's errors are at most its mass Q (S^2 / W <= sum s^2 / t): T, a weight, is no scale of them.
    margin_ = 1e-9 * (criterion_ == ImpurityCriterion::kVariance ? Q : Q + T_d * (1.0 + std::log(std::max(T_d, 1.0))));
    return base(bounds_.size() - 1) - side_score(kind_, S, T);
  }

  // Without a cache: subset 0 of every active feature into its histogram, features in groups
  // (feature_groups.hpp: a row's index and value read once per group, as the full scan reads them).
  void build_first_subsets(const std::uint8_t* active_features, int n_threads) {
    if (cache_) return;
    std::vector<std::size_t> features;
    for (std::size_t f = 0; f < X_.n_features; ++f)
      if (!active_features || active_features[f]) features.push_back(f);
    const std::size_t F = features.size();
    const std::size_t groups = group_count(F, kMaxGroup, static_cast<std::size_t>(n_threads));
    util::parallel_for(static_cast<std::ptrdiff_t>(groups), n_threads, [&](std::ptrdiff_t gi) {
      const auto g = static_cast<std::size_t>(gi);
      FeatureGroup low, high;  // the histograms' halves
      for (std::size_t k = g * F / groups; k < (g + 1) * F / groups; ++k) {
        std::int64_t* h = histogram(features[k]);
        std::fill(h, h + 2 * kHistBins, 0);
        low.columns[low.size] = high.columns[high.size] = X_.column(features[k]);
        low.hists[low.size++] = h;
        high.hists[high.size++] = h + kHistBins;
      }
      const std::uint32_t* r = rows_.rows.data();
      const std::int64_t* s = rows_.s.data();
      const std::size_t end = bounds_[1];
      if (classes_) {  // s > 0 into the low half, s < 0 into the high one
        const std::size_t mid = rows_.second_class[0];
        add_group_packed(low, r, mid, s, 0);
        add_group_packed(high, r + mid, end - mid, s + mid, 0);
        return;
      }
      add_group_packed(low, r, end, s, 0);
      if (packed_t_ == 0) add_group_packed(high, r, end, rows_.t.data(), 0);
    });
  }

  Bound first_subset(std::size_t f) {
    BinSteps steps;
    if (cache_) {
      cached_steps(f, steps);
    } else {  // built by build_first_subsets()
      histogram_steps(Progress{f, histogram(f), 0}, steps);
    }
    return lowest_error(steps, 1);
  }

  bool loses(Bound prelim, Bound best) const { return prelim > best + margin_; }

  Progress start(std::size_t f) {
    std::int64_t* h = histogram(f);
    Progress p{f, h, 0};
    if (!cache_) return p;  // subset 0 is there since first_subset()
    std::fill(h, h + 2 * kHistBins, 0);
    BinSteps steps;  // the cached rows' sums per bin into the histogram
    cached_steps(f, steps);
    for (int i = 0; i < steps.n; ++i) set_bin(h, steps.bin[i], steps.s[i], steps.t[i]);
    set_bin(h, bins_.missing_bin(), steps.missing_s, steps.missing_t);
    return p;
  }

  void add(Progress& p, std::size_t j) {
    add_rows(p, j);
    p.unchecked += mass_before_[j + 1] - mass_before_[j];
  }

  // A new bound after every chunk but the last for the variance, after chunks 1, 2, 4, 8, ... for Gini and
  // entropy, unless it cannot exceed `best` yet. Which was measured: for Gini and entropy the doubling beat
  // a bound after every chunk (their completed bound takes 8 side errors per candidate); the variance's
  // bound (its rows' own, 2 side scores per candidate) costs about what a few hundred gathered adds cost,
  // and a bound after every chunk halved the time spent finishing features on integer spikes
  // (bench/quick_criteria.py's task, 200 stumps, 2 threads, timed by a throw-away script: 0.20 s to 0.11 s),
  // where features left after subset 0 used to read up to twice the chunks they needed. Gini: the
  // completed bound grows by at most 8x the mass added (a row that was counted on one side and lands on the
  // other moves each side's error by at most 4x its mass). The variance: every split's error on the rows so
  // far is at most their mass.
  void refresh(Progress& p, std::size_t j, Bound& prelim, Bound best) {
    if (j + 2 >= bounds_.size()) return;
    if (criterion_ != ImpurityCriterion::kVariance && (j & (j - 1)) != 0) return;
    if (criterion_ == ImpurityCriterion::kGini && prelim + 8.0 * static_cast<double>(p.unchecked) <= best) return;
    if (criterion_ == ImpurityCriterion::kVariance && base(j + 1) <= best) return;
    p.unchecked = 0;
    BinSteps steps;
    histogram_steps(p, steps);
    prelim = lowest_error(steps, j + 1);
  }

  bool complete(Progress& p, Bound& error) {
    SplitInfo& r = results_[p.f];
    std::int64_t st[2 * kHistBins];  // s then t
    for (int b = 0; b < kHistBins; ++b) {
      st[b] = bin_s(p.h, b);
      st[kHistBins + b] = bin_t(p.h, b);
    }
    r = impurity_split(criterion_, st, st + kHistBins, bins_.n_value_bins(p.f), bins_.missing_bin(),
                       static_cast<std::int32_t>(p.f), min_side_weight_);
    // gini_gain = scale x (left + right - unsplit side scores): scale 1/2 for Gini and variance.
    const double scale = criterion_ == ImpurityCriterion::kEntropy ? 1.0 : 0.5;
    error = base(bounds_.size() - 1) - side_score(kind_, S_, T_) - r.gini_gain / scale;
    return r.found();
  }

  static void release(Progress&) {}
  static void drop(std::size_t) {}
  static bool finish_in_bulk(const std::vector<std::size_t>&, std::vector<std::int64_t>&) { return false; }

  SplitInfo winner() const { return best_of(results_); }

 private:
  // The error's term that does not depend on the split, for the rows before cut k: their mass (purity kind).
  double base(std::size_t k) const {
    return kind_ == ImpurityKind::kPurity ? static_cast<double>(mass_before_[k]) * mass_unit_ : 0.0;
  }
  // Chunk j's rows into the histogram halves, by the interleaved kernel.
  void add_rows(Progress& p, std::size_t j) const {
    const std::uint8_t* column = X_.column(p.f);
    const std::size_t begin = bounds_[j], end = bounds_[j + 1];
    const std::uint32_t* r = rows_.rows.data();
    const std::int64_t* s = rows_.s.data();
    if (classes_) {  // the chunk's rows with s > 0, then those with s < 0
      const std::size_t mid = rows_.second_class[j];
      accumulate_gather(column, r + begin, s + begin, mid - begin, p.h);
      accumulate_gather(column, r + mid, s + mid, end - mid, p.h + kHistBins);
      return;
    }
    accumulate_gather(column, r + begin, s + begin, end - begin, p.h);
    if (packed_t_ == 0) accumulate_gather(column, r + begin, rows_.t.data() + begin, end - begin, p.h + kHistBins);
  }

  // A bin's sums s and t from the histogram halves, and the halves from them.
  // Packed (VarianceOptions::packed_t): S is the low 40 bits, sign-extended, and W the count above times t.
  std::int64_t bin_s(const std::int64_t* h, int b) const {
    if (packed_t_ != 0) return static_cast<std::int64_t>(static_cast<std::uint64_t>(h[b]) << 24) >> 24;
    return classes_ ? h[b] + h[kHistBins + b] : h[b];
  }
  std::int64_t bin_t(const std::int64_t* h, int b) const {
    if (packed_t_ != 0) return ((h[b] - bin_s(h, b)) >> kPackShift) * packed_t_;
    return classes_ ? h[b] - h[kHistBins + b] : h[kHistBins + b];
  }
  void set_bin(std::int64_t* h, int b, std::int64_t s, std::int64_t t) const {
    h[b] = classes_ ? (t + s) / 2 : s;
    h[kHistBins + b] = classes_ ? (s - t) / 2 : t;
  }

  std::int64_t* histogram(std::size_t f) const { return store_ + f * 2 * kHistBins; }
  std::int64_t* thread_buffer() { return &scratch_[static_cast<std::size_t>(util::thread_index()) * scratch_stride_]; }

  // The histogram's non-empty value bins, and its missing bin.
  void histogram_steps(const Progress& p, BinSteps& steps) const {
    const int n_value_bins = bins_.n_value_bins(p.f), missing = bins_.missing_bin();
    steps.n = 0;
    for (int b = 0; b < n_value_bins; ++b)
      if (p.h[b] != 0 || p.h[kHistBins + b] != 0) {
        steps.bin[steps.n] = b;
        steps.s[steps.n] = bin_s(p.h, b);
        steps.t[steps.n++] = bin_t(p.h, b);
      }
    steps.missing_s = bin_s(p.h, missing);
    steps.missing_t = bin_t(p.h, missing);
  }

  // The cached rows' sums per non-empty bin of feature f, from prefix sums in the cache's bin order (the
  // rows grouped by bin: HeavyRows::perm).
  void cached_steps(std::size_t f, BinSteps& steps) {
    const HeavyRows& heavy = *cache_->rows;
    const std::size_t n_heavy = heavy.rows.size();
    const std::uint16_t* perm = &heavy.perm[f * n_heavy];
    std::int64_t* cum_s = thread_buffer();
    std::int64_t* cum_t = cum_s + n_heavy + 1;
    std::int64_t run_s = 0, run_t = 0;  // in registers: the stores below cannot alias them
    cum_s[0] = cum_t[0] = 0;
    if (classes_) {  // t = |s|: one load per row
      for (std::size_t i = 0; i < n_heavy; ++i) {
        const std::int64_t v = cache_->s[perm[i]];
        run_s += v;
        run_t += abs64(v);
        cum_s[i + 1] = run_s;
        cum_t[i + 1] = run_t;
      }
    } else {
      for (std::size_t i = 0; i < n_heavy; ++i) {
        run_s += cache_->s[perm[i]];
        run_t += cache_->t[perm[i]];
        cum_s[i + 1] = run_s;
        cum_t[i + 1] = run_t;
      }
    }
    steps.n = 0;
    steps.missing_s = steps.missing_t = 0;
    std::size_t prev = 0;
    for (std::uint32_t r = heavy.run_begin[f]; r < heavy.run_begin[f + 1]; ++r) {
      const std::size_t end = heavy.run_end[r];
      const std::int64_t ds = cum_s[end] - cum_s[prev], dt = cum_t[end] - cum_t[prev];
      prev = end;
      if (heavy.run_bin[r] == bins_.missing_bin()) {  // the highest code: the last run
        steps.missing_s = ds;
        steps.missing_t = dt;
      } else if (ds != 0 || dt != 0) {
        steps.bin[steps.n] = heavy.run_bin[r];
        steps.s[steps.n] = ds;
        steps.t[steps.n++] = dt;
      }
    }
  }

  // A lower bound on the error of every split of the feature on the whole node, from the steps of the rows
  // before cut k: the completed bound (impurity_bound.hpp) for Gini and entropy, the rows' own for the
  // variance.
  double lowest_error(const BinSteps& steps, std::size_t k) const {
    double ls[kHistBins + 1], lt[kHistBins + 1];
    const PrefixCandidates c = candidates(steps, ls, lt);
    if (criterion_ == ImpurityCriterion::kVariance) return base(k) - highest_purity(c);
    // The unread rows' class masses: the node's sums less the rows read (t = |s| per row: both even).
    std::int64_t read_s = steps.missing_s, read_t = steps.missing_t;
    for (int i = 0; i < steps.n; ++i) {
      read_s += steps.s[i];
      read_t += steps.t[i];
    }
    const std::int64_t rest_s = S_ - read_s, rest_t = T_ - read_t;
    const auto kind = criterion_ == ImpurityCriterion::kGini ? ClassImpurity::kGini : ClassImpurity::kEntropy;
    return completed_lower_bound(kind, c, static_cast<double>((rest_t + rest_s) / 2),
                                 static_cast<double>((rest_t - rest_s) / 2));
  }

  // Every candidate the full search may take on the whole node, whatever the rows so far hold (extra
  // candidates only lower a bound): nothing or only NaN on the left (position 0), then at each non-empty
  // bin NaN right and NaN left (a threshold at an empty bin repeats the previous one's candidates). Sums
  // are rounded to double, so the loops over candidates vectorise: a bound, whose rounding the pruning
  // margin covers.
  static PrefixCandidates candidates(const BinSteps& steps, double* ls, double* lt) {
    std::int64_t run_s = 0, run_t = 0;
    ls[0] = lt[0] = 0.0;
    for (int i = 0; i < steps.n; ++i) {
      run_s += steps.s[i];
      run_t += steps.t[i];
      ls[i + 1] = static_cast<double>(run_s);
      lt[i + 1] = static_cast<double>(run_t);
    }
    return {ls, lt, steps.n + 1, static_cast<double>(run_s), static_cast<double>(run_t),
            static_cast<double>(steps.missing_s), static_cast<double>(steps.missing_t)};
  }

  // The highest summed side score S^2 / max(T, 1) over the candidates (an empty side has S = 0).
  static double highest_purity(const PrefixCandidates& c) {
    double purity[2 * (kHistBins + 1)];
    const double vs = c.values_s, vt = c.values_t, ms = c.missing_s, mt = c.missing_t;
    for (int i = 0; i < c.n_positions; ++i) {
      const double ls = c.left_s[i], lt = c.left_t[i], rs = vs - ls, rt = vt - lt;
      purity[2 * i] = ls * ls / std::max(lt, 1.0) + (rs + ms) * (rs + ms) / std::max(rt + mt, 1.0);
      purity[2 * i + 1] = (ls + ms) * (ls + ms) / std::max(lt + mt, 1.0) + rs * rs / std::max(rt, 1.0);
    }
    double best = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < 2 * c.n_positions; ++i) best = purity[i] > best ? purity[i] : best;
    return best;
  }

  const data::BinnedMatrix& X_;
  const data::BinMapper& bins_;
  ImpurityCriterion criterion_;
  ImpurityKind kind_;
  bool classes_;  // Gini or entropy: s = +-t per row
  const MassSegments& rows_;
  const std::vector<std::int64_t>& mass_before_;  // per cut: the mass read before it
  const std::vector<std::size_t>& bounds_;
  std::int64_t* store_;
  const ImpurityCache* cache_;
  std::size_t scratch_stride_;
  std::vector<std::int64_t> scratch_;  // per thread: the cache's prefix sums (cached_steps)
  std::vector<SplitInfo> results_;
  std::int64_t S_ = 0, T_ = 0;  // the node's sums
  double margin_ = 0.0;
  double mass_unit_;               // 2^mass_shift: a unit of mass_before_ in the errors' units (Gini, entropy: 1)
  std::int64_t min_side_weight_;   // the variance's least side weight (VarianceOptions)
  std::int64_t packed_t_;          // > 0: bins hold count 2^kPackShift + S (VarianceOptions)
};

}  // namespace

SplitInfo quick_impurity_split(const data::BinnedMatrix& X, const data::BinMapper& bins, ImpurityCriterion criterion,
                               const std::uint32_t* rows, std::size_t n, const std::int64_t* s, const std::int64_t* t,
                               const std::int64_t* mass, int n_threads, const QuickParams& params, QuickWork& work,
                               const std::uint8_t* active_features, const ImpurityCache* cache,
                               ImpurityScratch* scratch, VarianceOptions variance) {
  ImpurityScratch local;
  ImpurityScratch& work_memory = scratch ? *scratch : local;
  // Subset 0 and the chunks (the cached rows, when given, are subset 0 instead). Rows without mass have
  // s = 0, t >= 0 (only the variance's weight W, which they add to the bound's and the full search's sums
  // alike): they come last.
  std::int64_t S = 0, T = 0;
  for (std::size_t i = 0; i < n; ++i) {
    S += s[rows[i]];
    T += t[rows[i]];
  }
  std::int64_t cached_mass = 0;
  std::size_t cached_in_node = 0;
  for (std::size_t i = 0; cache && i < cache->rows->rows.size(); ++i) {
    cached_mass += cache->mass[i];
    cached_in_node += cache->t[i] != 0 || cache->s[i] != 0;
  }
  if (criterion != ImpurityCriterion::kVariance) variance = {};
  if (cache) variance.packed_t = 0;
  SegmentOptions options;
  options.eta = std::max(params.eta, kImpurityEta);
  options.n_chunks = params.n_chunks;
  options.first_empty = cache != nullptr;
  options.mass_before_first = cached_mass;
  options.split_sign = criterion != ImpurityCriterion::kVariance;
  options.with_t = criterion == ImpurityCriterion::kVariance && variance.packed_t == 0;
  options.s_offset = variance.packed_t != 0 ? std::int64_t{1} << kPackShift : 0;
  const MassSegments& segments = work_memory.segments;
  segment_by_mass(rows, n, s, t, mass, cache ? cache->rows->member.data() : nullptr, options, work_memory.segments);
  const std::vector<std::size_t>& bounds = segments.bounds;
  const std::size_t n_features = X.n_features;
  std::size_t n_active = n_features;
  if (active_features) n_active = static_cast<std::size_t>(std::count(active_features, active_features + n_features, 1));
  work.bin_accumulations += static_cast<std::int64_t>((cached_in_node + bounds[1]) * n_active);
  std::vector<std::int64_t>& store = work_memory.histograms;
  if (store.size() < n_features * 2 * kHistBins) store.resize(n_features * 2 * kHistBins);
  ImpurityBound c(X, bins, criterion, segments, store.data(), n_threads, cache, variance);
  const double unsplit = c.unsplit(S, T);
  const std::size_t first_rows = bounds[1] + (cache ? cache->rows->rows.size() : 0);
  // Step 1's work per feature: its rows, and a bound over up to kHistBins candidates, counted as 16 adds
  // per candidate (Gini and entropy: 8 side errors with a division each). Counted by rows alone, a node whose
  // subset 0 was a small cache ran step 1 on one thread, though the bounds were most of it: on Trouser vs Bag
  // with Gini (bench/quick_criteria.py's task, 200 stumps, 2 threads, a throw-away script) the pruned search
  // took 0.46 s, 0.34 s with the bounds counted.
  const int first_threads = util::threads_for(n_features * (first_rows * 2 + 16 * kHistBins), n_threads);
  c.build_first_subsets(active_features, first_threads);
  run_quick_schedule(c, bounds, n_features, active_features, n_threads, first_threads, unsplit, work);
  return c.winner();
}

}  // namespace rebelboost::tree
