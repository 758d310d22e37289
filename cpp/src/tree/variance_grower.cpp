// Layer-wise regression trees on histograms with subtraction (see variance_grower.hpp).
#include "tree/variance_grower.hpp"

#include <algorithm>
#include <numeric>

#include "tree/feature_groups.hpp"
#include "tree/histogram.hpp"
#include "tree/split.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

namespace {

// Histograms a layer may hold at once (kept per leaf for subtraction); beyond it, each (leaf, feature)
// histogram is built in a scratch buffer and searched at once, without subtraction.
constexpr std::size_t kHistBudgetBytes = std::size_t{256} << 20;

// Packing (choose_packing) is exact below these: fewer rows than kPackRows, sum |s| below kPackAbs.
constexpr std::size_t kPackRows = std::size_t{1} << 23;
constexpr std::int64_t kPackAbs = std::int64_t{1} << 39;

}  // namespace

// Bin b's S and W from a histogram: interleaved (S, W), or packed count * 2^40 + S (W = count * t0).
void VarianceGrower::bin_sums(const std::int64_t* h, int b, std::int64_t& S, std::int64_t& W) const {
  if (!packed_) {
    S = h[2 * b];
    W = h[2 * b + 1];
    return;
  }
  const std::int64_t v = h[b];
  S = static_cast<std::int64_t>(static_cast<std::uint64_t>(v) << 24) >> 24;  // the low 40 bits, sign-extended
  W = ((v - S) >> kCountShift) * t0_;
}

// The best split of feature f from its histogram h.
SplitInfo VarianceGrower::feature_best(const std::int64_t* h, std::size_t f, std::int64_t min_weight) const {
  std::int64_t sums[kHistBins], weights[kHistBins];
  const int n_value_bins = bins_.n_value_bins(f), missing = bins_.missing_bin();
  for (int b = 0; b < n_value_bins; ++b) bin_sums(h, b, sums[b], weights[b]);
  bin_sums(h, missing, sums[missing], weights[missing]);
  return best_split_variance(sums, weights, n_value_bins, missing, static_cast<std::int32_t>(f), min_weight);
}

VarianceGrower::VarianceGrower(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads,
                               QuickMode quick, QuickParams quick_params)
    : X_(X), bins_(bins), n_threads_(n_threads), hist_size_(X.n_features * kHistBins * 2),
      quick_(X, bins, n_threads, quick, quick_params) {}

void VarianceGrower::release(std::size_t leaf) {
  if (leaves_[leaf].hist >= 0) free_.push_back(leaves_[leaf].hist);
  leaves_[leaf].hist = -1;
}

int VarianceGrower::take_buffer() {
  if (!free_.empty()) {
    const int b = free_.back();
    free_.pop_back();
    return b;
  }
  const auto b = static_cast<int>(pool_.size() / hist_size_);
  pool_.resize(pool_.size() + hist_size_);
  return b;
}

