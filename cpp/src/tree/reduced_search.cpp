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

std::vector<std::uint32_t> ReducedQuickPolicy::sample_rows(std::size_t n) {
  std::vector<std::uint32_t> sample;  // estimate_mass_fraction reads at most ~2048 rows
  for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 2048)) sample.push_back(static_cast<std::uint32_t>(i));
  return sample;
}

bool ReducedQuickPolicy::heavy_rows_are_few(std::size_t n, const std::int64_t* q) {
  const std::vector<std::uint32_t> sample = sample_rows(n);
  return n > 0 && estimate_mass_fraction(sample.data(), sample.size(), q, 0.99) <= kFewHeavyRows;
}

void ReducedQuickPolicy::append_stats(int layer, std::size_t n, const std::int64_t* q, std::int64_t* tail) const {
  if (mode_ != QuickMode::kAuto) return;
  const Kind& kind = kinds_[layer > 0];
  const std::vector<std::uint32_t> sample = sample_rows(n);
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

// Every built leaf's histograms of this participant's rows for every active feature, into
// out[(leaf * n_active + a) * stride]: built from its rows, or parent - sibling from the participant's own
// histograms of the previous layer (search_full's subtraction). The leaves keep their pool buffers.
void TreeGrower::build_local_histograms(LayerPlan& plan, const LayerRows& rows, const std::vector<std::size_t>& active,
                                        std::int64_t* out, GrowResult& result) {
  const std::size_t stride = pool_.stride(), n_active = active.size();
  const bool gini = is_impurity(criterion_);
  const auto slot = [&](std::size_t leaf, std::size_t a) { return out + (leaf * n_active + a) * stride; };
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
  result.bin_accumulations += static_cast<std::int64_t>(plan.built_rows * n_active);
}

// The leaves whose histograms a distributed layer reduces: every searched leaf (not settled: the same on
// every participant), except the right one of a
// pair of new siblings whose parent's reduced histograms are kept (the previous layer was a full scan with
// these values, or their negation): that one is parent - left, exactly (integers), on every participant.
std::vector<std::size_t> TreeGrower::reduced_leaves(const LayerPlan& plan) const {
  std::vector<std::size_t> sent;
  for (std::size_t l = 0; l < leaves_.size(); ++l) {
    const bool derived = l > 0 && leaves_[l - 1].parent_slot >= 0 && plan.relation != 0 && !reduced_prev_.empty();
    if (!derived && plan.searched[l]) sent.push_back(l);
  }
  return sent;
}

// reduced_ <- every leaf's reduced histograms: the sent ones from the message, each derived right sibling
// as relation x parent - left; then they are the next layer's parents.
void TreeGrower::complete_reduced(const LayerPlan& plan, const std::vector<std::size_t>& sent,
                                  const std::int64_t* message, std::size_t per_leaf) {
  reduced_.assign(leaves_.size() * per_leaf, 0);
  for (std::size_t k = 0; k < sent.size(); ++k)
    std::copy(message + k * per_leaf, message + (k + 1) * per_leaf, reduced_.begin() + static_cast<std::ptrdiff_t>(sent[k] * per_leaf));
  for (std::size_t l = 1; l < leaves_.size(); ++l) {
    if (leaves_[l - 1].parent_slot < 0 || plan.relation == 0 || reduced_prev_.empty()) continue;
    const std::int64_t* parent = &reduced_prev_[static_cast<std::size_t>(leaves_[l - 1].parent_slot) * per_leaf];
    const std::int64_t* left = &reduced_[(l - 1) * per_leaf];
    std::int64_t* right = &reduced_[l * per_leaf];
    for (std::size_t i = 0; i < per_leaf; ++i) right[i] = plan.relation * parent[i] - left[i];
  }
  reduced_prev_.swap(reduced_);
}

// A distributed layer: the histograms of the local rows of the leaves reduced_leaves names, each leaf's row
// count and sum of values, summed over the participants in one reduction; then the leaves with at least 2
// rows in all are searched on the summed histograms, as search_full searches them.
void TreeGrower::search_reduced(LayerPlan& plan, int layer, const std::int64_t* q, const std::uint8_t* active_features,
                                GrowResult& result) {
  const std::size_t n_features = X_.n_features, stride = pool_.stride(), n_leaves = leaves_.size();
  const LayerRows rows = layer_rows(plan, q);
  const std::vector<std::size_t> active = active_list(active_features);
  const std::vector<std::size_t> sent = reduced_leaves(plan);
  const std::size_t n_active = active.size(), per_leaf = n_active * stride;
  // This participant's histograms of every leaf, [leaf][active feature][stride] (reduced_ as scratch).
  reduced_.assign(n_leaves * per_leaf, 0);
  build_local_histograms(plan, rows, active, reduced_.data(), result);
  // The message: the sent leaves' histograms, then per leaf its rows, its sum of values and their mass,
  // then the policy's figures.
  const std::size_t hist_values = sent.size() * per_leaf;
  std::vector<std::int64_t> message(hist_values + 3 * n_leaves + reduced_quick_.stats_size(), 0);
  for (std::size_t k = 0; k < sent.size(); ++k)
    std::copy(reduced_.begin() + static_cast<std::ptrdiff_t>(sent[k] * per_leaf),
              reduced_.begin() + static_cast<std::ptrdiff_t>((sent[k] + 1) * per_leaf), message.begin() + static_cast<std::ptrdiff_t>(k * per_leaf));
  histogram_leaf_totals(plan, layer, q, per_leaf, &message[hist_values]);
  reduced_quick_.append_stats(layer, X_.n_samples, q, &message[hist_values + 3 * n_leaves]);
  util::reduce_counts(message.data(), message.size(), reducer_);
  reduced_quick_.read_stats(layer, &message[hist_values + 3 * n_leaves]);
  read_leaf_totals(plan, &message[hist_values], result, false);
  for (std::size_t l = 0; l < n_leaves; ++l)  // a settled leaf's sum is known everywhere already
    if (leaves_[l].settled) plan.total[l] = plan.relation * leaves_[l].sum;
  if (layer == 0) reduced_root_mass_ = message[hist_values + 2];
  complete_reduced(plan, sent, message.data(), per_leaf);
  plan.best.assign(n_leaves * n_features, SplitInfo{});
  const std::uint8_t missing = bins_.missing_bin();
  const auto slot = [&](std::size_t leaf, std::size_t a) { return &reduced_prev_[leaf * per_leaf + a * stride]; };
  util::parallel_for(static_cast<std::ptrdiff_t>(n_active), util::threads_for(n_leaves * n_active * stride, n_threads_),
                     [&](std::ptrdiff_t ai) {
                       const auto a = static_cast<std::size_t>(ai);
                       for (std::size_t l = 0; l < n_leaves; ++l)
                         if (plan.searched[l])
                           plan.best[l * n_features + active[a]] = feature_split(
                               slot(l, a), criterion_, bins_.n_value_bins(active[a]), missing, static_cast<std::int32_t>(active[a]));
                     });
}

// The full scan's per-leaf block: local rows, then sums of values from this participant's histograms of
// the leaf (reduced_, [leaf][active feature][stride]: no pass over its rows, which are scattered by then;
// a settled leaf's sum is filled in after the reduction), then (the root) the sum of |values|.
void TreeGrower::histogram_leaf_totals(const LayerPlan& plan, int layer, const std::int64_t* q, std::size_t per_leaf,
                                       std::int64_t* block) const {
  const std::size_t n_leaves = leaves_.size();
  if (per_leaf == 0) return local_leaf_totals(q, block, layer == 0);  // no active feature: no histogram
  for (std::size_t l = 0; l < n_leaves; ++l) {
    block[l] = static_cast<std::int64_t>(leaves_[l].rows());
    if (plan.searched[l]) block[n_leaves + l] = histogram_total(&reduced_[l * per_leaf], criterion_);
  }
  if (layer == 0)
    for (std::size_t i = 0; i < X_.n_samples; ++i) block[2 * n_leaves] += abs64(q[i]);
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

// The participant's rows of `leaf` whose |q| lies in the heaviest binary-exponent buckets that together hold
// at least `share` of its mass (a superset of the fewest heaviest rows holding it), in partition order, with
// their values. Returns their mass.
std::int64_t TreeGrower::heavy_subset(const Leaf& leaf, const std::int64_t* q, double share, std::vector<std::uint32_t>& rows,
                                      std::vector<std::int64_t>& values) const {
  std::int64_t mass[64] = {}, total = 0;
  const auto bucket = [](std::int64_t v) { return 63 - __builtin_clzll(static_cast<std::uint64_t>(v)); };
  for (std::size_t i = leaf.begin; i < leaf.end; ++i) {
    const std::int64_t v = abs64(q[partition_.row(i)]);
    if (v == 0) continue;
    mass[bucket(v)] += v;
    total += v;
  }
  std::int64_t kept = 0;
  int cut = 0;
  for (int b = 63; b >= 0; --b) {
    kept += mass[b];
    if (static_cast<double>(kept) >= share * static_cast<double>(total)) {
      cut = b;
      break;
    }
  }
  rows.clear();
  values.clear();
  for (std::size_t i = leaf.begin; i < leaf.end; ++i) {
    const std::uint32_t r = partition_.row(i);
    const std::int64_t v = q[r];
    if (v != 0 && bucket(abs64(v)) >= cut) {
      rows.push_back(r);
      values.push_back(v);
    }
  }
  return kept;
}

// The participant's bound per searched leaf x active feature (heavy_rows_bound) into bounds[leaf * n_active + a]:
// from its heavy rows (heavy_subset; one round of bounds cannot be refined chunk by chunk as the local pass
// refines them, so the subset holds 99 % of the mass for the default eta of 0.9), or, when `local` holds the
// leaves' histograms of all its rows, from those (masses: each leaf's sum of |values|).
void TreeGrower::local_bounds(const LayerPlan& plan, const std::int64_t* q, const std::vector<std::size_t>& active,
                              const std::int64_t* local, const std::int64_t* masses, std::int64_t* bounds, GrowResult& result) {
  const std::size_t n_active = active.size();
  const std::uint8_t missing = bins_.missing_bin();
  const double share = 1.0 - (1.0 - pruned_.params().eta) / 10.0;
  std::vector<std::uint32_t> heavy;
  std::vector<std::int64_t> values;
  for (std::size_t l = 0; l < leaves_.size(); ++l) {
    if (!plan.searched[l] || leaves_[l].rows() == 0) continue;
    std::int64_t mass = masses[l];
    if (!local) mass = heavy_subset(leaves_[l], q, share, heavy, values);
    const std::size_t m = heavy.size();
    const int threads = util::threads_for((local ? 1 : m) * n_active, n_threads_);
    scratch_.resize(static_cast<std::size_t>(util::resolve_threads(threads)) * kHistBins);
    util::parallel_for(static_cast<std::ptrdiff_t>(n_active), threads, [&](std::ptrdiff_t ai) {
      const auto a = static_cast<std::size_t>(ai);
      const std::size_t f = active[a];
      const std::int64_t* h = local ? local + (l * n_active + a) * kHistBins : nullptr;
      if (!local) {
        std::int64_t* scratch = &scratch_[static_cast<std::size_t>(util::thread_index()) * kHistBins];
        std::fill(scratch, scratch + kHistBins, 0);
        accumulate_gather(X_.column(f), heavy.data(), values.data(), m, scratch);
        h = scratch;
      }
      bounds[l * n_active + a] = heavy_rows_bound(h, mass, bins_.n_value_bins(f), missing);
    });
    if (!local) result.bin_accumulations += static_cast<std::int64_t>(m * n_active);
  }
}

// Reduced histograms of the given (leaf, active feature index) pairs: each participant's of its rows (copied
// from `local` when it holds them, else built), summed.
std::vector<std::int64_t> TreeGrower::reduced_histograms(const LayerRows& rows, const std::vector<std::size_t>& active,
                                                         const std::int64_t* local,
                                                         const std::vector<std::pair<std::size_t, std::size_t>>& pairs,
                                                         GrowResult& result) {
  std::vector<std::int64_t> hists(pairs.size() * kHistBins, 0);
  std::size_t work = 0;
  for (const auto& pair : pairs) work += leaves_[pair.first].rows();
  const std::size_t n_active = active.size();
  util::parallel_for(static_cast<std::ptrdiff_t>(pairs.size()), util::threads_for(work + pairs.size() * kHistBins, n_threads_),
                     [&](std::ptrdiff_t k) {
                       const auto [l, a] = pairs[static_cast<std::size_t>(k)];
                       std::int64_t* h = &hists[static_cast<std::size_t>(k) * kHistBins];
                       if (local) std::copy_n(local + (l * n_active + a) * kHistBins, kHistBins, h);
                       else rows.add(X_, active[a], leaves_[l].begin, leaves_[l].end, h);
                     });
  if (!local) result.bin_accumulations += static_cast<std::int64_t>(work);
  util::reduce_counts(hists.data(), hists.size(), reducer_);
  return hists;
}

// The pruned pass of a distributed layer (the loss criterion). Three reductions:
//  1. per leaf its rows, sum and mass; per leaf x active feature the participants' bounds, summed: a lower
//     bound on the feature's error over all rows (heavy_rows_bound);
//  2. the histograms of each leaf's lead (the lowest bound; the lowest index among equal ones): its complete
//     error, or the unsplit node's if lower, is the bar;
//  3. the histograms of the other features whose bound does not exceed the bar (none other may win or tie,
//     as in the local pass).
// Bytes: leaves x features x 8 for the bounds instead of leaves x features x 2 KiB, plus the leads' and the
// survivors' histograms. A participant whose heavy rows are few (plan.quick: no histogram jobs) bounds from
// them and builds only the leads' and survivors' histograms; one whose mass is spread builds every
// histogram, with subtraction, as the full scan does, and sends only what survives. Each decides for itself:
// the messages are the same either way.
void TreeGrower::search_reduced_pruned(LayerPlan& plan, int layer, const std::int64_t* q, const std::uint8_t* active_features,
                                       GrowResult& result) {
  const std::size_t n_features = X_.n_features, n_leaves = leaves_.size();
  const std::vector<std::size_t> active = active_list(active_features);
  const std::size_t n_active = active.size();
  LayerRows rows = layer_rows(plan, q);
  std::vector<std::int64_t> local;  // [leaf][active feature][bin] of every histogram (plan.quick false)
  if (!plan.quick) {
    local.assign(n_leaves * n_active * kHistBins, 0);
    build_local_histograms(plan, rows, active, local.data(), result);
  }
  std::vector<std::int64_t> message(3 * n_leaves + n_leaves * n_active + reduced_quick_.stats_size(), 0);
  local_leaf_totals(q, message.data(), true);
  std::int64_t* bounds = &message[3 * n_leaves];
  local_bounds(plan, q, active, local.empty() ? nullptr : local.data(), &message[2 * n_leaves], bounds, result);
  std::int64_t* tail = bounds + n_leaves * n_active;
  reduced_quick_.append_stats(layer, X_.n_samples, q, tail);
  util::reduce_counts(message.data(), message.size(), reducer_);
  reduced_quick_.read_stats(layer, tail);
  read_leaf_totals(plan, message.data(), result, true);
  if (layer == 0) reduced_root_mass_ = message[2];
  plan.best.assign(n_leaves * n_features, SplitInfo{});
  if (plan.quick) {  // where the leads' and survivors' histograms will be built from
    for (std::size_t l = 0; l < n_leaves; ++l)
      if (plan.searched[l]) plan.jobs.push_back({l, kNoLeaf, -1, -1});
    rows = layer_rows(plan, q);
  }
  const std::int64_t* kept = local.empty() ? nullptr : local.data();
  std::vector<std::pair<std::size_t, std::size_t>> leads, survivors;  // (leaf, active feature index)
  for (std::size_t l = 0; l < n_leaves; ++l) {
    const std::int64_t* b = bounds + l * n_active;
    if (plan.searched[l]) leads.emplace_back(l, static_cast<std::size_t>(std::min_element(b, b + n_active) - b));
  }
  const std::uint8_t missing = bins_.missing_bin();
  auto search = [&](std::pair<std::size_t, std::size_t> pair, const std::int64_t* h) {
    const std::size_t f = active[pair.second];
    return plan.best[pair.first * n_features + f] =
               feature_split(h, criterion_, bins_.n_value_bins(f), missing, static_cast<std::int32_t>(f));
  };
  const std::vector<std::int64_t> lead_hists = reduced_histograms(rows, active, kept, leads, result);
  for (std::size_t k = 0; k < leads.size(); ++k) {
    const auto [l, lead] = leads[k];
    const SplitInfo& s = search(leads[k], &lead_hists[k * kHistBins]);
    const std::int64_t mass = message[2 * n_leaves + l];
    std::int64_t bar = mass - abs64(plan.total[l]);
    if (s.found()) bar = std::min(bar, mass - s.score);
    const std::int64_t* b = bounds + l * n_active;
    for (std::size_t a = 0; a < n_active; ++a)
      if (a != lead && b[a] <= bar) survivors.emplace_back(l, a);
    result.features_pruned += static_cast<std::int32_t>(n_active - 1);
  }
  result.features_pruned -= static_cast<std::int32_t>(survivors.size());
  if (survivors.empty()) return;  // every participant knows it: no third reduction anywhere
  const std::vector<std::int64_t> hists = reduced_histograms(rows, active, kept, survivors, result);
  for (std::size_t k = 0; k < survivors.size(); ++k) search(survivors[k], &hists[k * kHistBins]);
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
