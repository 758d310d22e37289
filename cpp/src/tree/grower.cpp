// Layer-wise tree growth: per layer, every open leaf's histograms (built from its rows, or as parent -
// sibling), its best split (full scan or pruned pass), then the partition of the leaves that split.
//
// Histogram subtraction (docs/design/determinism.md): when a layer's split values equal (or negate) the previous
// layer's, a split leaf's histograms, kept in a pool buffer, give its larger child as parent - smaller
// child, so only the smaller child reads its rows. The sums are int64 fixed point, so the subtracted
// histograms are the directly built ones, bit for bit: the tree never depends on it. A leaf searched
// without a split keeps no split under equal or negated values, so it is not searched again ("settled").
#include "tree/grower.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "tree/histogram.hpp"
#include "tree/layer_plan.hpp"
#include "tree/newton_root.hpp"
#include "util/parallel.hpp"
#include "util/reduce.hpp"

namespace rebelboost::tree {

namespace {

std::int8_t sign_or(std::int64_t v, std::int8_t fallback) {
  return v > 0 ? std::int8_t{1} : (v < 0 ? std::int8_t{-1} : fallback);
}

// Leaves with fewer rows keep no histograms for the next layer: building their children directly costs
// less than writing and reading the buffer (n_features x 2 KiB).
constexpr std::size_t kMinStoredRows = 512;

}  // namespace

TreeGrower::TreeGrower(const data::BinnedMatrix& X, const data::BinMapper& bins, int n_threads,
                       std::vector<std::size_t> class_begin, QuickMode quick, QuickParams quick_params,
                       Criterion criterion, bool subtraction, Reducer* reducer)
    : X_(X), bins_(bins), n_threads_(n_threads), class_begin_(std::move(class_begin)), criterion_(criterion),
      subtraction_(subtraction), reducer_(reducer),
      // A distributed grower prunes through reduced_quick_ (its pruned_ only lends the parameters: no
      // heavy-row cache), for the loss criterion only: the impurities scan in full there.
      pruned_(X, bins, n_threads, reducer ? QuickMode::kOff : quick, quick_params, criterion),
      reduced_quick_(reducer == nullptr || is_impurity(criterion) ? QuickMode::kOff : quick),
      pool_(X.n_features, histogram_parts(criterion)) {
  if (is_impurity(criterion_) && class_begin_.size() != 3)
    throw std::logic_error("the impurity criteria need rows sorted by class (2 classes)");
  q_ordered_.resize(X.n_samples);
}

void TreeGrower::reset(GrowResult& result) {
  const std::size_t n = X_.n_samples;
  result.outputs.assign(n, 1);
  Node root;
  root.value = 1;
  result.tree.nodes.push_back(root);
  partition_.reset(n);
  pool_.release_all();
  leaves_.assign(1, Leaf{0, 0, n});
  reduced_prev_.clear();
  reduced_root_mass_ = -1;
}

GrowResult TreeGrower::grow(SplitObjective& objective, int max_depth, const std::uint8_t* active_rows,
                            const std::uint8_t* active_features) {
  GrowResult result;
  reset(result);
  bool same_values = active_rows == nullptr && criterion_ == Criterion::kLoss;  // GrowResult::value_mass
  for (int layer = 0; layer < max_depth; ++layer) {
    if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) break;  // unfinished: the caller drops it
    const bool last_layer = layer == max_depth - 1;
    if (layer == 0 && objective.root_width() > 1) {
      same_values = false;
      if (!grow_multiclass_root(objective, result, active_rows, active_features, last_layer)) break;
      continue;
    }
    int relation = 0;
    const std::int64_t* q = layer_values(objective, layer, result, active_rows, relation);
    if (layer > 0 && relation != 1) same_values = false;
    // Which pass searches this layer: one decision, from the mass concentration of its largest open leaf.
    std::size_t largest = kNoLeaf;
    for (std::size_t l = 0; l < leaves_.size(); ++l)
      if (leaves_[l].rows() >= 2 && !(leaves_[l].settled && relation != 0) &&
          (largest == kNoLeaf || leaves_[l].rows() > leaves_[largest].rows()))
        largest = l;
    double mass90 = -1.0;
    bool quick = false;
    if (reducer_) {  // the same choice on every participant, from reduced figures
      quick = reduced_quick_.choose(layer, active_list(active_features).size());
    } else if (largest != kNoLeaf && pruned_.mode() != QuickMode::kOff) {
      const util::StageScope stage(clock_, util::Stage::kQuickSearch);
      quick = pruned_.choose(layer, partition_.identity() ? nullptr : partition_.rows(leaves_[largest].begin),
                             leaves_[largest].rows(), q, active_features, mass90);
    }
    if (layer == 0) result.mass90_fraction = mass90;
    // A participant of a distributed pruned pass builds no histogram jobs when its heavy rows are few.
    LayerPlan plan = plan_layer(relation, last_layer,
                                reducer_ ? quick && ReducedQuickPolicy::heavy_rows_are_few(X_.n_samples, q) : quick);
    const auto start = std::chrono::steady_clock::now();
    if (reducer_ && quick) {
      const util::StageScope stage(clock_, util::Stage::kQuickSearch);
      reduced_prev_.clear();
      search_reduced_pruned(plan, layer, q, active_features, result);
    } else if (reducer_) {
      const util::StageScope stage(clock_, util::Stage::kHistograms);
      search_reduced(plan, layer, q, active_features, result);
    } else if (quick) {
      const util::StageScope stage(clock_, util::Stage::kQuickSearch);
      search_pruned(plan, q, layer == 0 ? mass90 : -1.0, active_features, result);
    } else {
      const util::StageScope stage(clock_, util::Stage::kHistograms);
      search_full(plan, q, active_features, result);
    }
    std::size_t searched_rows = 0;
    for (std::size_t l = 0; l < leaves_.size(); ++l)
      if (plan.searched[l]) searched_rows += leaves_[l].rows();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (layer == 0 && same_values) result.value_mass = root_mass(q);
    if (reducer_) reduced_quick_.finish_layer(layer, quick, seconds);
    else pruned_.record(layer, quick, seconds, searched_rows);
    const util::StageScope stage(clock_, util::Stage::kLeafValues);
    if (!apply_layer(plan, q, result, last_layer)) break;
  }
  finish_step_sums(result, same_values);
  count_node_rows(result);
  pool_.release_all();
  return result;
}

