// The distributed layer search: the full scan of reduced histograms (one reduction per layer), the pruned
// pass (three smaller reductions), the multi-class root, and the policy that picks the pass (see
// reduced_search.hpp and docs/distributed.md).
#include "tree/reduced_search.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "tree/grower.hpp"
#include "tree/histogram.hpp"
#include "tree/layer_plan.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"

namespace rebelboost::tree {

std::int64_t heavy_rows_bound(const std::int64_t* hist, std::int64_t heavy_mass, int n_value_bins, int missing_bin) {
  static constexpr std::uint64_t kEveryBin[4] = {~0ULL, ~0ULL, ~0ULL, ~0ULL};
  const std::int64_t score = best_split_score(hist, kEveryBin, n_value_bins, missing_bin);
  // A feature without any split never wins, whatever its bound: the unsplit error stands in.
  return score == std::numeric_limits<std::int64_t>::min() ? heavy_mass : heavy_mass - score;
}

bool ReducedQuickPolicy::choose(int layer, std::size_t n_active) {
  if (mode_ != QuickMode::kAuto) return mode_ == QuickMode::kOn;
  Kind& kind = kinds_[layer > 0];
  // As the local choice (PrunedSearch::worth_pruning): below about a million histogram adds, the full scan
  // is cheap and timing the passes is noise.
  if (!kind.have_stats || static_cast<std::size_t>(kind.rows) * n_active < (std::size_t{1} << 20)) return false;
  return kind.chooser.use_quick(kind.mass90);
}

void ReducedQuickPolicy::append_stats(int layer, std::size_t n, const std::int64_t* q, std::int64_t* tail) const {
  if (mode_ != QuickMode::kAuto) return;
  const Kind& kind = kinds_[layer > 0];
  std::vector<std::uint32_t> sample;  // estimate_mass90_fraction reads at most ~2048 rows
  for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 2048)) sample.push_back(static_cast<std::uint32_t>(i));
  tail[0] = 1;
  tail[1] = static_cast<std::int64_t>(n);
  tail[2] = n == 0 ? 0 : static_cast<std::int64_t>(estimate_mass90_fraction(sample.data(), sample.size(), q) * static_cast<double>(n));
  tail[3] = kind.pending ? kind.pending_ns : 0;
  tail[4] = kind.pending ? 1 : 0;
}

void ReducedQuickPolicy::read_stats(int layer, const std::int64_t* tail) {
  if (mode_ != QuickMode::kAuto) return;
  Kind& kind = kinds_[layer > 0];
  const std::int64_t participants = tail[0];
  // Every participant has run the same layers, so a time is pending everywhere or nowhere.
  if (tail[4] != (kind.pending ? participants : 0)) throw std::logic_error("participants disagree on the layers run");
  if (kind.pending) {
    const double mean_seconds = static_cast<double>(tail[3]) / static_cast<double>(participants) * 1e-9;
    kind.chooser.record(kind.pending_quick, mean_seconds, static_cast<std::size_t>(kind.pending_rows));
    kind.pending = false;
  }
  kind.have_stats = true;
  kind.rows = tail[1];
  kind.mass90 = tail[1] > 0 ? static_cast<double>(tail[2]) / static_cast<double>(tail[1]) : 1.0;
}

void ReducedQuickPolicy::finish_layer(int layer, bool quick, double seconds) {
  if (mode_ != QuickMode::kAuto) return;
  Kind& kind = kinds_[layer > 0];
  kind.pending = true;
  kind.pending_quick = quick;
  kind.pending_rows = kind.rows;
  kind.pending_ns = static_cast<std::int64_t>(seconds * 1e9);
}

std::vector<std::size_t> TreeGrower::active_list(const std::uint8_t* active_features) const {
  std::vector<std::size_t> active;
  for (std::size_t f = 0; f < X_.n_features; ++f)
    if (!active_features || active_features[f]) active.push_back(f);
  return active;
}

// Each leaf's global row count, sum of values and (pruned pass) sum of |values| from a reduced message's
// per-leaf block [rows..., sums..., masses...]: the leaves searched are those with at least 2 rows.
void TreeGrower::read_leaf_totals(LayerPlan& plan, const std::int64_t* block, GrowResult& result, bool quick) {
  const std::size_t n_leaves = leaves_.size();
  plan.totals_complete = true;
  for (std::size_t l = 0; l < n_leaves; ++l) {
    plan.searched[l] = plan.searched[l] && block[l] >= 2;
    plan.total[l] = block[n_leaves + l];
    (quick ? result.quick_nodes : result.full_nodes) += plan.searched[l];
  }
}

