// Layer-wise tree growth: histograms per (leaf, feature), exact integer split search, partition.
//
// Samples of each leaf are kept as one contiguous range of order_ (stable partition after each layer):
//   order_: [ leaf 0 rows | leaf 1 rows | ... ]   (layer 0: the identity, never materialised)
// The last layer does not partition: it evaluates the chosen splits straight into the outputs.
#include "tree/grower.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <stdexcept>

#include "tree/histogram.hpp"
#include "tree/multiclass_split.hpp"
#include "tree/split.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

namespace {

std::int8_t sign_or(std::int64_t v, std::int8_t fallback) {
  return v > 0 ? std::int8_t{1} : (v < 0 ? std::int8_t{-1} : fallback);
}

}  // namespace

bool QuickChooser::use_quick(double mass90_fraction) {
  if (mass90_fraction > 0.5) return false;  // pruning cannot start before half the rows are in
  if (full_cost_ < 0) return false;         // measure the full scan first
  if (quick_cost_ < 0) return true;         // then the pruned pass once
  if (quick_cost_ < 0.9 * full_cost_) {
    // Clearly winning with pruning (a 10 % margin keeps timer noise on small nodes from flipping the
    // choice): re-measure the full scan now and then (its cost per row is stable).
    if (++since_full_probe_ >= 64) {
      since_full_probe_ = 0;
      return false;
    }
    return true;
  }
  // Losing with pruning: probe again after a doubling interval (at most 256 layers: a losing probe then
  // costs a few percent even where pruning is 3x slower), or at once if the mass got much more concentrated since the last probe (the
  // thing that makes pruning pay).
  // Either way, only while losing probes have cost under 1 % of the time spent in these layers.
  const bool due = ++since_quick_probe_ >= quick_probe_interval_ || mass90_fraction < 0.67 * mass_at_quick_probe_;
  if (due && probe_excess_ <= 0.01 * total_seconds_) {
    since_quick_probe_ = 0;
    quick_probe_interval_ = std::min(quick_probe_interval_ * 2, 256);
    mass_at_quick_probe_ = mass90_fraction;
    return true;
  }
  return false;
}

void QuickChooser::record(bool quick, double seconds, std::size_t node_rows) {
  if (node_rows == 0) return;
  total_seconds_ += seconds;
  if (quick && full_cost_ > 0) probe_excess_ += std::max(0.0, seconds - full_cost_ * static_cast<double>(node_rows));
  const double cost = seconds / static_cast<double>(node_rows);
  double& estimate = quick ? quick_cost_ : full_cost_;
  estimate = estimate < 0 ? cost : 0.5 * (estimate + cost);
}

TreeGrower::TreeGrower(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads,
                       std::vector<std::size_t> class_begin, QuickMode quick, QuickParams quick_params,
                       Criterion criterion)
    : X_(X), bins_(bins), n_threads_(n_threads), class_begin_(std::move(class_begin)), criterion_(criterion),
      // Pruning is implemented for the loss criterion; Gini always scans in full.
      quick_(criterion == Criterion::kGini ? QuickMode::kOff : quick), quick_params_(quick_params) {
  if (criterion_ == Criterion::kGini && class_begin_.size() != 3)
    throw std::logic_error("Gini criterion needs rows sorted by class (2 classes)");
  if (quick_ != QuickMode::kOff) {
    identity_rows_.resize(X.n_samples);
    std::iota(identity_rows_.begin(), identity_rows_.end(), 0u);
  }
  order_.resize(X.n_samples);
  scratch_.resize(X.n_samples);
  q_ordered_.resize(X.n_samples);
}