// Each final leaf's rows (its range; the last layer's children: their counts, as ranges of that length),
// then each internal node's as its children's sum (children come after their parent).
void TreeGrower::count_node_rows(GrowResult& result) const {
  std::vector<std::int64_t>& rows = result.node_rows;
  rows.assign(result.tree.nodes.size(), 0);
  for (const Leaf& leaf : leaves_) rows[leaf.node] = static_cast<std::int64_t>(leaf.rows());
  for (std::size_t i = rows.size(); i-- > 0;) {
    const Node& n = result.tree.nodes[i];
    if (n.feature >= 0) rows[i] = rows[n.left] + rows[n.right];
  }
}

std::int64_t TreeGrower::root_mass(const std::int64_t* q) const {
  if (reducer_) return reduced_root_mass_;
  constexpr std::size_t kBlock = 1 << 16;
  const std::size_t n = X_.n_samples, n_blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::int64_t> part(n_blocks, 0);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_blocks), util::threads_for(n, n_threads_), [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * kBlock, end = std::min(n, begin + kBlock);
    std::int64_t m = 0;
    for (std::size_t i = begin; i < end; ++i) m += abs64(q[i]);
    part[static_cast<std::size_t>(b)] = m;
  });
  std::int64_t total = 0;
  for (const std::int64_t m : part) total += m;
  return total;
}

// Each leaf's sum is of the root's values when every layer kept them (relation +1), so the sum of the
// leaves' |sums| with the root's mass gives the step's sums (GrowResult::value_mass).
void TreeGrower::finish_step_sums(GrowResult& result, bool same_values) const {
  if (!same_values || result.value_mass < 0) {
    result.value_mass = -1;
    return;
  }
  result.leaf_abs_sum = 0;
  for (const Leaf& leaf : leaves_) result.leaf_abs_sum += abs64(leaf.sum);
}