// A distributed layer: the histograms of the local rows of every leaf not settled (built, or parent - sibling
// from this participant's own histograms of the previous layer, as search_full does), each leaf's row
// count and sum of values, summed over the participants in one reduction; then the leaves with at least 2
// rows in all are searched on the summed histograms, as search_full searches them.
void TreeGrower::search_reduced(LayerPlan& plan, int layer, const std::int64_t* q, const std::uint8_t* active_features,
                                GrowResult& result) {
  const std::size_t n_features = X_.n_features, stride = pool_.stride(), n_leaves = leaves_.size();
  const bool gini = criterion_ == Criterion::kGini;
  const LayerRows rows = layer_rows(plan, q);
  const std::vector<std::size_t> active = active_list(active_features);
  const std::size_t n_active = active.size(), hist_values = n_leaves * n_active * stride;
  // [leaf][active feature][stride] histograms, then per leaf its rows, then its sum of values, then the
  // policy's figures.
  std::vector<std::int64_t> message(hist_values + 2 * n_leaves + reduced_quick_.stats_size(), 0);
  const auto slot = [&](std::size_t leaf, std::size_t a) { return &message[(leaf * n_active + a) * stride]; };
  const int threads = util::threads_for((plan.built_rows + plan.jobs.size() * kHistBins) * n_active, n_threads_);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_active), threads, [&](std::ptrdiff_t ai) {
    const auto a = static_cast<std::size_t>(ai);
    const std::size_t f = active[a];
    for (const LayerPlan::Job& job : plan.jobs) {
      std::int64_t* h = job.buffer >= 0 ? pool_.at(job.buffer, f) : slot(job.leaf, a);
      std::fill(h, h + stride, 0);
      rows.add_part(X_, f, leaves_[job.leaf], job.leaf, gini, 0, 1, h);
      if (job.buffer >= 0) std::copy(h, h + stride, slot(job.leaf, a));
      if (job.large == kNoLeaf) continue;
      std::int64_t* parent = pool_.at(job.large_buffer, f);  // this participant's: becomes the larger sibling's
      if (plan.relation < 0) negate_histogram(parent, stride);
      subtract_histogram(parent, h, stride);
      std::copy(parent, parent + stride, slot(job.large, a));
    }
  });
  keep_histograms(plan, result);
  local_leaf_totals(q, &message[hist_values], false);
  reduced_quick_.append_stats(layer, X_.n_samples, q, &message[hist_values + 2 * n_leaves]);
  util::reduce_counts(message.data(), message.size(), reducer_);
  reduced_quick_.read_stats(layer, &message[hist_values + 2 * n_leaves]);
  read_leaf_totals(plan, &message[hist_values], result, false);
  plan.best.assign(n_leaves * n_features, SplitInfo{});
  const std::uint8_t missing = bins_.missing_bin();
  util::parallel_for(static_cast<std::ptrdiff_t>(n_active), util::threads_for(n_leaves * n_active * stride, n_threads_),
                     [&](std::ptrdiff_t ai) {
                       const auto a = static_cast<std::size_t>(ai);
                       for (std::size_t l = 0; l < n_leaves; ++l)
                         if (plan.searched[l])
                           plan.best[l * n_features + active[a]] = feature_split(
                               slot(l, a), criterion_, bins_.n_value_bins(active[a]), missing, static_cast<std::int32_t>(active[a]));
                     });
  result.bin_accumulations += static_cast<std::int64_t>(plan.built_rows * n_active);
}

// Per leaf: local rows, then sums of values, then (with_mass) sums of |values|.
void TreeGrower::local_leaf_totals(const std::int64_t* q, std::int64_t* block, bool with_mass) const {
  const std::size_t n_leaves = leaves_.size();
  for (std::size_t l = 0; l < n_leaves; ++l) {
    block[l] = static_cast<std::int64_t>(leaves_[l].rows());
    for (std::size_t i = leaves_[l].begin; i < leaves_[l].end; ++i) {
      const std::int64_t v = q[partition_.row(i)];
      block[n_leaves + l] += v;
      if (with_mass) block[2 * n_leaves + l] += abs64(v);
    }
  }
}

