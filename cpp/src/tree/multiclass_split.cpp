// K-vector histograms by class block, then the exact joint split search of REBEL's first layer.
//
// Per feature group, the histograms of G features stay in cache while the rows stream past once:
//   for class block c: snapshot slot c, accumulate the block's vectors, W-[b][c] = slot c - snapshot
// (only class-c rows put weight in slot c as w-; every other row's slot c is its w+).
#include "tree/multiclass_split.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "tree/histogram.hpp"
#include "tree/quick_driver.hpp"
#include "tree/split.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

namespace {

constexpr std::size_t kGroup = 8;    // features whose histograms share the cache
constexpr std::size_t kChunk = 512;  // rows whose vectors stay in L1 while the group sees them

// Which split wins is decided on losses recomputed in long double (the int64 sums convert exactly, and
// the rounding of K square roots and their sum stays near 1e-19 relative): losses within a few rounding
// units count as equal, so equal splits reached along different paths tie and the tie goes to the lower
// feature / bin, while splits that differ only by rows of tiny weight (late in training) are still told
// apart, as the binary losses' exact integer scores do (REBEL with K = 2 is AdaBoost). Every candidate's
// loss is first computed in double; only those within kScreen of the best so far get the long double one.
constexpr double kScreen = 1e-12;

long double tie_tolerance(std::size_t K) {
  return 8.0L * static_cast<long double>(K + 1) * std::numeric_limits<long double>::epsilon();
}

bool clearly_less(long double a, long double b, std::size_t K) { return a < b - tie_tolerance(K) * (b < 0 ? -b : b); }

// sum_k sqrt(s+_k s-_k) in double (to screen candidates) or long double (to decide between them).
template <typename Real>
Real pair_loss(const std::int64_t* sp, const std::int64_t* sm, std::size_t K) {
  Real s = 0;
  for (std::size_t k = 0; k < K; ++k) s += std::sqrt(static_cast<Real>(sp[k]) * static_cast<Real>(sm[k]));
  return s;
}

long double pair_loss_precise(const std::int64_t* sp, const std::int64_t* sm, std::size_t K) {
  return pair_loss<long double>(sp, sm, K);
}

// The tie-break among splits of equal loss (split.hpp).
bool earlier(const RootSplit& a, const RootSplit& b) {
  return earlier_position(a.feature, a.bin, a.nan_left, b.feature, b.bin, b.nan_left);
}

// Calls visit(bin, nan_left, loss, s+, s-) for every candidate split of one feature's bin sums; `every` adds the
// candidates that only differ when there are missing values (used for bounds: a superset of the full
// search's candidates whatever a subset of the rows holds). Returns the unsplit loss.
template <typename Visit>
long double for_each_candidate(const std::int64_t* wplus, const std::int64_t* wminus, std::size_t K, int n_value_bins,
                          int missing_bin, bool every, Visit&& visit) {
  constexpr std::size_t kMaxK = 64;
  std::int64_t small[6 * kMaxK];
  std::vector<std::int64_t> large;
  std::int64_t* buf = small;
  if (K > kMaxK) {
    large.assign(6 * K, 0);
    buf = large.data();
  }
  std::int64_t *all_p = buf, *all_m = buf + K, *lp = buf + 2 * K, *lm = buf + 3 * K, *sp = buf + 4 * K, *sm = buf + 5 * K;
  const std::int64_t* mp = wplus + static_cast<std::size_t>(missing_bin) * K;
  const std::int64_t* mm = wminus + static_cast<std::size_t>(missing_bin) * K;
  bool has_missing = false;
  for (std::size_t k = 0; k < K; ++k) {
    all_p[k] = mp[k];
    all_m[k] = mm[k];
    lp[k] = lm[k] = 0;
    has_missing = has_missing || mp[k] != 0 || mm[k] != 0;
  }
  for (int b = 0; b < n_value_bins; ++b)
    for (std::size_t k = 0; k < K; ++k) {
      all_p[k] += wplus[static_cast<std::size_t>(b) * K + k];
      all_m[k] += wminus[static_cast<std::size_t>(b) * K + k];
    }
  const bool nan_sides = has_missing || every;
  auto consider = [&](int bin, bool nan_left) {
    // left = value bins 0..bin (+ missing if nan_left): f = -1 there, +1 on the right.
    for (std::size_t k = 0; k < K; ++k) {
      const std::int64_t left_p = lp[k] + (nan_left ? mp[k] : 0), left_m = lm[k] + (nan_left ? mm[k] : 0);
      sp[k] = (all_p[k] - left_p) + left_m;
      sm[k] = (all_m[k] - left_m) + left_p;
    }
    visit(bin, nan_left, pair_loss<double>(sp, sm, K), sp, sm);
  };
  for (int bin = 0; bin < n_value_bins; ++bin) {
    for (std::size_t k = 0; k < K; ++k) {
      lp[k] += wplus[static_cast<std::size_t>(bin) * K + k];
      lm[k] += wminus[static_cast<std::size_t>(bin) * K + k];
    }
    if (bin < n_value_bins - 1 || nan_sides) consider(bin, false);
    if (nan_sides && bin < n_value_bins - 1) consider(bin, true);
  }
  return pair_loss_precise(all_p, all_m, K);
}

// The lowest loss over every candidate (a lower bound on what the full rows can give, see above).
double lowest_loss(const std::int64_t* wplus, const std::int64_t* wminus, std::size_t K, int n_value_bins,
                   int missing_bin) {
  double lowest = std::numeric_limits<double>::infinity();
  for_each_candidate(wplus, wminus, K, n_value_bins, missing_bin, true,
                     [&](int, bool, double loss, const std::int64_t*, const std::int64_t*) { lowest = std::min(lowest, loss); });
  return lowest;
}

}  // namespace