bool TreeGrower::grow_multiclass_root(SplitObjective& objective, GrowResult& result, const std::uint8_t* active_rows,
                                      const std::uint8_t* active_features, bool last_layer) {
  // REBEL: the root is searched jointly over the K-vector step (multiclass_split.hpp).
  const util::StageScope stage(clock_, util::Stage::kMulticlassRoot);
  const std::size_t n = X_.n_samples;
  const std::size_t K = objective.root_width();
  const std::int64_t* v = objective.root_vectors();
  if (active_rows) {
    v_masked_.assign(v, v + n * K);
    for (std::size_t i = 0; i < n; ++i)
      if (!active_rows[i])
        std::fill(v_masked_.begin() + static_cast<std::ptrdiff_t>(i * K), v_masked_.begin() + static_cast<std::ptrdiff_t>((i + 1) * K), 0);
    v = v_masked_.data();
  }
  QuickWork work;
  bool quick = false;
  const bool newton = objective.root_is_newton();
  const RootSplit r = newton     ? newton_root(objective, v, K, active_rows, active_features)
                      : reducer_ ? reduced_multiclass_root(v, K, active_features)
                                 : pruned_.root(v, K, class_begin_, active_features, work, quick, result.mass90_fraction);
  ++(quick ? result.quick_nodes : result.full_nodes);
  result.features_pruned += work.features_pruned;
  result.bin_accumulations += r.bin_accumulations;
  if (!r.found) return false;  // f = +1 everywhere
  SplitInfo s;
  s.feature = r.feature;
  s.bin = r.bin;
  s.nan_left = r.nan_left;
  s.left_sum = -1;  // f = -1 on the left, +1 on the right
  s.right_sum = 1;
  const double gain = 2.0 * (r.loss_unsplit - r.loss) / kFixedPointScale;
  const std::vector<RowPartition::Split> splits{split_node(result, leaves_[0], s, gain)};
  const std::uint32_t left = result.tree.nodes[0].left;
  const util::StageScope partition(clock_, util::Stage::kPartition);
  if (last_layer) {  // the children's ranges only carry their lengths (count_node_rows)
    const std::size_t n_left = partition_.label(splits, result.outputs.data(), n_threads_)[0];
    leaves_ = {Leaf{left, 0, n_left}, Leaf{left + 1, n_left, n}};
    return false;
  }
  const std::size_t mid = partition_.split(splits, result.outputs.data(), n_threads_)[0];
  leaves_ = {Leaf{left, 0, mid}, Leaf{left + 1, mid, n}};
  return true;
}

RootSplit TreeGrower::newton_root(SplitObjective& objective, const std::int64_t* v, std::size_t K,
                                  const std::uint8_t* active_rows, const std::uint8_t* active_features) {
  const std::int64_t* h = objective.root_curvatures();
  std::vector<std::int64_t> curvature(K, 0);  // over the searched rows (exact: integers)
  for (std::size_t i = 0; i < X_.n_samples; ++i)
    if (!active_rows || active_rows[i])
      for (std::size_t k = 0; k < K; ++k) curvature[k] += h[i * K + k];
  util::reduce_counts(curvature.data(), K, reducer_);
  return best_newton_root(X_, bins_, v, curvature, K, n_threads_, active_features, reducer_);
}

const std::int64_t* TreeGrower::layer_values(SplitObjective& objective, int layer, const GrowResult& result,
                                             const std::uint8_t* active_rows, int& relation) {
  const util::StageScope stage(clock_, util::Stage::kSplitValues);
  const std::int64_t* q = objective.split_values(layer, result.outputs.data());
  relation = layer == 0 || !subtraction_ ? 0 : objective.relation_to_previous_layer();
  if (active_rows) {
    const std::size_t n = X_.n_samples;
    q_masked_.assign(q, q + n);
    for (std::size_t i = 0; i < n; ++i)
      if (!active_rows[i]) q_masked_[i] = 0;
    q = q_masked_.data();
  }
  return q;
}

TreeGrower::LayerPlan TreeGrower::plan_layer(int relation, bool last_layer, bool quick) {
  LayerPlan plan;
  plan.relation = relation;
  plan.quick = quick;
  plan.searched.assign(leaves_.size(), 0);
  plan.total.assign(leaves_.size(), 0);
  auto store = [&](const Leaf& leaf) {
    return !last_layer && subtraction_ && leaf.rows() >= kMinStoredRows ? pool_.acquire() : -1;
  };
  for (std::size_t l = 0; l < leaves_.size(); ++l) {
    Leaf& leaf = leaves_[l];
    if (relation == 0) leaf.settled = false;
    // A distributed leaf may hold rows elsewhere: the reduced row count decides (search_reduced).
    plan.searched[l] = (reducer_ != nullptr || leaf.rows() >= 2) && !leaf.settled;
    if (leaf.parent_hist >= 0 && (relation == 0 || quick)) {  // the parent's histograms are of no use
      pool_.release(leaf.parent_hist);
      leaf.parent_hist = -1;
    }
    if (quick) continue;
    if (leaf.parent_hist >= 0 && relation != 0) {  // a pair of new siblings: build the smaller one
      const std::size_t small = leaves_[l + 1].rows() < leaf.rows() ? l + 1 : l;
      LayerPlan::Job job;
      job.leaf = small;
      job.large = small == l ? l + 1 : l;
      job.buffer = store(leaves_[small]);
      job.large_buffer = leaf.parent_hist;
      plan.jobs.push_back(job);
      continue;
    }
    const bool second_of_pair = l > 0 && leaves_[l - 1].parent_hist >= 0 && relation != 0;
    if (!second_of_pair && plan.searched[l]) plan.jobs.push_back({l, kNoLeaf, store(leaf), -1});
  }
  return plan;
}