// The participant's bound per leaf x active feature (heavy_rows_bound), from its heaviest rows of the leaf
// holding most of their mass, into bounds[leaf * n_active + a]. Returns the histogram adds it made.
std::int64_t TreeGrower::local_bounds(const LayerPlan& plan, const std::int64_t* q, const std::vector<std::size_t>& active,
                                      std::int64_t* bounds) {
  const std::size_t n_active = active.size();
  const std::uint8_t missing = bins_.missing_bin();
  // One round of bounds cannot be refined chunk by chunk as the local pass refines them, so the subset holds
  // more of the mass: 0.99 for the default eta of 0.9 (a tenth of what the local first subset leaves out).
  const double subset_mass = 1.0 - (1.0 - pruned_.params().eta) / 10.0;
  std::int64_t adds = 0;
  std::vector<std::uint32_t> heavy;
  std::vector<std::int64_t> values, prefix;
  std::vector<std::pair<std::uint32_t, std::int64_t>> subset;
  for (std::size_t l = 0; l < leaves_.size(); ++l) {
    const Leaf& leaf = leaves_[l];
    if (!plan.searched[l] || leaf.rows() == 0) continue;
    order_by_weight(partition_.rows(leaf.begin), leaf.rows(), q, heavy, values);
    prefix.assign(1, 0);
    for (const std::int64_t v : values) prefix.push_back(prefix.back() + abs64(v));
    const std::size_t m = first_subset_end(prefix, subset_mass);
    subset.clear();  // in row order: the gather reads each column forwards
    for (std::size_t i = 0; i < m; ++i) subset.emplace_back(heavy[i], values[i]);
    std::sort(subset.begin(), subset.end());
    for (std::size_t i = 0; i < m; ++i) std::tie(heavy[i], values[i]) = subset[i];
    const int threads = util::threads_for(m * n_active, n_threads_);
    scratch_.resize(static_cast<std::size_t>(util::resolve_threads(threads)) * kHistBins);
    util::parallel_for(static_cast<std::ptrdiff_t>(n_active), threads, [&](std::ptrdiff_t ai) {
      const std::size_t f = active[static_cast<std::size_t>(ai)];
      std::int64_t* h = &scratch_[static_cast<std::size_t>(util::thread_index()) * kHistBins];
      std::fill(h, h + kHistBins, 0);
      accumulate_gather(X_.column(f), heavy.data(), values.data(), m, h);
      bounds[l * n_active + static_cast<std::size_t>(ai)] = heavy_rows_bound(h, prefix[m], bins_.n_value_bins(f), missing);
    });
    adds += static_cast<std::int64_t>(m * n_active);
  }
  return adds;
}

// Reduced histograms of the given (leaf, feature) pairs: each participant's of its rows, summed. Adds the
// histogram adds made to `adds`.
std::vector<std::int64_t> TreeGrower::reduced_histograms(const LayerRows& rows,
                                                         const std::vector<std::pair<std::size_t, std::size_t>>& pairs,
                                                         std::int64_t& adds) {
  std::vector<std::int64_t> hists(pairs.size() * kHistBins, 0);
  std::size_t work = 0;
  for (const auto& [l, f] : pairs) work += leaves_[l].rows();
  util::parallel_for(static_cast<std::ptrdiff_t>(pairs.size()), util::threads_for(work + pairs.size() * kHistBins, n_threads_),
                     [&](std::ptrdiff_t k) {
                       const auto [l, f] = pairs[static_cast<std::size_t>(k)];
                       rows.add(X_, f, leaves_[l].begin, leaves_[l].end, &hists[static_cast<std::size_t>(k) * kHistBins]);
                     });
  adds += static_cast<std::int64_t>(work);
  util::reduce_counts(hists.data(), hists.size(), reducer_);
  return hists;
}