GrowResult TreeGrower::grow(SplitObjective& objective, int max_depth, const std::uint8_t* active_rows,
                            const std::uint8_t* active_features) {
  const std::size_t n = X_.n_samples;
  const std::size_t n_features = X_.n_features;
  const std::uint8_t missing = bins_.missing_bin();

  GrowResult result;
  result.outputs.assign(n, 1);
  Node root;
  root.value = 1;
  result.tree.nodes.push_back(root);
  std::vector<Leaf> leaves{{0, 0, n, 0}};
  bool identity = true;  // order_[i] == i (not materialised) until the first partition

  auto row_at = [&](std::size_t i) { return identity ? static_cast<std::uint32_t>(i) : order_[i]; };

  for (int layer = 0; layer < max_depth; ++layer) {
    if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) break;  // unfinished: the caller drops it
    const bool last_layer = layer == max_depth - 1;
    if (layer == 0 && objective.root_width() > 1) {
      // REBEL: the root is searched jointly over the K-vector step (multiclass_split.hpp).
      const std::size_t K = objective.root_width();
      const std::int64_t* v = objective.root_vectors();
      if (active_rows) {
        v_masked_.assign(v, v + n * K);
        for (std::size_t i = 0; i < n; ++i)
          if (!active_rows[i]) std::fill(v_masked_.begin() + static_cast<std::ptrdiff_t>(i * K),
                                         v_masked_.begin() + static_cast<std::ptrdiff_t>((i + 1) * K), 0);
        v = v_masked_.data();
      }
      bool quick_root = false;
      if (quick_ != QuickMode::kOff) {  // mass concentration: the work record, and auto's choice
        q_masked_.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
          std::int64_t total = 0;
          for (std::size_t k = 0; k < K; ++k) total += v[i * K + k];
          q_masked_[i] = total;
        }
        result.mass90_fraction = estimate_mass90_fraction(identity_rows_.data(), n, q_masked_.data());
        quick_root = quick_ == QuickMode::kOn ||
                     (worth_pruning(n, active_features) && chooser_[0].use_quick(result.mass90_fraction));
      }
      const auto start = std::chrono::steady_clock::now();
      RootSplit r;
      if (quick_root) {  // pruned: the same split (multiclass_split.hpp)
        QuickWork work;
        r = quick_multiclass_root(X_, bins_, v, K, class_begin_, n_threads_, quick_params_, work, active_features);
        ++result.quick_nodes;
        result.features_pruned += work.features_pruned;
      } else {
        r = best_multiclass_root(X_, bins_, v, K, class_begin_, n_threads_, active_features);
        ++result.full_nodes;
      }
      if (quick_ == QuickMode::kAuto)
        chooser_[0].record(quick_root, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), n);
      result.bin_accumulations += r.bin_accumulations;
      if (!r.found) break;  // f = +1 everywhere
      SplitInfo s;
      s.feature = r.feature;
      s.bin = r.bin;
      s.nan_left = r.nan_left;
      s.left_sum = -1;  // f = -1 on the left, +1 on the right
      s.right_sum = 1;
      const double gain = 2.0 * (r.loss_unsplit - r.loss) / kFixedPointScale;
      leaves = split_leaf(result, leaves[0], s, gain, identity, last_layer);
      if (last_layer) break;
      identity = false;
      continue;
    }
    const std::int64_t* q = objective.split_values(layer, result.outputs.data());
    if (active_rows) {
      q_masked_.assign(q, q + n);
      for (std::size_t i = 0; i < n; ++i)
        if (!active_rows[i]) q_masked_[i] = 0;
      q = q_masked_.data();
    }

    std::vector<std::size_t> open;  // leaves that may split in this layer
    for (std::size_t l = 0; l < leaves.size(); ++l)
      if (leaves[l].end - leaves[l].begin >= 2) open.push_back(l);
    if (!identity)
      for (std::size_t i = 0; i < n; ++i) q_ordered_[i] = q[order_[i]];
    const bool gini = criterion_ == Criterion::kGini;
    // Gini: where each open leaf's class-1 rows start (rows stay sorted by index, hence by class).
    std::vector<std::size_t> class_split(open.size());
    if (gini)
      for (std::size_t o = 0; o < open.size(); ++o) {
        const Leaf& leaf = leaves[open[o]];
        class_split[o] = identity ? std::clamp(class_begin_[1], leaf.begin, leaf.end)
                                  : static_cast<std::size_t>(std::lower_bound(order_.begin() + static_cast<std::ptrdiff_t>(leaf.begin),
                                                                              order_.begin() + static_cast<std::ptrdiff_t>(leaf.end),
                                                                              static_cast<std::uint32_t>(class_begin_[1])) -
                                                             order_.begin());
      }

    // Which open leaves prune features (QuickBoost): their rows heaviest first give the mass concentration.
    std::vector<std::uint8_t> use_quick(open.size(), 0);
    std::vector<double> mass90(open.size(), -1.0);
    if (quick_ != QuickMode::kOff && !open.empty()) {
      // One decision per layer (all its open leaves take the same pass), from the mass concentration of
      // its largest leaf; costs are recorded per layer too, so small leaves' fixed costs do not skew them.
      std::size_t largest = 0;
      for (std::size_t o = 1; o < open.size(); ++o)
        if (leaves[open[o]].end - leaves[open[o]].begin > leaves[open[largest]].end - leaves[open[largest]].begin) largest = o;
      {
        const Leaf& big = leaves[open[largest]];
        const std::uint32_t* rows = identity ? identity_rows_.data() + big.begin : order_.data() + big.begin;
        mass90[largest] = estimate_mass90_fraction(rows, big.end - big.begin, q);
      }
      const bool quick_layer =
          quick_ == QuickMode::kOn ||
          (quick_ == QuickMode::kAuto && worth_pruning(leaves[open[largest]].end - leaves[open[largest]].begin, active_features) &&
           chooser_[layer > 0].use_quick(mass90[largest]));
      std::fill(use_quick.begin(), use_quick.end(), quick_layer ? 1 : 0);
      if (layer == 0) result.mass90_fraction = mass90[0];
      if (quick_layer) {
        const std::int64_t before = heavy_rebuilds_;
        refresh_heavy(q, layer == 0 ? mass90[0] : -1.0);
        result.heavy_rebuilds += static_cast<std::int32_t>(heavy_rebuilds_ - before);
        if (!identity) {
          leaf_of_row_.resize(n);
          for (std::size_t l = 0; l < leaves.size(); ++l)
            for (std::size_t i = leaves[l].begin; i < leaves[l].end; ++i) leaf_of_row_[order_[i]] = static_cast<std::uint32_t>(l);
        }
      }
    }

    // best[o * n_features + f]: best split of open leaf o on feature f; every feature's histogram of a
    // leaf sums to the leaf total, which feature 0 records.
    std::vector<SplitInfo> best(open.size() * n_features);
    std::vector<std::int64_t> open_total(open.size(), 0);
    std::size_t full_rows = 0;
    for (std::size_t o = 0; o < open.size(); ++o)
      if (!use_quick[o]) full_rows += leaves[open[o]].end - leaves[open[o]].begin;
    const auto full_start = std::chrono::steady_clock::now();
    if (full_rows > 0)
      util::parallel_for(static_cast<std::ptrdiff_t>(n_features), n_threads_, [&](std::ptrdiff_t fi) {
        const std::size_t f = static_cast<std::size_t>(fi);
        if (active_features && !active_features[f]) return;  // LazyBoost: not searched this iteration
        const std::uint8_t* column = X_.column(f);
        const int n_value_bins = bins_.n_value_bins(f);
        alignas(64) std::int64_t hist[kHistBins];
        alignas(64) std::int64_t abs_hist[kHistBins];
        for (std::size_t o = 0; o < open.size(); ++o) {
          if (use_quick[o]) continue;
          const Leaf& leaf = leaves[open[o]];
          auto add = [&](std::size_t begin, std::size_t end, std::int64_t* h) {
            if (identity) {
              accumulate(column + begin, q + begin, end - begin, h);
            } else {
              accumulate_gather(column, order_.data() + begin, q_ordered_.data() + begin, end - begin, h);
            }
          };
          std::fill(hist, hist + kHistBins, 0);
          if (gini) {  // hist: class 0 rows, abs_hist: class 1 rows; then S and T per bin
            std::fill(abs_hist, abs_hist + kHistBins, 0);
            add(leaf.begin, class_split[o], hist);
            add(class_split[o], leaf.end, abs_hist);
            for (int b = 0; b < kHistBins; ++b) {
              const std::int64_t a = hist[b], c = abs_hist[b];
              hist[b] = a + c;
              abs_hist[b] = abs64(a) + abs64(c);
            }
            best[o * n_features + f] =
                best_split_gini(hist, abs_hist, n_value_bins, missing, static_cast<std::int32_t>(f));
          } else {
            add(leaf.begin, leaf.end, hist);
            best[o * n_features + f] = best_split(hist, n_value_bins, missing, static_cast<std::int32_t>(f));
          }
          if (f == 0) {
            std::int64_t total = 0;
            for (int b = 0; b < kHistBins; ++b) total += hist[b];
            open_total[o] = total;
          }
        }
      });
    const std::size_t n_active =
        active_features ? static_cast<std::size_t>(std::count(active_features, active_features + n_features, 1)) : n_features;
    if (active_features && !active_features[0])  // feature 0 records the leaf sums; without it, sum directly
      for (std::size_t o = 0; o < open.size(); ++o) {
        if (use_quick[o]) continue;
        std::int64_t total = 0;
        for (std::size_t i = leaves[open[o]].begin; i < leaves[open[o]].end; ++i) total += q[row_at(i)];
        open_total[o] = total;
      }
    if (full_rows > 0) {
      chooser_[layer > 0].record(false, std::chrono::duration<double>(std::chrono::steady_clock::now() - full_start).count(),
                      full_rows);
    }
    double quick_seconds = 0.0;
    std::size_t quick_rows = 0;
    for (std::size_t o = 0; o < open.size(); ++o) {
      const Leaf& leaf = leaves[open[o]];
      if (!use_quick[o]) {
        ++result.full_nodes;
        result.bin_accumulations += static_cast<std::int64_t>((leaf.end - leaf.begin) * n_active);
        continue;
      }
      // Pruned pass: the same winner as the full scan (quick_prune.hpp).
      const auto start = std::chrono::steady_clock::now();
      const std::uint32_t* rows = identity ? identity_rows_.data() + leaf.begin : order_.data() + leaf.begin;
      const std::size_t leaf_rows = leaf.end - leaf.begin;
      // The cached heavy rows serve as the first subset when enough of them (and of the mass) are here.
      bool cached = false;
      if (!heavy_.empty()) {
        const std::size_t m = heavy_.rows.size();
        heavy_q_.resize(m);
        std::size_t inside = 0;
        std::int64_t cached_mass = 0;
        for (std::size_t i = 0; i < m; ++i) {
          const std::uint32_t r = heavy_.rows[i];
          const bool in = identity || leaf_of_row_[r] == open[o];
          heavy_q_[i] = in ? q[r] : 0;
          inside += in;
          cached_mass += abs64(heavy_q_[i]);
        }
        std::int64_t leaf_mass = 0;
        for (std::size_t i = 0; i < leaf_rows; ++i) leaf_mass += abs64(q[rows[i]]);
        cached = 4 * inside >= m && 2 * cached_mass >= leaf_mass && cached_mass > 0;
      }
      order_by_weight(rows, leaf_rows, q, heavy_rows_, heavy_values_, cached ? heavy_.member.data() : nullptr);
      QuickWork work;
      const SplitInfo winner = quick_best_split(X_, bins_, heavy_rows_.data(), heavy_values_.data(),
                                                heavy_rows_.size(), n_threads_, quick_params_, work, quick_scratch_,
                                                active_features, cached ? &heavy_ : nullptr,
                                                cached ? heavy_q_.data() : nullptr);
      if (winner.found()) best[o * n_features + static_cast<std::size_t>(winner.feature)] = winner;
      std::int64_t total = 0;
      for (const std::int64_t v : heavy_values_) total += v;
      if (cached)
        for (const std::int64_t v : heavy_q_) total += v;
      open_total[o] = total;
      ++result.quick_nodes;
      result.features_pruned += work.features_pruned;
      result.bin_accumulations += work.bin_accumulations;
      quick_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      quick_rows += leaf.end - leaf.begin;
    }
    if (quick_rows > 0) chooser_[layer > 0].record(true, quick_seconds, quick_rows);

    // Leaf sums decide the value of leaves that do not split (re-chosen for the current step).
    std::vector<std::int64_t> leaf_sum(leaves.size(), 0);
    std::vector<std::uint8_t> is_open(leaves.size(), 0);
    for (std::size_t o = 0; o < open.size(); ++o) {
      leaf_sum[open[o]] = open_total[o];
      is_open[open[o]] = 1;
    }
    for (std::size_t l = 0; l < leaves.size(); ++l)
      if (!is_open[l])
        for (std::size_t i = leaves[l].begin; i < leaves[l].end; ++i) leaf_sum[l] += q[row_at(i)];
    for (std::size_t l = 0; l < leaves.size(); ++l) {
      Node& node = result.tree.nodes[leaves[l].node];
      node.value = sign_or(leaf_sum[l], node.value);
    }

    // Winner per open leaf in the fixed order (score, feature, bin, NaN side).
    std::vector<SplitInfo> chosen(leaves.size());
    bool any_split = false;
    for (std::size_t o = 0; o < open.size(); ++o) {
      SplitInfo winner;
      for (std::size_t f = 0; f < n_features; ++f) {
        const SplitInfo& s = best[o * n_features + f];
        if (s.found() && (!winner.found() || better(s, winner))) winner = s;
      }
      chosen[open[o]] = winner;
      any_split = any_split || winner.found();
    }

    std::vector<Leaf> next;
    for (std::size_t l = 0; l < leaves.size(); ++l) {
      const Leaf leaf = leaves[l];
      const SplitInfo& s = chosen[l];
      if (!s.found()) {
        const std::int8_t v = result.tree.nodes[leaf.node].value;
        for (std::size_t i = leaf.begin; i < leaf.end; ++i) result.outputs[row_at(i)] = v;
        next.push_back(leaf);
        continue;
      }
      const double gain = gini ? s.gini_gain / kFixedPointScale
                               : static_cast<double>(s.score - abs64(leaf_sum[l])) / (2.0 * kFixedPointScale);
      for (const Leaf& child : split_leaf(result, leaf, s, gain, identity, last_layer)) next.push_back(child);
    }
    if (!any_split) break;
    if (!last_layer) identity = false;
    leaves = std::move(next);
  }
  return result;
}