// Builds the histograms of the open leaves listed in `which` (each must hold a buffer) from their rows.
void VarianceGrower::build(const std::vector<std::size_t>& which, const std::int64_t* s, const std::int64_t* t,
                           const std::uint8_t* active_features) {
  const std::size_t F = X_.n_features, N = X_.n_samples;
  std::size_t rows = 0;
  for (std::size_t l : which) rows += leaves_[l].end - leaves_[l].begin;
  const bool root = which.size() == 1 && leaves_[which[0]].end - leaves_[which[0]].begin == N;
  // An add per row and feature; below the root the row's code is a gathered read besides.
  const int threads = util::threads_for(rows * F * (root ? 1 : 2), n_threads_);
  const std::uint32_t* order = root ? nullptr : partition_.rows(0);
  // Job g * L + j: leaf j's feature group g (feature_groups.hpp), one pass over the leaf's rows. The static
  // schedule gives each thread a run of groups of every leaf, so siblings of very different sizes still share
  // the threads evenly.
  const std::size_t L = which.size();
  const std::size_t groups = group_count(F, packed_ ? kMaxGroup : kMaxGroup / 2, static_cast<std::size_t>(threads));
  util::parallel_for(static_cast<std::ptrdiff_t>(L * groups), threads, [&](std::ptrdiff_t job) {
    const Leaf& leaf = leaves_[which[static_cast<std::size_t>(job) % L]];
    const std::size_t g = static_cast<std::size_t>(job) / L;
    FeatureGroup group;
    for (std::size_t f = g * F / groups; f < (g + 1) * F / groups; ++f) {
      std::int64_t* h = hist(leaf.hist) + f * kHistBins * 2;
      std::fill(h, h + kHistBins * 2, 0);
      if (active_features && !active_features[f]) continue;
      group.columns[group.size] = X_.column(f);
      group.hists[group.size++] = h;
    }
    const std::uint32_t* leaf_rows = root ? nullptr : order + leaf.begin;  // the root: rows in order, no indirection
    const std::size_t n = leaf.end - leaf.begin;
    // Below the root, the leaf's values in its rows' order: carried by the partition that made the leaf.
    if (packed_)
      add_group_packed(group, leaf_rows, n, (root ? packed_source_ : ordered_s_.data()) + leaf.begin, pack_offset_);
    else
      add_group_pairs(group, leaf_rows, n, (root ? s : ordered_s_.data()) + leaf.begin, (root ? t : ordered_t_.data()) + leaf.begin);
  });
}

// Each open leaf's best split (not found: it stays a leaf). Leaves with a buffer are searched from it; the
// others build each feature's histogram in scratch space first.
std::vector<SplitInfo> VarianceGrower::search(const std::vector<std::size_t>& open, std::int64_t min_leaf_weight,
                                              const std::uint8_t* active_features) {
  const std::size_t F = X_.n_features;
  std::vector<SplitInfo> best(open.size() * F);
  std::size_t rows = 0;
  for (std::size_t l : open) rows += leaves_[l].hist < 0 ? leaves_[l].end - leaves_[l].begin : kHistBins;
  for (std::size_t l : open)
    if (leaves_[l].hist < 0) work_.bin_accumulations += static_cast<std::int64_t>((leaves_[l].end - leaves_[l].begin) * n_active_);
  const int threads = util::threads_for(rows * F, n_threads_);
  util::parallel_for(static_cast<std::ptrdiff_t>(open.size() * F), threads, [&](std::ptrdiff_t job) {
    const Leaf& leaf = leaves_[open[static_cast<std::size_t>(job) / F]];
    const std::size_t f = static_cast<std::size_t>(job) % F;
    if (active_features && !active_features[f]) return;
    if (leaf.hist >= 0) {
      best[static_cast<std::size_t>(job)] = feature_best(hist(leaf.hist) + f * kHistBins * 2, f, min_leaf_weight);
      return;
    }
    std::int64_t h[kHistBins * 2] = {};
    const std::uint8_t* column = X_.column(f);
    for (std::size_t i = leaf.begin; i < leaf.end; ++i) {
      const std::uint32_t r = partition_.row(i);
      if (packed_) {
        h[column[r]] += packed_source_[r] + pack_offset_;
      } else {
        h[2 * column[r]] += search_s_[r];
        h[2 * column[r] + 1] += search_t_[r];
      }
    }
    best[static_cast<std::size_t>(job)] = feature_best(h, f, min_leaf_weight);
  });
  std::vector<SplitInfo> winners(open.size());
  for (std::size_t i = 0; i < open.size(); ++i)
    for (std::size_t f = 0; f < F; ++f) {
      const SplitInfo& c = best[i * F + f];
      if (c.found() && (!winners[i].found() || better(c, winners[i]))) winners[i] = c;
    }
  return winners;
}