// The pruned pass of a distributed layer (the loss criterion). Three reductions:
//  1. per leaf its rows, sum and mass; per leaf x active feature the participants' bounds, summed: a lower
//     bound on the feature's error over all rows (heavy_rows_bound);
//  2. the histograms of each leaf's lead (the lowest bound; the lowest index among equal ones): its complete
//     error, or the unsplit node's if lower, is the bar;
//  3. the histograms of the other features whose bound does not exceed the bar (none may win or tie
//     otherwise, as in the local pass).
// Bytes: leaves x features x 8 for the bounds instead of leaves x features x 2 KiB, plus the lead's and the
// survivors' histograms.
void TreeGrower::search_reduced_pruned(LayerPlan& plan, int layer, const std::int64_t* q, const std::uint8_t* active_features,
                                       GrowResult& result) {
  const std::size_t n_features = X_.n_features, n_leaves = leaves_.size();
  const std::vector<std::size_t> active = active_list(active_features);
  const std::size_t n_active = active.size();
  std::vector<std::int64_t> message(3 * n_leaves + n_leaves * n_active + reduced_quick_.stats_size(), 0);
  local_leaf_totals(q, message.data(), true);
  std::int64_t* bounds = &message[3 * n_leaves];
  result.bin_accumulations += local_bounds(plan, q, active, bounds);
  std::int64_t* tail = bounds + n_leaves * n_active;
  reduced_quick_.append_stats(layer, X_.n_samples, q, tail);
  util::reduce_counts(message.data(), message.size(), reducer_);
  reduced_quick_.read_stats(layer, tail);
  read_leaf_totals(plan, message.data(), result, true);
  plan.best.assign(n_leaves * n_features, SplitInfo{});

  for (std::size_t l = 0; l < n_leaves; ++l)
    if (plan.searched[l]) plan.jobs.push_back({l, kNoLeaf, -1, -1});
  const LayerRows rows = layer_rows(plan, q);
  std::vector<std::pair<std::size_t, std::size_t>> leads, survivors;
  std::vector<std::size_t> lead_of(n_leaves);
  for (std::size_t l = 0; l < n_leaves; ++l) {
    if (!plan.searched[l]) continue;
    const std::int64_t* b = bounds + l * n_active;
    lead_of[l] = static_cast<std::size_t>(std::min_element(b, b + n_active) - b);
    leads.emplace_back(l, active[lead_of[l]]);
  }
  const std::uint8_t missing = bins_.missing_bin();
  auto search = [&](std::size_t l, std::size_t f, const std::int64_t* h) {
    return plan.best[l * n_features + f] =
               feature_split(h, criterion_, bins_.n_value_bins(f), missing, static_cast<std::int32_t>(f));
  };
  const std::vector<std::int64_t> lead_hists = reduced_histograms(rows, leads, result.bin_accumulations);
  for (std::size_t k = 0; k < leads.size(); ++k) {
    const auto [l, f] = leads[k];
    const SplitInfo& s = search(l, f, &lead_hists[k * kHistBins]);
    const std::int64_t mass = message[2 * n_leaves + l];
    std::int64_t bar = mass - abs64(plan.total[l]);
    if (s.found()) bar = std::min(bar, mass - s.score);
    const std::int64_t* b = bounds + l * n_active;
    for (std::size_t a = 0; a < n_active; ++a)
      if (a != lead_of[l] && b[a] <= bar) survivors.emplace_back(l, active[a]);
    result.features_pruned += static_cast<std::int32_t>(n_active - 1);
  }
  result.features_pruned -= static_cast<std::int32_t>(survivors.size());
  if (survivors.empty()) return;  // every participant knows it: no third reduction anywhere
  const std::vector<std::int64_t> hists = reduced_histograms(rows, survivors, result.bin_accumulations);
  for (std::size_t k = 0; k < survivors.size(); ++k) search(survivors[k].first, survivors[k].second, &hists[k * kHistBins]);
}

RootSplit TreeGrower::reduced_multiclass_root(const std::int64_t* v, std::size_t K, const std::uint8_t* active_features) {
  std::vector<std::int64_t> hists(X_.n_features * 2 * static_cast<std::size_t>(kHistBins) * K);
  multiclass_histograms(X_, v, K, class_begin_, n_threads_, active_features, hists.data());
  util::reduce_counts(hists.data(), hists.size(), reducer_);
  RootSplit r = multiclass_root_from_histograms(hists.data(), bins_, K, active_features, n_threads_);
  r.bin_accumulations = static_cast<std::int64_t>(X_.n_samples) *
                        (active_features ? std::count(active_features, active_features + X_.n_features, 1)
                                         : static_cast<std::ptrdiff_t>(X_.n_features));
  return r;
}

}  // namespace rebelboost::tree