bool TreeGrower::worth_pruning(std::size_t node_rows, const std::uint8_t* active_features) const {
  // Below about a million histogram adds the full scan takes well under a millisecond: pruning could save
  // little, and timing such small passes to choose between them is mostly noise.
  std::size_t n_active = X_.n_features;
  if (active_features) n_active = static_cast<std::size_t>(std::count(active_features, active_features + X_.n_features, 1));
  return node_rows * n_active >= (std::size_t{1} << 20);
}

void TreeGrower::refresh_heavy(const std::int64_t* q, double mass90_fraction) {
  const std::size_t n = X_.n_samples;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) total += abs64(q[i]);
  if (total == 0) return;
  if (!heavy_.empty()) {
    std::int64_t cached = 0;
    for (const std::uint32_t r : heavy_.rows) cached += abs64(q[r]);
    const bool holds_enough = static_cast<double>(cached) >= 0.85 * static_cast<double>(total);
    const bool oversized = mass90_fraction >= 0.0 &&
                           static_cast<double>(heavy_.rows.size()) > 3.0 * mass90_fraction * static_cast<double>(n) + 64.0;
    if (holds_enough && !oversized) return;
  }
  // The heaviest rows up to 95 % of the mass, if that is at most a quarter of the rows: else pruning
  // rarely pays, and building the cache (a gather of every feature) would cost more than it saves.
  order_by_weight(identity_rows_.data(), n, q, heavy_rows_, heavy_values_);
  const auto target = static_cast<std::int64_t>(0.95 * static_cast<double>(total));
  std::int64_t mass = 0;
  std::size_t m = 0;
  while (m < heavy_rows_.size() && mass < target) mass += abs64(heavy_values_[m++]);
  if (4 * m > n || m > HeavyRows::kMaxRows) {
    heavy_.clear();
    return;
  }
  ++heavy_rebuilds_;
  heavy_.build(X_, std::vector<std::uint32_t>(heavy_rows_.begin(), heavy_rows_.begin() + static_cast<std::ptrdiff_t>(m)),
               n_threads_);
}

