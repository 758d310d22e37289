// QuickBoost (thesis Ch. 3): the same best split as the full scan, skipping features that provably lose.
//
// Rows of a node are visited heaviest first (|q| descending, approximately: exact order is not needed,
// the bound holds for any order). For a fixed split s, the error on the first m rows
//   2 e_s(m) = T_m - (|L_s(m)| + |R_s(m)|),   T_m = sum_{i<m} |q_i|
// never decreases with m (each added row raises T_m by |q| and |L| + |R| by at most |q|), so neither does a
// feature's best preliminary error E_f(m) = min_s e_s(m) (Prop. 3.2). A feature whose E_f(m) already
// exceeds the best complete error (or the unsplit node's) strictly can never win, nor tie: it is pruned.
// Schedule: the first subset holds eta of the node's mass and is accumulated for every feature; features
// are then finished one by one, best preliminary error first, in M chunks of equal mass.
// The first subset may instead be a cached set of heavy rows whose codes were copied out column by
// column (HeavyRows): any subset is valid, and reading it sequentially costs a fraction of gathering the
// heaviest rows from all over each column.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "tree/split.hpp"

namespace rebelboost::tree {

struct QuickParams {
  double eta = 0.9;  // mass of the first subset (eta_kp)
  int n_chunks = 20; // M further subsets
};

// Histograms and touched-bin bitmaps of every feature, kept across nodes: only the bins a node touched are
// cleared afterwards, so a pruned pass over a few hundred heavy rows costs no 1.6 MB memset.
struct QuickScratch {
  std::vector<std::int64_t> hists;  // n_features x kHistBins, all zero between nodes
  std::vector<std::uint64_t> bits;  // n_features x 4: bins touched in the current node
  std::vector<std::int64_t> cum;    // per thread: prefix sums of the cached rows' values in bin order
};

// Heavy rows cached for the first subset: their codes copied per feature into one contiguous block, and
// the bins they fall in. The grower keeps the set across iterations while it holds most of the weight
// (boosting reweights the heavy rows a little per iteration) and rebuilds it when it no longer does.
// Per feature the cached rows are listed grouped by bin (perm, ascending bin), so a node's first-subset
// histogram is one register sum per non-empty bin (no store-to-load chains on a popular bin such as a
// pixel's zero) and its threshold scan visits just those bins.
struct HeavyRows {
  std::vector<std::uint32_t> rows;       // ascending sample indices (at most 65 535)
  std::vector<std::uint16_t> perm;       // n_features x rows.size(): positions in `rows`, grouped by bin
  std::vector<std::uint32_t> run_begin;  // n_features + 1 offsets into run_bin / run_end
  std::vector<std::uint8_t> run_bin;     // per feature, its non-empty bins, ascending
  std::vector<std::uint16_t> run_end;    // end of each bin's group in perm
  std::vector<std::uint64_t> bits;       // n_features x 4: the bins of the cached rows
  std::vector<std::uint8_t> member;      // per sample: 1 if cached
  static constexpr std::size_t kMaxRows = 65535;

  // Caches `rows` (any order; sorted here). OpenMP over features.
  void build(const data::BinnedMatrix& X, std::vector<std::uint32_t> rows, int n_threads);
  void clear();
  bool empty() const { return rows.empty(); }
};

// The QuickBoost schedule of a node, shared by every pruned search: prefix[i] is the mass of the node's
// first i rows heaviest first (prefix[0] may hold the mass of a first subset kept apart, such as cached
// rows). Subset 0 ends at row `first`; the rest is cut into n_chunks chunks of equal mass. Returns the
// cuts 0 = b_0 <= b_1 < b_2 < ... < b_last = n, chunk j being rows [b_j, b_j+1).
std::vector<std::size_t> chunk_bounds(const std::vector<std::int64_t>& prefix, std::size_t first, int n_chunks);

// The end of a first subset holding eta of the mass: the fewest heaviest rows with prefix >= eta x total.
std::size_t first_subset_end(const std::vector<std::int64_t>& prefix, double eta);

// The order in which a pruned search finishes features (the one tie rule of every pruned search): the
// active features by preliminary bound, ascending, the lowest index first among equal bounds. The first
// is the lead, finished alone; its complete loss then prunes the others before they are dispatched.
template <typename Bound>
std::vector<std::size_t> finishing_order(const std::vector<Bound>& prelim, const std::uint8_t* active_features) {
  std::vector<std::size_t> order;
  for (std::size_t f = 0; f < prelim.size(); ++f)
    if (!active_features || active_features[f]) order.push_back(f);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return prelim[a] < prelim[b]; });
  return order;
}

// Survivors of the lead (order[1..]) finish on the calling thread when they are few: waking the others
// would cost more than their work.
inline int finishing_threads(std::size_t n_survivors, int n_threads) { return n_survivors > 8 ? n_threads : 1; }

struct QuickWork {
  std::int64_t bin_accumulations = 0;
  std::int32_t features_pruned = 0;
};

// Rows of a node (any order) sorted heaviest first: counting sort on the binary exponent of |q| (rows with
// q = 0 are dropped: they never change a sum). Also returns the values in that order. Rows with
// skip[row] != 0 (optional) are left out too.
void order_by_weight(const std::uint32_t* rows, std::size_t n, const std::int64_t* q, std::vector<std::uint32_t>& out_rows,
                     std::vector<std::int64_t>& out_values, const std::uint8_t* skip = nullptr);

// Estimated fraction of a node's rows that hold 90 % of its |q| mass (the heaviest ones): from a strided
// sample of at most ~2048 rows, bucketed by binary exponent, interpolated inside the last bucket. Cheap
// enough to run for every node (a few microseconds).
double estimate_mass90_fraction(const std::uint32_t* rows, std::size_t n, const std::int64_t* q);
// The same for any share of the mass in (0, 1].
double estimate_mass_fraction(const std::uint32_t* rows, std::size_t n, const std::int64_t* q, double mass_share);

// Best split of the node whose rows (heaviest first) and values are given; identical to the best over
// features of best_split() on full histograms (found() false when no split strictly beats the node).
// OpenMP over features for the first subset and over batches of features afterwards; the result does not
// depend on n_threads (the work done may).
// With `heavy`, the node is heavy->rows (with values heavy_values[i], 0 for rows outside the node) plus
// `rows`, which must not repeat a cached row; the cached rows are the first subset and `rows` (heaviest
// first) are split into the M chunks. work.bin_accumulations counts the node's rows with non-zero values
// (the cached rows outside the node only add zeros).
SplitInfo quick_best_split(const data::BinnedMatrix& X, const data::BinMapper& bins, const std::uint32_t* rows,
                           const std::int64_t* values, std::size_t n, int n_threads, const QuickParams& params,
                           QuickWork& work, QuickScratch& scratch, const std::uint8_t* active_features = nullptr,
                           const HeavyRows* heavy = nullptr, const std::int64_t* heavy_values = nullptr);

// Highest |L| + |R| over every split of one histogram, ignoring the unsplit baseline (lowest int64 when the
// feature has no split at all). `bits` (4 words) marks the non-empty bins: only those move a threshold's
// sums, so only they are visited.
std::int64_t best_split_score(const std::int64_t* hist, const std::uint64_t* bits, int n_value_bins, int missing_bin);

}  // namespace rebelboost::tree