std::size_t TreeGrower::class_split(const Leaf& leaf) const {
  // Rows of a leaf ascend, and rows are sorted by class: class 1 starts at the first row >= class_begin[1].
  std::size_t lo = leaf.begin, hi = leaf.end;
  const std::size_t boundary = class_begin_[1];
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (partition_.row(mid) < boundary) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

TreeGrower::LayerRows TreeGrower::layer_rows(LayerPlan& plan, const std::int64_t* q) {
  LayerRows rows{q, nullptr, std::vector<std::size_t>(leaves_.size(), 0)};
  std::vector<RowPartition::Range> built;
  for (const LayerPlan::Job& job : plan.jobs) {
    const Leaf& leaf = leaves_[job.leaf];
    built.push_back({leaf.begin, leaf.end});
    if (is_impurity(criterion_)) rows.class_split[job.leaf] = class_split(leaf);
    plan.built_rows += leaf.rows();
  }
  if (!partition_.identity()) {  // the leaves read by gathering get their values in partition order
    partition_.gather_values(built, q, q_ordered_.data(), n_threads_);
    rows.values = q_ordered_.data();
    rows.order = partition_.rows(0);
  }
  return rows;
}

void TreeGrower::keep_histograms(const LayerPlan& plan, GrowResult& result) {
  for (const LayerPlan::Job& job : plan.jobs) {
    leaves_[job.leaf].hist = job.buffer;
    if (job.large != kNoLeaf) {
      leaves_[job.large].hist = job.large_buffer;
      leaves_[job.leaf].parent_hist = leaves_[job.large].parent_hist = -1;
      ++result.subtracted_nodes;
    }
  }
}

std::size_t TreeGrower::row_parts(std::size_t n_active, int threads, std::size_t built_rows, std::size_t n_jobs) const {
  // Features are the natural unit of parallel work; with fewer than 4 per thread they leave threads idle,
  // so each leaf's rows are cut into parts too (at least 2^16 rows each), within a 64 MiB scratch.
  if (threads <= 1 || n_active >= 4 * static_cast<std::size_t>(threads) || n_jobs == 0) return 1;
  std::size_t parts = (4 * static_cast<std::size_t>(threads) + n_active - 1) / n_active;
  parts = std::min(parts, std::max<std::size_t>(1, built_rows / (std::size_t{1} << 16)));
  const std::size_t bytes_per_part = n_jobs * X_.n_features * pool_.stride() * sizeof(std::int64_t);
  return std::max<std::size_t>(1, std::min(parts, (std::size_t{64} << 20) / bytes_per_part));
}

void TreeGrower::search_full(LayerPlan& plan, const std::int64_t* q, const std::uint8_t* active_features,
                             GrowResult& result) {
  const std::size_t n_features = X_.n_features;
  const std::uint8_t missing = bins_.missing_bin();
  const bool gini = is_impurity(criterion_);
  const std::size_t stride = pool_.stride();
  const LayerRows rows = layer_rows(plan, q);
  std::size_t n_active = n_features;
  if (active_features) n_active = static_cast<std::size_t>(std::count(active_features, active_features + n_features, 1));
  const int threads = util::threads_for((plan.built_rows + plan.jobs.size() * kHistBins) * n_active, n_threads_);
  const std::size_t parts = row_parts(n_active, threads, plan.built_rows, plan.jobs.size());
  if (parts > 1) build_parts(plan, rows, parts, threads, active_features);
  scratch_.resize(static_cast<std::size_t>(threads) * stride);
  plan.best.assign(leaves_.size() * n_features, SplitInfo{});
  std::size_t first_active = 0;
  while (active_features && !active_features[first_active]) ++first_active;

  auto build = [&](std::size_t f, std::size_t j, std::int64_t* h) {
    std::fill(h, h + stride, 0);
    if (parts == 1) return rows.add_part(X_, f, leaves_[plan.jobs[j].leaf], plan.jobs[j].leaf, gini, 0, 1, h);
    for (std::size_t p = 0; p < parts; ++p) {  // the parts' sums (exact in any order)
      const std::int64_t* part = &partial_[((p * plan.jobs.size() + j) * n_features + f) * stride];
      for (std::size_t i = 0; i < stride; ++i) h[i] += part[i];
    }
  };
  auto search = [&](std::size_t f, std::size_t l, const std::int64_t* h) {
    if (plan.searched[l])
      plan.best[l * n_features + f] = feature_split(h, criterion_, bins_.n_value_bins(f), missing, static_cast<std::int32_t>(f));
    if (f == first_active) plan.total[l] = histogram_total(h, criterion_);
  };
  util::parallel_for(static_cast<std::ptrdiff_t>(n_features), threads, [&](std::ptrdiff_t fi) {
    const auto f = static_cast<std::size_t>(fi);
    if (active_features && !active_features[f]) return;  // LazyBoost: not searched this iteration
    std::int64_t* scratch = &scratch_[static_cast<std::size_t>(util::thread_index()) * stride];
    for (std::size_t j = 0; j < plan.jobs.size(); ++j) {
      const LayerPlan::Job& job = plan.jobs[j];
      std::int64_t* h = job.buffer >= 0 ? pool_.at(job.buffer, f) : scratch;
      build(f, j, h);
      search(f, job.leaf, h);
      if (job.large == kNoLeaf) continue;
      std::int64_t* parent = pool_.at(job.large_buffer, f);  // becomes the larger sibling's
      if (plan.relation < 0) negate_histogram(parent, stride);
      subtract_histogram(parent, h, stride);
      search(f, job.large, parent);
    }
  });
  keep_histograms(plan, result);
  for (std::size_t l = 0; l < leaves_.size(); ++l) result.full_nodes += plan.searched[l];
  result.bin_accumulations += static_cast<std::int64_t>(plan.built_rows * n_active);
}

void TreeGrower::build_parts(const LayerPlan& plan, const LayerRows& rows, std::size_t parts, int threads,
                             const std::uint8_t* active_features) {
  // partial_[part][job][feature]: one task per (part, feature).
  const std::size_t n_features = X_.n_features, stride = pool_.stride(), n_jobs = plan.jobs.size();
  partial_.resize(parts * n_jobs * n_features * stride);
  const bool gini = is_impurity(criterion_);
  util::parallel_for(static_cast<std::ptrdiff_t>(parts * n_features), threads, [&](std::ptrdiff_t t) {
    const std::size_t p = static_cast<std::size_t>(t) / n_features, f = static_cast<std::size_t>(t) % n_features;
    if (active_features && !active_features[f]) return;
    for (std::size_t j = 0; j < n_jobs; ++j) {
      std::int64_t* h = &partial_[((p * n_jobs + j) * n_features + f) * stride];
      std::fill(h, h + stride, 0);
      rows.add_part(X_, f, leaves_[plan.jobs[j].leaf], plan.jobs[j].leaf, gini, p, parts, h);
    }
  });
}

void TreeGrower::search_pruned(LayerPlan& plan, const std::int64_t* q, double mass90,
                               const std::uint8_t* active_features, GrowResult& result) {
  const bool identity = partition_.identity();
  if (!identity) {
    leaf_of_row_.resize(X_.n_samples);
    for (std::size_t l = 0; l < leaves_.size(); ++l)
      for (std::size_t i = leaves_[l].begin; i < leaves_[l].end; ++i)
        leaf_of_row_[partition_.row(i)] = static_cast<std::uint32_t>(l);
  }
  pruned_.prepare_layer(q, mass90, identity ? nullptr : leaf_of_row_.data(), result.heavy_rebuilds);
  const std::size_t n_features = X_.n_features;
  plan.best.assign(leaves_.size() * n_features, SplitInfo{});
  for (std::size_t l = 0; l < leaves_.size(); ++l) {
    const Leaf& leaf = leaves_[l];
    if (!plan.searched[l]) continue;
    QuickWork work;
    const std::uint32_t* rows = partition_.rows(leaf.begin);
    const SplitInfo winner =
        pruned_.search(static_cast<std::uint32_t>(l), rows, leaf.rows(), q, active_features, work, plan.total[l]);
    if (winner.found()) plan.best[l * n_features + static_cast<std::size_t>(winner.feature)] = winner;
    ++result.quick_nodes;
    result.features_pruned += work.features_pruned;
    result.bin_accumulations += work.bin_accumulations;
  }
}

bool TreeGrower::apply_layer(LayerPlan& plan, const std::int64_t* q, GrowResult& result, bool last_layer) {
  const std::size_t n_features = X_.n_features;
  // Sums of the leaves not searched decide their values too (re-chosen for the current values).
  for (std::size_t l = 0; l < leaves_.size(); ++l) {
    const Leaf& leaf = leaves_[l];
    if (plan.searched[l] || plan.totals_complete) continue;
    if (leaf.settled) {
      plan.total[l] = plan.relation * leaf.sum;
    } else {  // (a full scan may have set it from the leaf's histogram already: the same value, set again)
      std::int64_t sum = 0;
      for (std::size_t i = leaf.begin; i < leaf.end; ++i) sum += q[partition_.row(i)];
      plan.total[l] = sum;
    }
  }
  // Winners in the fixed order (score, feature, bin, NaN side); nodes for the splits, then one partition
  // of all the leaves that split.
  std::vector<Leaf> next;
  std::vector<RowPartition::Split> splits;
  std::vector<std::size_t> split_at;  // position in `next` of each split's left child
  for (std::size_t l = 0; l < leaves_.size(); ++l) {
    Leaf leaf = leaves_[l];
    Node& node = result.tree.nodes[leaf.node];
    node.value = sign_or(plan.total[l], node.value);
    SplitInfo s;
    for (std::size_t f = 0; f < n_features && plan.searched[l]; ++f) {
      const SplitInfo& c = plan.best[l * n_features + f];
      if (c.found() && (!s.found() || better(c, s))) s = c;
    }
    if (!s.found()) {
      for (std::size_t i = leaf.begin; i < leaf.end; ++i) result.outputs[partition_.row(i)] = node.value;
      pool_.release(leaf.hist);
      leaf.hist = -1;
      leaf.settled = leaf.settled || plan.searched[l];
      leaf.sum = plan.total[l];
      leaf.parent_slot = -1;
      next.push_back(leaf);
      continue;
    }
    const double gain = is_impurity(criterion_)
                            ? s.gini_gain / kFixedPointScale
                            : static_cast<double>(s.score - abs64(plan.total[l])) / (2.0 * kFixedPointScale);
    splits.push_back(split_node(result, leaf, s, gain));
    split_at.push_back(next.size());
    Leaf left{result.tree.nodes[leaf.node].left, leaf.begin, leaf.end};
    left.parent_hist = last_layer ? -1 : leaf.hist;  // the larger child is parent - smaller child
    left.parent_slot = static_cast<std::int32_t>(l);
    left.sum = s.left_sum;
    if (last_layer) pool_.release(leaf.hist);
    next.push_back(left);
    Leaf right{left.node + 1, leaf.end, leaf.end};
    right.sum = s.right_sum;
    next.push_back(right);
  }
  const util::StageScope partition(clock_, util::Stage::kPartition);
  if (last_layer) {  // no partition: the children's ranges only carry their lengths (count_node_rows)
    const std::vector<std::size_t> left = partition_.label(splits, result.outputs.data(), n_threads_);
    for (std::size_t k = 0; k < splits.size(); ++k) {
      next[split_at[k]].end = next[split_at[k]].begin + left[k];
      next[split_at[k] + 1].begin = next[split_at[k]].end;
    }
  } else {
    const std::vector<std::size_t> mids = partition_.split(splits, result.outputs.data(), n_threads_);
    for (std::size_t k = 0; k < splits.size(); ++k) {
      next[split_at[k]].end = mids[k];
      next[split_at[k] + 1].begin = mids[k];
    }
  }
  leaves_ = std::move(next);
  return !splits.empty() && !last_layer;
}

RowPartition::Split TreeGrower::split_node(GrowResult& result, const Leaf& leaf, const SplitInfo& s, double gain) {
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
  const RowPartition::Rule rule{X_.column(static_cast<std::size_t>(s.feature)), static_cast<std::uint8_t>(s.bin),
                                static_cast<std::uint8_t>(bins_.missing_bin()), s.nan_left};
  return {{leaf.begin, leaf.end}, rule, left_node.value, right_node.value};
}

}  // namespace rebelboost::tree
