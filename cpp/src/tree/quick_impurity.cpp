// The impurity criteria's pruned pass (see quick_impurity.hpp).
#include "tree/quick_impurity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "tree/histogram.hpp"
#include "tree/quick_driver.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

SplitInfo impurity_split(ImpurityCriterion criterion, const std::int64_t* sums, const std::int64_t* weights,
                         int n_value_bins, int missing_bin, std::int32_t feature) {
  switch (criterion) {
    case ImpurityCriterion::kGini: return best_split_gini(sums, weights, n_value_bins, missing_bin, feature);
    case ImpurityCriterion::kEntropy: return best_split_entropy(sums, weights, n_value_bins, missing_bin, feature);
    case ImpurityCriterion::kVariance: return best_split_variance(sums, weights, n_value_bins, missing_bin, feature);
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

// The non-empty bins of one feature's rows so far, ascending: what a bound scans.
struct BinSteps {
  int n = 0;
  std::int64_t s[kHistBins], t[kHistBins];
  int bin[kHistBins];
  std::int64_t missing_s = 0, missing_t = 0;
};

// The impurity criteria for the schedule of quick_driver.hpp. Histograms (s then t, kHistBins each) live in
// per-thread buffers; finishing a feature adds subset 0 again (a re-read, not counted as work). With a
// cache, subset 0 is the cached rows, read as prefix sums in bin order (as the loss criterion does).
class ImpurityBound {
 public:
  using Bound = double;
  struct Progress {
    std::size_t f;
    std::int64_t* h;             // s histogram, then t histogram
    std::int64_t unchecked = 0;  // mass added since the bound was last computed
  };

  ImpurityBound(const data::BinnedMatrix& X, const data::BinMapper& bins, ImpurityCriterion criterion,
                const std::vector<std::uint32_t>& rows, const std::int64_t* s, const std::int64_t* t,
                const std::vector<std::int64_t>& prefix, const std::vector<std::size_t>& bounds, int n_threads,
                const ImpurityCache* cache)
      : X_(X), bins_(bins), criterion_(criterion),
        kind_(criterion == ImpurityCriterion::kEntropy ? ImpurityKind::kEntropy : ImpurityKind::kPurity), rows_(rows),
        s_(s), t_(t), prefix_(prefix), bounds_(bounds), cache_(cache),
        n_heavy_(cache ? cache->rows->rows.size() : 0),
        scratch_(static_cast<std::size_t>(util::resolve_threads(n_threads)) * (2 * kHistBins + 2 * (n_heavy_ + 1))),
        results_(X.n_features) {}

  // The node's error without a split, and the margin a bound must exceed the best error by.
  double unsplit(std::int64_t S, std::int64_t T) {
    S_ = S;
    T_ = T;
    const double T_d = static_cast<double>(T), Q = static_cast<double>(prefix_.back());
    margin_ = 1e-9 * (Q + T_d * (1.0 + std::log(std::max(T_d, 1.0))));
    return base(prefix_.size() - 1) - side_score(kind_, S, T);
  }

  Bound first_subset(std::size_t f) {
    BinSteps steps;
    if (cache_) {
      cached_steps(f, steps);
    } else {
      Progress p = start(f);
      histogram_steps(p, steps);
    }
    return lowest_error(steps, bounds_[1]);
  }

  bool loses(Bound prelim, Bound best) const { return prelim > best + margin_; }

  Progress start(std::size_t f) {
    std::int64_t* h = thread_buffer();
    std::fill(h, h + 2 * kHistBins, 0);
    Progress p{f, h, 0};
    if (!cache_) {
      add_rows(p, 0, bounds_[1]);
      return p;
    }
    BinSteps steps;  // the cached rows' sums per bin into the histogram
    cached_steps(f, steps);
    for (int i = 0; i < steps.n; ++i) {
      h[steps.bin[i]] = steps.s[i];
      h[kHistBins + steps.bin[i]] = steps.t[i];
    }
    h[bins_.missing_bin()] = steps.missing_s;
    h[kHistBins + bins_.missing_bin()] = steps.missing_t;
    return p;
  }

  void add(Progress& p, std::size_t j) {
    add_rows(p, bounds_[j], bounds_[j + 1]);
    p.unchecked += prefix_[bounds_[j + 1]] - prefix_[bounds_[j]];
  }

  // A new bound after chunks 1, 2, 4, 8, ... but the last, unless the error cannot exceed `best` yet: every split's
  // error is at most the error ceiling of the rows so far (purity: their mass; entropy: T ln 2), and a
  // Gini error grows by at most 4x the mass added (a row of weight b moves T by b and S^2 / T by at most
  // 3b), so the best candidate's error is at most prelim + 4 x unchecked.
  void refresh(Progress& p, std::size_t j, Bound& prelim, Bound best) {
    if (j + 2 >= bounds_.size() || ceiling(bounds_[j + 1]) <= best) return;
    if ((j & (j - 1)) != 0) return;  // chunks 1, 2, 4, 8, ...: measured faster than every chunk
    if (criterion_ == ImpurityCriterion::kGini && prelim + 4.0 * static_cast<double>(p.unchecked) <= best) return;
    p.unchecked = 0;
    BinSteps steps;
    histogram_steps(p, steps);
    const double screen = loss_screen(steps);
    if (screen > best + margin_) {  // already loses: the exact bound (at least the screen) is not needed
      prelim = screen;
      return;
    }
    prelim = lowest_error(steps, bounds_[j + 1]);
  }

  bool complete(Progress& p, Bound& error) {
    SplitInfo& r = results_[p.f];
    r = impurity_split(criterion_, p.h, p.h + kHistBins, bins_.n_value_bins(p.f), bins_.missing_bin(),
                       static_cast<std::int32_t>(p.f));
    // gini_gain = scale x (left + right - unsplit side scores): scale 1/2 for Gini and variance.
    const double scale = criterion_ == ImpurityCriterion::kEntropy ? 1.0 : 0.5;
    error = base(prefix_.size() - 1) - side_score(kind_, S_, T_) - r.gini_gain / scale;
    return r.found();
  }

  static void release(Progress&) {}
  static void drop(std::size_t) {}
  static bool finish_in_bulk(const std::vector<std::size_t>&, std::vector<std::int64_t>&) { return false; }

  SplitInfo winner() const {
    SplitInfo w;
    for (const SplitInfo& r : results_)
      if (r.found() && (!w.found() || better(r, w))) w = r;
    return w;
  }

 private:
  // The error's term that does not depend on the split, for the first m rows: their mass (purity kind).
  double base(std::size_t m) const { return kind_ == ImpurityKind::kPurity ? static_cast<double>(prefix_[m]) : 0.0; }
  // The most any split's error on the first m rows can be (prefix = T for the entropy, whose mass is t).
  double ceiling(std::size_t m) const {
    return kind_ == ImpurityKind::kPurity ? static_cast<double>(prefix_[m]) : std::log(2.0) * static_cast<double>(prefix_[m]);
  }

  void add_rows(Progress& p, std::size_t begin, std::size_t end) const {
    const std::uint8_t* column = X_.column(p.f);
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint32_t r = rows_[i];
      p.h[column[r]] += s_[r];
      p.h[kHistBins + column[r]] += t_[r];
    }
  }

  std::int64_t* thread_buffer() {
    return &scratch_[static_cast<std::size_t>(util::thread_index()) * (2 * kHistBins + 2 * (n_heavy_ + 1))];
  }

  // The histogram's non-empty value bins, and its missing bin.
  void histogram_steps(const Progress& p, BinSteps& steps) const {
    const int n_value_bins = bins_.n_value_bins(p.f), missing = bins_.missing_bin();
    steps.n = 0;
    for (int b = 0; b < n_value_bins; ++b)
      if (p.h[b] != 0 || p.h[kHistBins + b] != 0) {
        steps.bin[steps.n] = b;
        steps.s[steps.n] = p.h[b];
        steps.t[steps.n++] = p.h[kHistBins + b];
      }
    steps.missing_s = p.h[missing];
    steps.missing_t = p.h[kHistBins + missing];
  }

  // The cached rows' sums per non-empty bin of feature f, from prefix sums in the cache's bin order.
  void cached_steps(std::size_t f, BinSteps& steps) {
    const HeavyRows& heavy = *cache_->rows;
    const std::uint16_t* perm = &heavy.perm[f * n_heavy_];
    std::int64_t* cum_s = thread_buffer() + 2 * kHistBins;
    std::int64_t* cum_t = cum_s + n_heavy_ + 1;
    cum_s[0] = cum_t[0] = 0;
    for (std::size_t i = 0; i < n_heavy_; ++i) {
      cum_s[i + 1] = cum_s[i] + cache_->s[perm[i]];
      cum_t[i + 1] = cum_t[i] + cache_->t[perm[i]];
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

  double lowest_error(const BinSteps& steps, std::size_t m) const {
    return base(m) - (kind_ == ImpurityKind::kEntropy ? highest_entropy_score(steps) : highest_purity(steps));
  }

  // The highest summed side score over every candidate the full search may take on the whole node,
  // whatever the rows so far hold (extra candidates only lower the bound): nothing or only NaN on the
  // left (position 0), then at each non-empty bin NaN right and NaN left (a threshold at an empty bin
  // repeats the previous one's candidates). Sums are rounded to double first, so the loop over candidates
  // vectorises: a bound, whose rounding the pruning margin covers. purity[2i] and purity[2i + 1] hold the
  // two candidates at position i.
  static int candidate_purities(const BinSteps& steps, double* purity) {
    double ls[kHistBins + 1], lt[kHistBins + 1];
    std::int64_t run_s = 0, run_t = 0;
    ls[0] = lt[0] = 0.0;
    for (int i = 0; i < steps.n; ++i) {
      run_s += steps.s[i];
      run_t += steps.t[i];
      ls[i + 1] = static_cast<double>(run_s);
      lt[i + 1] = static_cast<double>(run_t);
    }
    const double vs = static_cast<double>(run_s), vt = static_cast<double>(run_t);
    const double ms = static_cast<double>(steps.missing_s), mt = static_cast<double>(steps.missing_t);
    const int n = steps.n + 1;
    for (int i = 0; i < n; ++i) {  // S^2 / max(T, 1): an empty side (T = 0) has S = 0
      const double rs = vs - ls[i], rt = vt - lt[i];
      purity[2 * i] = ls[i] * ls[i] / std::max(lt[i], 1.0) + (rs + ms) * (rs + ms) / std::max(rt + mt, 1.0);
      purity[2 * i + 1] = (ls[i] + ms) * (ls[i] + ms) / std::max(lt[i] + mt, 1.0) + rs * rs / std::max(rt, 1.0);
    }
    return 2 * n;
  }

  // A cheaper lower bound for Gini and entropy, in integers: S^2 / T <= |S| for a side (|S| <= T), so the
  // Gini error T - S^2 / T is at least T - |S|, and the entropy at least ln 2 x the Gini error. The
  // weighted error's scan (no division, no logarithm) then bounds both. -infinity for the variance.
  double loss_screen(const BinSteps& steps) const {
    if (criterion_ == ImpurityCriterion::kVariance) return -std::numeric_limits<double>::infinity();
    std::int64_t vs = 0, vt = 0;
    for (int i = 0; i < steps.n; ++i) {
      vs += steps.s[i];
      vt += steps.t[i];
    }
    const std::int64_t ms = steps.missing_s, total = vt + steps.missing_t;
    std::int64_t best = std::max(abs64(vs + ms), abs64(ms) + abs64(vs)), ls = 0;
    for (int i = 0; i < steps.n; ++i) {
      ls += steps.s[i];
      best = std::max(best, std::max(abs64(ls) + abs64(vs - ls + ms), abs64(ls + ms) + abs64(vs - ls)));
    }
    const double gini = static_cast<double>(total - best);
    return criterion_ == ImpurityCriterion::kEntropy ? std::log(2.0) * gini * (1.0 - 1e-12) : gini;
  }

  static double highest_purity(const BinSteps& steps) {
    double purity[2 * (kHistBins + 1)];
    const int n = candidate_purities(steps, purity);
    double best = -std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i) best = purity[i] > best ? purity[i] : best;
    return best;
  }

  // The entropy screens each candidate by its purity first: a side's entropy is at least ln 2 x its Gini
  // error T - S^2 / T (binary entropy in bits >= 4 p (1 - p)), so the candidate's score (its negated
  // entropy) is at most -ln 2 (T_total - purity), and one whose screen already loses to the best exact
  // score needs no logarithm. Exact scores come from the integer sums.
  static double highest_entropy_score(const BinSteps& steps) {
    double purity[2 * (kHistBins + 1)];
    const int n = candidate_purities(steps, purity);
    // Left sums at each position (the integer sums the exact scores use).
    std::int64_t ls[kHistBins + 1], lt[kHistBins + 1];
    ls[0] = lt[0] = 0;
    for (int i = 0; i < steps.n; ++i) {
      ls[i + 1] = ls[i] + steps.s[i];
      lt[i + 1] = lt[i] + steps.t[i];
    }
    const std::int64_t vs = ls[steps.n], vt = lt[steps.n], ms = steps.missing_s, mt = steps.missing_t;
    const double total = static_cast<double>(vt + mt);
    auto score = [&](int c) {
      const int i = c / 2;
      return c % 2 == 0 ? negentropy(ls[i], lt[i]) + negentropy(vs - ls[i] + ms, vt - lt[i] + mt)
                        : negentropy(ls[i] + ms, lt[i] + mt) + negentropy(vs - ls[i], vt - lt[i]);
    };
    // The purest candidate first (usually the entropy's best too), so the screen skips most others.
    const int seed = static_cast<int>(std::max_element(purity, purity + n) - purity);
    double best = score(seed);
    for (int c = 0; c < n; ++c) {
      // Its Gini error, rounded down by far more than the doubles' rounding (so the screen stays above the score).
      const double gini_error = std::max(0.0, (total - purity[c]) * (1.0 - 1e-9) - 1e-12 * total);
      if (c == seed || -std::log(2.0) * gini_error <= best) continue;
      best = std::max(best, score(c));
    }
    return best;
  }

  const data::BinnedMatrix& X_;
  const data::BinMapper& bins_;
  ImpurityCriterion criterion_;
  ImpurityKind kind_;
  const std::vector<std::uint32_t>& rows_;
  const std::int64_t* s_;
  const std::int64_t* t_;
  const std::vector<std::int64_t>& prefix_;
  const std::vector<std::size_t>& bounds_;
  const ImpurityCache* cache_;
  std::size_t n_heavy_;
  std::vector<std::int64_t> scratch_;  // per thread: the histogram, then the cache's prefix sums
  std::vector<SplitInfo> results_;
  std::int64_t S_ = 0, T_ = 0;  // the node's sums
  double margin_ = 0.0;
};

}  // namespace

SplitInfo quick_impurity_split(const data::BinnedMatrix& X, const data::BinMapper& bins, ImpurityCriterion criterion,
                               const std::uint32_t* rows, std::size_t n, const std::int64_t* s, const std::int64_t* t,
                               const std::int64_t* mass, int n_threads, const QuickParams& params, QuickWork& work,
                               const std::uint8_t* active_features, const ImpurityCache* cache) {
  // Rows heaviest first by mass, cached rows apart (subset 0). Rows without mass have s = 0, t >= 0 (only
  // the variance's weight W, which they add to the bound's and the full search's sums alike): they come last.
  const std::uint8_t* cached = cache ? cache->rows->member.data() : nullptr;
  std::vector<std::uint32_t> ordered;
  std::vector<std::int64_t> masses;
  order_by_weight(rows, n, mass, ordered, masses, cached);
  std::int64_t S = 0, T = 0;
  for (std::size_t i = 0; i < n; ++i) {
    S += s[rows[i]];
    T += t[rows[i]];
    if (mass[rows[i]] == 0 && t[rows[i]] != 0 && !(cached && cached[rows[i]])) {
      ordered.push_back(rows[i]);
      masses.push_back(0);
    }
  }
  std::int64_t cached_mass = 0;
  std::size_t cached_in_node = 0;
  for (std::size_t i = 0; cache && i < cache->rows->rows.size(); ++i) {
    cached_mass += cache->mass[i];
    cached_in_node += cache->t[i] != 0 || cache->s[i] != 0;
  }
  std::vector<std::int64_t> prefix(ordered.size() + 1, cached_mass);
  for (std::size_t i = 0; i < ordered.size(); ++i) prefix[i + 1] = prefix[i] + masses[i];
  const std::vector<std::size_t> bounds =
      chunk_bounds(prefix, cache ? 0 : first_subset_end(prefix, params.eta), params.n_chunks);
  const std::size_t n_features = X.n_features;
  std::size_t n_active = n_features;
  if (active_features) n_active = static_cast<std::size_t>(std::count(active_features, active_features + n_features, 1));
  work.bin_accumulations += static_cast<std::int64_t>((cached_in_node + bounds[1]) * n_active);
  ImpurityBound c(X, bins, criterion, ordered, s, t, prefix, bounds, n_threads, cache);
  const double unsplit = c.unsplit(S, T);
  const std::size_t first_rows = bounds[1] + (cache ? cache->rows->rows.size() : 0);
  run_quick_schedule(c, bounds, n_features, active_features, n_threads,
                     util::threads_for(first_rows * n_features * 2, n_threads), unsplit, work);
  return c.winner();
}

}  // namespace rebelboost::tree