RootCandidates evaluate_multiclass_feature(const std::int64_t* wplus, const std::int64_t* wminus, std::size_t K,
                                           int n_value_bins, int missing_bin, std::int32_t feature) {
  RootCandidates out;
  double screen = std::numeric_limits<double>::infinity();  // double loss of the best so far
  long double best = std::numeric_limits<long double>::infinity();
  std::vector<RootSplit> seen;  // within the tie tolerance of `best`
  const long double unsplit = for_each_candidate(
      wplus, wminus, K, n_value_bins, missing_bin, false,
      [&](int bin, bool nan_left, double loss, const std::int64_t* sp, const std::int64_t* sm) {
        if (loss > screen * (1.0 + kScreen)) return;  // clearly worse than one seen, even in double
        const long double precise = pair_loss_precise(sp, sm, K);
        if (clearly_less(best, precise, K)) return;
        RootSplit c;
        c.found = true;
        c.feature = feature;
        c.bin = bin;
        c.nan_left = nan_left;
        c.loss = loss;
        c.precise_loss = precise;
        if (precise < best) {
          best = precise;
          screen = std::min(screen, loss);
          seen.erase(std::remove_if(seen.begin(), seen.end(),
                                    [&](const RootSplit& e) { return clearly_less(precise, e.precise_loss, K); }),
                     seen.end());
        }
        seen.push_back(c);
      });
  out.loss_unsplit = static_cast<double>(unsplit);
  out.precise_unsplit = unsplit;
  // Only splits clearly better than the unsplit node count; the minimum is over those.
  for (RootSplit& c : seen) {
    c.loss_unsplit = out.loss_unsplit;
    if (clearly_less(c.precise_loss, unsplit, K)) {
      out.near.push_back(c);
      out.min_loss = std::min(out.min_loss, c.precise_loss);
    }
  }
  return out;
}

RootSplit pick_root(const std::vector<RootCandidates>& features, std::size_t K) {
  long double lowest = std::numeric_limits<long double>::infinity();
  double unsplit = 0.0;  // the same for every searched feature (the node's totals)
  for (const RootCandidates& f : features) {
    if (f.loss_unsplit != 0.0) unsplit = f.loss_unsplit;
    if (!f.near.empty()) lowest = std::min(lowest, f.min_loss);
  }
  RootSplit winner;
  for (const RootCandidates& f : features)
    for (const RootSplit& c : f.near)
      if (!clearly_less(lowest, c.precise_loss, K) && (!winner.found || earlier(c, winner))) winner = c;
  winner.loss_unsplit = unsplit;
  return winner;
}