// The left side's S and W of `split` from the feature's interleaved histogram h.
void VarianceGrower::left_sums(const std::int64_t* h, const SplitInfo& split, Leaf& left) const {
  std::int64_t S = 0, W = 0;
  for (int b = 0; b <= split.bin; ++b) {
    bin_sums(h, b, S, W);
    left.S += S;
    left.W += W;
  }
  if (split.nan_left) {
    bin_sums(h, bins_.missing_bin(), S, W);
    left.S += S;
    left.W += W;
  }
}

RegressionTree VarianceGrower::grow(const std::int64_t* s, const std::int64_t* t, int max_depth,
                                    std::int64_t min_leaf_weight, const std::uint8_t* active_features,
                                    const UniformRows* uniform) {
  const double begin = util::thread_cpu_seconds();  // neither preemptions nor spinning workers count
  search_s_ = s;
  search_t_ = t;
  RegressionTree tree;
  tree.missing_bin = bins_.missing_bin();
  start(s, t, max_depth, active_features, uniform, tree);
  std::vector<std::size_t> open{0}, finished;
  for (layer_ = 0; layer_ < max_depth && !open.empty(); ++layer_)
    open = split_layer(open, layer_ + 1 == max_depth, min_leaf_weight, active_features, tree, finished);
  finished.insert(finished.end(), open.begin(), open.end());
  finish(tree, finished);
  quick_.record(tree.quick_nodes > 0, util::thread_cpu_seconds() - begin);
  return tree;
}

// The root: every row in order, its sums (and the packing), its histograms when they fit the budget.
void VarianceGrower::start(const std::int64_t* s, const std::int64_t* t, int max_depth,
                           const std::uint8_t* active_features, const UniformRows* uniform, RegressionTree& tree) {
  const std::size_t N = X_.n_samples;
  partition_.reset(N);
  deferred_.clear();
  leaves_.clear();
  free_.clear();
  for (int b = static_cast<int>(pool_.size() / std::max<std::size_t>(hist_size_, 1)); b-- > 0;) free_.push_back(b);
  Leaf root;
  root.end = N;
  if (uniform) pack_uniform(s, *uniform, root);
  else choose_packing(s, t, root);
  ordered_s_.resize(N);
  if (!packed_) ordered_t_.resize(N);
  tree.nodes.emplace_back();
  leaves_.push_back(root);
  work_ = {};
  quick_nodes_ = full_nodes_ = 0;
  n_active_ = active_features ? static_cast<std::size_t>(std::count(active_features, active_features + X_.n_features, 1))
                              : X_.n_features;
  quick_layer_ = max_depth > 0 && quick_.choose(0, nullptr, N, s, t, active_features);  // the root: rows in order
  if (max_depth > 0 && !quick_layer_ && hist_size_ * sizeof(std::int64_t) <= kHistBudgetBytes) {
    const util::StageScope stage(clock_, util::Stage::kHistograms);
    leaves_[0].hist = take_buffer();
    build({0}, s, t, active_features);
    work_.bin_accumulations += static_cast<std::int64_t>(N * n_active_);
  }
}