std::vector<TreeGrower::Leaf> TreeGrower::split_leaf(GrowResult& result, const Leaf& leaf, const SplitInfo& s,
                                                     double gain, bool identity, bool last_layer) {
  const std::uint8_t missing = bins_.missing_bin();
  auto row_at = [&](std::size_t i) { return identity ? static_cast<std::uint32_t>(i) : order_[i]; };
  const auto left_id = static_cast<std::uint32_t>(result.tree.nodes.size());
  Node left_node, right_node;
  left_node.value = sign_or(s.left_sum, 1);
  right_node.value = sign_or(s.right_sum, -1);
  result.tree.nodes.push_back(left_node);
  result.tree.nodes.push_back(right_node);
  Node& node = result.tree.nodes[leaf.node];
  node.feature = s.feature;
  node.threshold = bins_.threshold(static_cast<std::size_t>(s.feature), s.bin);
  node.nan_left = s.nan_left ? 1 : 0;
  node.left = left_id;
  node.right = left_id + 1;
  node.gain = gain;
  node.value = 0;

  const std::uint8_t* column = X_.column(static_cast<std::size_t>(s.feature));
  const auto bin = static_cast<std::uint8_t>(s.bin);
  const bool nan_left = s.nan_left;
  auto goes_left = [&](std::uint32_t row) {
    const std::uint8_t code = column[row];
    return code == missing ? nan_left : code <= bin;
  };
  if (last_layer) {
    for (std::size_t i = leaf.begin; i < leaf.end; ++i) {
      const std::uint32_t row = row_at(i);
      result.outputs[row] = goes_left(row) ? left_node.value : right_node.value;
    }
    return {};
  }
  // Stable partition of the leaf's rows: left block, then right block.
  std::size_t n_left = 0, n_right = 0;
  for (std::size_t i = leaf.begin; i < leaf.end; ++i) {
    const std::uint32_t row = row_at(i);
    if (goes_left(row)) {
      order_[leaf.begin + n_left++] = row;
      result.outputs[row] = left_node.value;
    } else {
      scratch_[n_right++] = row;
      result.outputs[row] = right_node.value;
    }
  }
  std::copy(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(n_right),
            order_.begin() + static_cast<std::ptrdiff_t>(leaf.begin + n_left));
  const std::size_t mid = leaf.begin + n_left;
  return {{left_id, leaf.begin, mid, leaf.depth + 1}, {left_id + 1, mid, leaf.end, leaf.depth + 1}};
}

}  // namespace rebelboost::tree