namespace {

// Per active feature f, emit(f, plus, minus) with its K-vector bin sums W+ and W- (kHistBins x K each),
// from one pass over the rows per group of kGroup features. OpenMP over groups: emit runs concurrently
// for different features.
template <typename Emit>
void for_each_multiclass_histogram(const data::BinnedMatrix& X, const std::int64_t* v, std::size_t K,
                                   const std::vector<std::size_t>& class_begin, int n_threads,
                                   const std::uint8_t* active_features, Emit&& emit) {
  const std::size_t n_features = X.n_features;
  const std::size_t n_groups = (n_features + kGroup - 1) / kGroup;
  const std::size_t hist_size = static_cast<std::size_t>(kHistBins) * K;
  const int threads = util::threads_for(X.n_samples * n_features * K, n_threads);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_groups), threads, [&](std::ptrdiff_t g) {
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
      if (active_features && !active_features[f0 + j]) continue;
      const std::int64_t* h = &sums[j * 2 * hist_size];
      const std::int64_t* m = &minus[j * hist_size];
      for (std::size_t at = 0; at < hist_size; ++at) plus[at] = h[at] + h[hist_size + at] - m[at];
      emit(f0 + j, plus.data(), m);
    }
  });
}

std::int64_t root_accumulations(const data::BinnedMatrix& X, const std::uint8_t* active_features) {
  const std::size_t n_active = active_features ? static_cast<std::size_t>(std::count(
                                                     active_features, active_features + X.n_features, 1))
                                               : X.n_features;
  return static_cast<std::int64_t>(X.n_samples * n_active);
}

}  // namespace

std::vector<RootCandidates> multiclass_candidates(const data::BinnedMatrix& X, const data::BinMapper& bins,
                                                  const std::int64_t* v, std::size_t K,
                                                  const std::vector<std::size_t>& class_begin, int n_threads,
                                                  const std::uint8_t* active_features) {
  std::vector<RootCandidates> per_feature(X.n_features);
  for_each_multiclass_histogram(X, v, K, class_begin, n_threads, active_features,
                                [&](std::size_t f, const std::int64_t* plus, const std::int64_t* minus) {
                                  per_feature[f] = evaluate_multiclass_feature(plus, minus, K, bins.n_value_bins(f),
                                                                               bins.missing_bin(),
                                                                               static_cast<std::int32_t>(f));
                                });
  return per_feature;
}

void multiclass_histograms(const data::BinnedMatrix& X, const std::int64_t* v, std::size_t K,
                           const std::vector<std::size_t>& class_begin, int n_threads,
                           const std::uint8_t* active_features, std::int64_t* out) {
  const std::size_t hist_size = static_cast<std::size_t>(kHistBins) * K;
  std::fill(out, out + X.n_features * 2 * hist_size, 0);
  for_each_multiclass_histogram(X, v, K, class_begin, n_threads, active_features,
                                [&](std::size_t f, const std::int64_t* plus, const std::int64_t* minus) {
                                  std::copy(plus, plus + hist_size, out + f * 2 * hist_size);
                                  std::copy(minus, minus + hist_size, out + (f * 2 + 1) * hist_size);
                                });
}

RootSplit multiclass_root_from_histograms(const std::int64_t* hists, const data::BinMapper& bins, std::size_t K,
                                          const std::uint8_t* active_features, int n_threads) {
  const std::size_t n_features = bins.n_features(), hist_size = static_cast<std::size_t>(kHistBins) * K;
  std::vector<RootCandidates> per_feature(n_features);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_features), util::threads_for(n_features * hist_size, n_threads),
                     [&](std::ptrdiff_t fi) {
                       const auto f = static_cast<std::size_t>(fi);
                       if (active_features && !active_features[f]) return;
                       const std::int64_t* plus = hists + f * 2 * hist_size;
                       per_feature[f] = evaluate_multiclass_feature(plus, plus + hist_size, K, bins.n_value_bins(f),
                                                                    bins.missing_bin(), static_cast<std::int32_t>(f));
                     });
  return pick_root(per_feature, K);
}