// One layer: the open leaves' best splits, their partitions (side by side), the children (with their
// histograms unless the layer is the last); leaves that do not split join `finished`. Returns the children.
std::vector<std::size_t> VarianceGrower::split_layer(const std::vector<std::size_t>& open, bool last,
                                                     std::int64_t min_leaf_weight, const std::uint8_t* active_features,
                                                     RegressionTree& tree, std::vector<std::size_t>& finished) {
  std::vector<std::size_t> searchable;
  for (std::size_t l : open) {
    const Leaf& leaf = leaves_[l];
    if (leaf.end - leaf.begin >= 2 && leaf.W >= 2 * min_leaf_weight && leaf.W > 0) {
      searchable.push_back(l);
      continue;
    }
    finished.push_back(l);
    release(l);
  }
  std::vector<SplitInfo> splits;
  {
    const util::StageScope stage(clock_, quick_layer_ ? util::Stage::kQuickSearch : util::Stage::kHistograms);
    splits = quick_layer_ ? search_pruned(searchable, min_leaf_weight, active_features)
                          : search(searchable, min_leaf_weight, active_features);
    if (!quick_layer_) full_nodes_ += static_cast<std::int32_t>(searchable.size());
  }
  const util::StageScope partitioning(clock_, util::Stage::kPartition);
  std::size_t kept = 0;  // children that will be searched, for the histogram budget
  for (const SplitInfo& split : splits) kept += split.found() ? 2 : 0;
  // The last layer's children need no rows of their own: their sums come from the parents' histograms, or
  // from the parents' rows for pruned parents (partition_all sums those before it partitions), and
  // outputs() routes the parents' rows.
  const std::vector<Leaf> lefts = partition_all(searchable, splits, /*defer=*/last);
  quick_layer_ = !last && choose_next(searchable, splits, lefts, active_features);
  const bool subtract = !last && !quick_layer_ && kept * hist_size_ * sizeof(std::int64_t) <= kHistBudgetBytes;
  std::vector<std::size_t> next;
  for (std::size_t i = 0; i < searchable.size(); ++i) {
    if (!splits[i].found()) {
      finished.push_back(searchable[i]);
      release(searchable[i]);
      continue;
    }
    add_children(searchable[i], splits[i], lefts[i], subtract, tree, next);
  }
  for (std::size_t k = 0; k < deferred_.size(); ++k) {
    deferred_[k].left = next[2 * k];
    deferred_[k].right = next[2 * k + 1];
    leaves_[next[2 * k + 1]].begin = leaves_[next[2 * k + 1]].end;  // empty until complete()
  }
  if (subtract) {
    const util::StageScope stage(clock_, util::Stage::kHistograms);
    subtract_siblings(next, search_s_, search_t_, active_features);
  }
  return next;
}

// The split leaves' partitions (stable, all leaves of the layer in one parallel step); returns each one's left
// child: its range and its sums (from the parent's histogram of the split feature when it has one, else from
// its rows).
std::vector<VarianceGrower::Leaf> VarianceGrower::partition_all(const std::vector<std::size_t>& leaves,
                                                                const std::vector<SplitInfo>& splits, bool defer) {
  std::vector<Leaf> lefts(leaves.size());
  std::vector<RowPartition::Split> parts;
  std::vector<std::size_t> split_leaves;  // indices into `leaves` of parts
  std::size_t unbuilt_rows = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (!splits[i].found()) continue;
    const Leaf& leaf = leaves_[leaves[i]];
    lefts[i].begin = leaf.begin;
    if (leaf.hist >= 0) left_sums(hist(leaf.hist) + static_cast<std::size_t>(splits[i].feature) * kHistBins * 2, splits[i], lefts[i]);
    else unbuilt_rows += leaf.end - leaf.begin;
    // The children built next (subtract_siblings) carry their values: the smaller one, or both of a pruned parent.
    const auto carry = leaf.hist >= 0 ? RowPartition::Sides::kSmaller : RowPartition::Sides::kBoth;
    parts.push_back({{leaf.begin, leaf.end}, rule(splits[i]), 0, 0, carry});
    split_leaves.push_back(i);
  }
  if (unbuilt_rows > 0)  // the rows' order does not matter to integer sums: before the partition
    util::parallel_for(static_cast<std::ptrdiff_t>(parts.size()), util::threads_for(unbuilt_rows * 2, n_threads_), [&](std::ptrdiff_t k) {
      const std::size_t i = split_leaves[static_cast<std::size_t>(k)];
      if (leaves_[leaves[i]].hist < 0) rows_left_sums(parts[static_cast<std::size_t>(k)], lefts[i]);
    });
  if (defer) {  // each left child's range stays empty until complete()
    for (const RowPartition::Split& part : parts) deferred_.push_back({part, 0, 0});
    for (std::size_t i : split_leaves) lefts[i].end = lefts[i].begin;
    return lefts;
  }
  RowPartition::Carry carry;
  carry.from[0] = packed_ ? packed_source_ : search_s_;
  carry.to[0] = ordered_s_.data();
  if (!packed_) {
    carry.from[1] = search_t_;
    carry.to[1] = ordered_t_.data();
  }
  const std::vector<std::size_t> mids = partition_.split(parts, nullptr, n_threads_, &carry);
  for (std::size_t k = 0; k < parts.size(); ++k) lefts[split_leaves[k]].end = mids[k];
  return lefts;
}