RootSplit best_multiclass_root(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* v,
                               std::size_t K, const std::vector<std::size_t>& class_begin, int n_threads,
                               const std::uint8_t* active_features) {
  RootSplit winner = pick_root(multiclass_candidates(X, bins, v, K, class_begin, n_threads, active_features), K);
  winner.bin_accumulations = root_accumulations(X, active_features);
  return winner;
}

namespace {

// REBEL's joint root loss for the schedule of quick_driver.hpp: a feature is out once its preliminary loss
// (double) exceeds the best complete loss by a margin (kScreen) far above the rounding between the double
// and long double losses: every split of it then loses clearly. The bound holds in floating point too:
// sums only grow, and rounding is monotone. Histograms live in per-thread buffers: sums[b][k] of v over the
// rows added, minus[b][c] of the class-c rows' slot c, and plus = sums - minus.
class RootCriterion {
 public:
  using Bound = double;
  struct Progress {
    std::size_t f;
    std::int64_t* sums;
    std::int64_t* minus;
    std::int64_t* plus;
  };

  RootCriterion(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* v, std::size_t K,
                const std::vector<std::size_t>& class_begin, const std::vector<std::uint32_t>& row_class,
                const std::vector<std::uint32_t>& rows, const std::vector<std::size_t>& bounds, int n_threads,
                std::size_t n_active)
      : X_(X), bins_(bins), v_(v), K_(K), class_begin_(class_begin), row_class_(row_class), rows_(rows), bounds_(bounds),
        n_threads_(n_threads), n_active_(n_active), hist_size_(static_cast<std::size_t>(kHistBins) * K),
        scratch_(static_cast<std::size_t>(util::resolve_threads(n_threads)) * 3 * hist_size_), results_(X.n_features) {}

  Bound first_subset(std::size_t f) {
    Progress p = start(f);
    plus_of(p);
    return lowest_loss(p.plus, p.minus, K_, bins_.n_value_bins(f), bins_.missing_bin());
  }

  static bool loses(Bound prelim, Bound best) { return prelim * (1.0 - kScreen) > best; }

  Progress start(std::size_t f) {
    std::int64_t* sums = &scratch_[static_cast<std::size_t>(util::thread_index()) * 3 * hist_size_];
    Progress p{f, sums, sums + hist_size_, sums + 2 * hist_size_};
    std::fill(sums, sums + 2 * hist_size_, 0);
    add_rows(p, 0, bounds_[1]);  // subset 0 again when finishing (not counted: a re-read)
    return p;
  }

  void add(Progress& p, std::size_t j) { add_rows(p, bounds_[j], bounds_[j + 1]); }

  // A new preliminary loss after chunks 1, 2, 4, 8, ... (each costs K square roots per candidate).
  void refresh(Progress& p, std::size_t j, Bound& prelim, Bound) {
    if (j + 2 >= bounds_.size() || (j & (j - 1)) != 0) return;
    plus_of(p);
    prelim = lowest_loss(p.plus, p.minus, K_, bins_.n_value_bins(p.f), bins_.missing_bin());
  }

  bool complete(Progress& p, Bound& error) {
    plus_of(p);
    RootCandidates& r = results_[p.f];
    r = evaluate_multiclass_feature(p.plus, p.minus, K_, bins_.n_value_bins(p.f), bins_.missing_bin(),
                                    static_cast<std::int32_t>(p.f));
    error = std::numeric_limits<double>::infinity();
    for (const RootSplit& c : r.near) error = std::min(error, c.loss);
    return !r.near.empty();
  }

  static void release(Progress&) {}
  static void drop(std::size_t) {}

  // Pruning did not bite (the weight is spread): the survivors are finished by the streaming full scan,
  // which costs a fraction of chunked gathers and repeated bound checks. Same candidates, same winner.
  bool finish_in_bulk(const std::vector<std::size_t>& survivors, std::vector<std::int64_t>& done) {
    if (2 * survivors.size() <= n_active_) return false;
    std::vector<std::uint8_t> chosen(X_.n_features, 0);
    for (const std::size_t f : survivors) chosen[f] = 1;
    std::vector<RootCandidates> full = multiclass_candidates(X_, bins_, v_, K_, class_begin_, n_threads_, chosen.data());
    for (const std::size_t f : survivors) {
      results_[f] = std::move(full[f]);
      done[f] = static_cast<std::int64_t>(X_.n_samples);  // subset 0 is read again: more than a full scan
    }
    return true;
  }