// The deferred partition of the last layer: the children's ranges, then the leaves in their rows' order.
void VarianceGrower::complete() {
  if (deferred_.empty()) return;
  std::vector<RowPartition::Split> parts;
  for (const Deferred& d : deferred_) parts.push_back(d.part);
  const std::vector<std::size_t> mids = partition_.split(parts, nullptr, n_threads_);
  for (std::size_t k = 0; k < parts.size(); ++k) {
    leaves_[deferred_[k].left].end = mids[k];
    leaves_[deferred_[k].right].begin = mids[k];
    leaves_[deferred_[k].right].end = parts[k].range.end;
  }
  deferred_.clear();
  sort_leaves();
}

void VarianceGrower::sort_leaves() {
  std::sort(leaves_.begin(), leaves_.end(), [](const Leaf& a, const Leaf& b) { return a.begin < b.begin; });
}

void VarianceGrower::outputs(const RegressionTree& tree, double* f) const {
  struct Part {  // rows [begin, end) of the order, sent to left or right by rule (null: all to left)
    std::size_t begin, end;
    const RowPartition::Rule* rule;
    double left, right;
  };
  constexpr std::size_t kPart = std::size_t{1} << 15;  // rows per parallel part
  std::vector<Part> parts;
  const auto add = [&](std::size_t begin, std::size_t end, const RowPartition::Rule* rule, double left, double right) {
    for (std::size_t b = begin; b < end; b += kPart) parts.push_back({b, std::min(end, b + kPart), rule, left, right});
  };
  for (const Leaf& leaf : leaves_) {
    const double v = tree.nodes[leaf.node].value;
    add(leaf.begin, leaf.end, nullptr, v, v);  // deferred children: empty
  }
  for (const Deferred& d : deferred_)
    add(d.part.range.begin, d.part.range.end, &d.part.rule, tree.nodes[leaves_[d.left].node].value,
        tree.nodes[leaves_[d.right].node].value);
  util::parallel_for(static_cast<std::ptrdiff_t>(parts.size()), util::threads_for(4 * X_.n_samples, n_threads_), [&](std::ptrdiff_t k) {
    const Part& p = parts[static_cast<std::size_t>(k)];
    if (p.rule == nullptr) {
      for (std::size_t i = p.begin; i < p.end; ++i) f[partition_.row(i)] = p.left;
      return;
    }
    const double value[2] = {p.right, p.left};
    for (std::size_t i = p.begin; i < p.end; ++i) {
      const std::uint32_t r = partition_.row(i);
      f[r] = value[p.rule->left(r)];
    }
  });
}

RowPartition::Rule VarianceGrower::rule(const SplitInfo& split) const {
  return {X_.column(static_cast<std::size_t>(split.feature)), static_cast<std::uint8_t>(split.bin), bins_.missing_bin(),
          split.nan_left};
}

// The left side's S and W of a split from its rows.
void VarianceGrower::rows_left_sums(const RowPartition::Split& part, Leaf& left) const {
  for (std::size_t i = part.range.begin; i < part.range.end; ++i) {
    const std::uint32_t r = partition_.row(i);
    const std::int64_t mask = -static_cast<std::int64_t>(part.rule.left(r));
    left.S += search_s_[r] & mask;
    left.W += search_t_[r] & mask;
  }
}