  const std::vector<RootCandidates>& results() const { return results_; }

 private:
  void add_rows(Progress& p, std::size_t begin, std::size_t end) const {
    const std::uint8_t* column = X_.column(p.f);
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint32_t r = rows_[i];
      const std::size_t at = static_cast<std::size_t>(column[r]) * K_;
      const std::int64_t* vr = v_ + static_cast<std::size_t>(r) * K_;
      for (std::size_t k = 0; k < K_; ++k) p.sums[at + k] += vr[k];
      p.minus[at + row_class_[r]] += vr[row_class_[r]];
    }
  }
  void plus_of(Progress& p) const {
    for (std::size_t at = 0; at < hist_size_; ++at) p.plus[at] = p.sums[at] - p.minus[at];
  }

  const data::BinnedMatrix& X_;
  const data::BinMapper& bins_;
  const std::int64_t* v_;
  std::size_t K_;
  const std::vector<std::size_t>& class_begin_;
  const std::vector<std::uint32_t>& row_class_;
  const std::vector<std::uint32_t>& rows_;
  const std::vector<std::size_t>& bounds_;
  int n_threads_;
  std::size_t n_active_;
  std::size_t hist_size_;
  std::vector<std::int64_t> scratch_;
  std::vector<RootCandidates> results_;
};

}  // namespace

RootSplit quick_multiclass_root(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::int64_t* v,
                                std::size_t K, const std::vector<std::size_t>& class_begin, int n_threads,
                                const QuickParams& params, QuickWork& work, const std::uint8_t* active_features) {
  const std::size_t n = X.n_samples;
  const std::size_t n_features = X.n_features;
  // Each row's class and total mass; rows heaviest first.
  std::vector<std::uint32_t> row_class(n), identity(n);
  for (std::size_t c = 0; c < K; ++c)
    for (std::size_t i = class_begin[c]; i < class_begin[c + 1]; ++i) row_class[i] = static_cast<std::uint32_t>(c);
  std::iota(identity.begin(), identity.end(), 0u);
  // One pass over the vectors: each row's mass, and the node's totals (for its unsplit loss).
  std::vector<std::int64_t> mass(n), tot_p(K, 0), tot_m(K, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t* vr = v + i * K;
    std::int64_t t = 0;
    for (std::size_t k = 0; k < K; ++k) {
      t += vr[k];
      tot_p[k] += vr[k];
    }
    mass[i] = t;
    tot_p[row_class[i]] -= vr[row_class[i]];
    tot_m[row_class[i]] += vr[row_class[i]];
  }
  std::vector<std::uint32_t> rows;
  std::vector<std::int64_t> values;
  order_by_weight(identity.data(), n, mass.data(), rows, values);
  std::vector<std::int64_t> prefix(rows.size() + 1, 0);
  for (std::size_t i = 0; i < rows.size(); ++i) prefix[i + 1] = prefix[i] + values[i];
  const std::vector<std::size_t> bounds = chunk_bounds(prefix, first_subset_end(prefix, params.eta), params.n_chunks);
  std::size_t n_active = n_features;
  if (active_features) n_active = static_cast<std::size_t>(std::count(active_features, active_features + n_features, 1));
  work.bin_accumulations += static_cast<std::int64_t>(bounds[1] * n_active);

  // The node's unsplit loss, as the full search computes it: a split must beat it.
  const double unsplit = static_cast<double>(pair_loss_precise(tot_p.data(), tot_m.data(), K));
  RootCriterion c(X, bins, v, K, class_begin, row_class, rows, bounds, n_threads, n_active);
  run_quick_schedule(c, bounds, n_features, active_features, n_threads,
                     util::threads_for(bounds[1] * n_features * K, n_threads), unsplit, work);
  RootSplit winner = pick_root(c.results(), K);
  winner.loss_unsplit = unsplit;
  winner.bin_accumulations = work.bin_accumulations;
  return winner;
}

}  // namespace rebelboost::tree