// Leaf l becomes a split node with children `left` (from its partition) and the rest; with subtraction the
// larger child inherits the parent's histogram buffer and the smaller one gets a new one.
void VarianceGrower::add_children(std::size_t l, const SplitInfo& split, Leaf left, bool subtract, RegressionTree& tree,
                                  std::vector<std::size_t>& next) {
  const Leaf parent = leaves_[l];
  const auto left_node = static_cast<std::uint32_t>(tree.nodes.size());
  RegressionNode& node = tree.nodes[parent.node];
  node.feature = split.feature;
  node.bin = split.bin;
  node.nan_left = split.nan_left;
  node.left = left_node;
  node.right = left_node + 1;
  node.gain = split.gini_gain;
  tree.nodes.emplace_back();
  tree.nodes.emplace_back();
  left.node = left_node;
  Leaf right;
  right.node = left_node + 1;
  right.begin = left.end;
  right.end = parent.end;
  right.S = parent.S - left.S;
  right.W = parent.W - left.W;
  leaves_[l].hist = -1;  // the parent's buffer passes to a child (or back to the pool)
  if (subtract && parent.hist >= 0) {
    Leaf& small = RowPartition::left_is_smaller(left.end - left.begin, right.end - right.begin) ? left : right;
    Leaf& large = &small == &left ? right : left;
    large.hist = parent.hist;
    small.hist = take_buffer();
  } else if (parent.hist >= 0) {
    free_.push_back(parent.hist);
  } else if (subtract) {  // a pruned parent has no histograms to subtract from: both children are built
    left.hist = take_buffer();
    right.hist = take_buffer();
    left.direct = right.direct = true;
  }
  next.push_back(leaves_.size());
  leaves_.push_back(left);
  next.push_back(leaves_.size());
  leaves_.push_back(right);
}

// After a layer's partitions: each pair's smaller child's histograms from its rows, the larger's as the
// parent's (already in its buffer) minus those.
void VarianceGrower::subtract_siblings(const std::vector<std::size_t>& next, const std::int64_t* s, const std::int64_t* t,
                                       const std::uint8_t* active_features) {
  std::vector<std::size_t> small, large, direct;
  for (std::size_t i = 0; i + 1 < next.size(); i += 2) {
    const Leaf& a = leaves_[next[i]];
    const Leaf& b = leaves_[next[i + 1]];
    if (a.hist < 0 || b.hist < 0) continue;
    if (a.direct) {  // both built (variance_quick.hpp)
      direct.push_back(next[i]);
      direct.push_back(next[i + 1]);
      continue;
    }
    const bool a_small = RowPartition::left_is_smaller(a.end - a.begin, b.end - b.begin);
    small.push_back(a_small ? next[i] : next[i + 1]);
    large.push_back(a_small ? next[i + 1] : next[i]);
  }
  direct.insert(direct.end(), small.begin(), small.end());
  build(direct, s, t, active_features);
  for (std::size_t l : direct) work_.bin_accumulations += static_cast<std::int64_t>((leaves_[l].end - leaves_[l].begin) * n_active_);
  const std::size_t F = X_.n_features;
  util::parallel_for(static_cast<std::ptrdiff_t>(small.size() * F), util::threads_for(small.size() * F * kHistBins * 2, n_threads_),
                     [&](std::ptrdiff_t job) {
                       const std::size_t i = static_cast<std::size_t>(job) / F, f = static_cast<std::size_t>(job) % F;
                       const std::int64_t* from = hist(leaves_[small[i]].hist) + f * kHistBins * 2;
                       std::int64_t* to = hist(leaves_[large[i]].hist) + f * kHistBins * 2;
                       for (std::size_t b = 0; b < kHistBins * 2; ++b) to[b] -= from[b];
                     });
}

// Sums the root's S and W, and packs every row's values as count * 2^40 + s when that is exact: the nonzero
// weights all equal (t0), sum |s| < 2^39 and fewer than 2^23 rows (then a histogram bin is one int64 instead
// of two: half the memory traffic; the sums, and so the tree, are the same). One pass over the rows: each
// block writes its packed values right after summing them (still in cache) while packing may still hold.
void VarianceGrower::choose_packing(const std::int64_t* s, const std::int64_t* t, Leaf& root) {
  const std::size_t N = X_.n_samples, block = std::size_t{1} << 16, blocks = (N + block - 1) / block;
  std::int64_t t0 = 0;
  for (std::size_t r = 0; r < N && t0 == 0; ++r) t0 = t[r];
  struct Part {
    std::int64_t S = 0, W = 0, abs_s = 0;
    bool uniform = true;
  };
  std::vector<Part> parts(blocks);
  const bool may_pack = N < kPackRows && t0 > 0;
  if (may_pack) packed_values_.resize(N);
  util::parallel_for(static_cast<std::ptrdiff_t>(blocks), util::threads_for(4 * N, n_threads_), [&](std::ptrdiff_t b) {
    Part& p = parts[static_cast<std::size_t>(b)];  // integer sums: any order
    const std::size_t begin = static_cast<std::size_t>(b) * block, end = std::min(N, begin + block);
    for (std::size_t r = begin; r < end; ++r) {
      p.S += s[r];
      p.W += t[r];
      p.abs_s += s[r] < 0 ? -s[r] : s[r];
      p.uniform &= t[r] == 0 || t[r] == t0;
    }
    if (!may_pack || !p.uniform || p.abs_s >= kPackAbs) return;
    for (std::size_t r = begin; r < end; ++r) packed_values_[r] = t[r] != 0 ? (std::int64_t{1} << kCountShift) + s[r] : 0;
  });
  bool uniform = may_pack;
  std::int64_t abs_sum = 0;
  for (const Part& p : parts) {
    root.S += p.S;
    root.W += p.W;
    uniform = uniform && p.uniform && p.abs_s < kPackAbs && (abs_sum += p.abs_s) < kPackAbs;
  }
  packed_ = uniform;
  t0_ = t0;
  packed_source_ = packed_values_.data();
  pack_offset_ = 0;
}

// choose_packing's outcome from the caller's sums, without a pass: every t is t0 > 0, so a row's packed
// value is 2^40 + s, added while building (s itself is the source).
void VarianceGrower::pack_uniform(const std::int64_t* s, const UniformRows& uniform, Leaf& root) {
  const std::size_t N = X_.n_samples;
  root.S = uniform.S;
  root.W = static_cast<std::int64_t>(N) * uniform.t0;
  packed_ = N < kPackRows && uniform.abs_S < kPackAbs;
  t0_ = uniform.t0;
  packed_source_ = s;
  pack_offset_ = std::int64_t{1} << kCountShift;
}

// Leaf values S / W, every node's weight, and the buffers back to the pool.
void VarianceGrower::finish(RegressionTree& tree, const std::vector<std::size_t>& finished) {
  tree.work = work_;
  tree.quick_nodes = quick_nodes_;
  tree.full_nodes = full_nodes_;
  for (const Leaf& leaf : leaves_) tree.nodes[leaf.node].weight = leaf.W;
  std::vector<Leaf> final_leaves;
  std::vector<std::size_t> position(leaves_.size());  // in final_leaves
  for (std::size_t l : finished) {
    Leaf& leaf = leaves_[l];
    position[l] = final_leaves.size();
    tree.nodes[leaf.node].value = leaf.W > 0 ? static_cast<double>(leaf.S) / static_cast<double>(leaf.W) : 0.0;
    leaf.hist = -1;
    final_leaves.push_back(leaf);
  }
  for (Deferred& d : deferred_) {
    d.left = position[d.left];
    d.right = position[d.right];
  }
  leaves_ = std::move(final_leaves);
  if (deferred_.empty()) sort_leaves();
}

}  // namespace rebelboost::tree
