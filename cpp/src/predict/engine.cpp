// Batch and one-row evaluation of the compiled forest; groups of 16 rows run through the SIMD kernels.
//
// A batch is cut into chunks of kChunkRows rows (one parallel work item each) and every chunk into groups
// of 16 rows. A group's values of the used features are copied column-wise into Xt (the layout the
// kernels read, see kernels.hpp) once; the kernel then runs over the trees in order.
#include "predict/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "predict/cascade.hpp"
#include "predict/gather.hpp"
#include "predict/reject_inf.hpp"
#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

namespace rebelboost::predict {

namespace {

constexpr std::size_t kChunkRows = 256;

// The leaf one row reaches in tree t (node-walk trees: its node; complete trees: its index among the 2^d
// leaves), walking complete trees level by level without a data-dependent branch.
template <typename T>
std::size_t row_leaf(const ForestArrays& f, const T* x, std::ptrdiff_t stride, std::size_t t) {
  const std::size_t s0 = f.first_split[t];
  const T* thr = thresholds_for(f, x) + s0;
  const std::uint8_t* nan_left = f.nan_left + s0;
  const std::int32_t* feature = f.feature + s0;
  if (f.walk[t]) {
    std::size_t i = 0;
    while (f.node_value[s0 + i] == 0) {
      const T v = x[static_cast<std::ptrdiff_t>(feature[i]) * stride];
      i = (v <= thr[i] || (v != v && nan_left[i])) ? f.left[s0 + i] : f.right[s0 + i];
    }
    return i;
  }
  const int d = f.depth[t];
  std::size_t i = 0;
  for (int level = 0; level < d; ++level) {
    const T v = x[static_cast<std::ptrdiff_t>(feature[i]) * stride];
    const unsigned left = static_cast<unsigned>(v <= thr[i]) | (static_cast<unsigned>(v != v) & nan_left[i]);
    i = 2 * i + 2 - left;
  }
  return i - ((std::size_t{1} << d) - 1);
}

// f_t(x) < 0 for one row of a +-1 tree.
template <typename T>
bool row_negative(const ForestArrays& f, const T* x, std::ptrdiff_t stride, std::size_t t) {
  const std::size_t leaf = row_leaf(f, x, stride, t);
  if (f.walk[t]) return f.node_value[f.first_split[t] + leaf] < 0;
  return (f.leaf_neg[f.leaf_word[t] + leaf / 64] >> (leaf % 64)) & 1u;
}

// neg ? -a : a by flipping the sign bit: no branch on a leaf value that is right or wrong half the time.
inline double signed_step(double a, bool neg) {
  std::uint64_t bits;
  std::memcpy(&bits, &a, sizeof bits);
  bits ^= static_cast<std::uint64_t>(neg) << 63;
  std::memcpy(&a, &bits, sizeof bits);
  return a;
}

}  // namespace

std::int32_t class_of(const double* s, std::size_t K, std::size_t stride) {
  if (K == 1) return s[0] > 0.0 ? 1 : 0;
  std::size_t best = 0;
  for (std::size_t k = 1; k < K; ++k)
    if (s[k * stride] > s[best * stride]) best = k;
  return static_cast<std::int32_t>(best);
}

Engine::Engine(const Model& model) : Engine(model, best_kernels()) {}
Engine::Engine(const Model& model, const Kernels& kernels)
    : model_(model), forest_(model), stop_(model), kernels_(kernels) {
  // Per tree and 16-row group: a load and a compare per split compared (all of them for mask trees, a
  // lane-by-lane walk otherwise) and a blend and an add per output.
  const ForestArrays& f = forest_.arrays();
  double total = 0.0;
  for (std::size_t t = 0; t < f.n_trees; ++t) {
    const double d = f.depth[t];
    total += (f.walk[t] || f.depth[t] > FlatForest::kMaxMaskDepth) ? 16.0 * d : 2.0 * (std::ldexp(1.0, f.depth[t]) - 1.0);
  }
  group_tree_cost_ = (f.n_trees ? total / static_cast<double>(f.n_trees) : 0.0) + 4.0 * static_cast<double>(f.n_outputs);
  // The NaN scan of the copies only where it costs less than the NaN-aware compares (kScanSlotsPerSplit).
  std::size_t n_splits = 0;
  for (const Tree& tree : model_.trees) n_splits += tree.nodes.size() / 2;
  scan_nan_ = static_cast<double>(f.n_slots) <= kScanSlotsPerSplit * static_cast<double>(n_splits);
  stream_f32_ = used_line_share(f.features, f.n_slots, model_.n_features, sizeof(float)) >= kStreamLineShare;
  stream_f64_ = used_line_share(f.features, f.n_slots, model_.n_features, sizeof(double)) >= kStreamLineShare;
}

std::size_t Engine::used(std::size_t n_trees) const { return std::min(n_trees, model_.trees.size()); }

void Engine::check_classifier(const char* what) const {
  if (model_.is_regression())
    throw InvalidArgument(std::string(what) + " gives classes; a regression model predicts values: use decision_function");
}

void check_columns(std::size_t n_cols, std::size_t n_features) {
  if (n_cols != n_features)
    throw InvalidArgument("X has " + std::to_string(n_cols) + " features, but the model expects " +
                          std::to_string(n_features));
}

// Calls fn(group) for every group of up to 16 consecutive rows, chunks of rows in parallel (handed out one
// at a time: the chunks cost the same, but a thread that the region's start woke late, or that another job
// holds back, then takes fewer of them instead of ending last). With check_inf
// each group's rows are first refused if one holds +-inf (reject_inf_rows): that read in address order also
// brings them into cache for the copies, as stream_rows does, so X is read from memory once (reject_inf.hpp).
template <typename T, typename Fn>
void Engine::for_each_group(const MatrixView<T>& X, int n_threads, Fn&& fn, bool check_inf) const {
  const ForestArrays& f = forest_.arrays();
  const auto n_chunks = static_cast<std::ptrdiff_t>((X.n_rows + kChunkRows - 1) / kChunkRows);
  util::parallel_for(n_chunks, n_threads, [&](std::ptrdiff_t c) {
    std::vector<T> Xt(std::max<std::size_t>(f.n_slots, 1) * kLanes, T(0));
    std::vector<double> scores(model_.n_outputs * kLanes);
    const std::size_t begin = static_cast<std::size_t>(c) * kChunkRows;
    const std::size_t end = std::min(X.n_rows, begin + kChunkRows);
    for (std::size_t r0 = begin; r0 < end; r0 += kLanes) {
      Group<T> g{Xt.data(), false, r0, std::min(kLanes, end - r0), scores.data()};
      if (check_inf)
        reject_inf_rows(X, r0, r0 + g.n_lanes);
      else if (streams(X, g.n_lanes))
        stream_rows(X, r0, r0 + g.n_lanes);
      g.has_nan = gather_group(X, r0, g.n_lanes, f, Xt.data(), scan_nan_);
      fn(g);
    }
  }, /*dynamic=*/true);
}

// Sets a group's scores to the bias.
template <typename T>
void Engine::start(const Group<T>& g) const {
  for (std::size_t k = 0; k < model_.n_outputs; ++k)
    for (std::size_t j = 0; j < kLanes; ++j) g.scores[k * kLanes + j] = model_.bias[k];
}

// Adds the learners [t_begin, t_end) to a group's scores.
template <typename T>
void Engine::add(const Group<T>& g, std::size_t t_begin, std::size_t t_end) const {
  if constexpr (std::is_same_v<T, float>)
    kernels_.accumulate_f32(forest_.arrays(), g.Xt, g.has_nan, t_begin, t_end, g.scores);
  else
    kernels_.accumulate_f64(forest_.arrays(), g.Xt, g.has_nan, t_begin, t_end, g.scores);
}

template <typename T>
void Engine::decision_function(MatrixView<T> X, double* out, std::size_t n_trees, int n_threads, bool check_inf) const {
  check_columns(X.n_cols, model_.n_features);
  const std::size_t K = model_.n_outputs, n = used(n_trees);
  if (X.n_rows < kMinGroupRows) {
    if (check_inf) reject_inf(X, n_threads);
    for (std::size_t r = 0; r < X.n_rows; ++r)
      decision_row(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride, out + r * K, n);
    return;
  }
  for_each_group(X, n_threads, [&](const Group<T>& g) {
    start(g);
    add(g, 0, n);
    for (std::size_t j = 0; j < g.n_lanes; ++j)
      for (std::size_t k = 0; k < K; ++k) out[(g.r0 + j) * K + k] = g.scores[k * kLanes + j];
  }, check_inf);
}

template <typename T>
void Engine::predict(MatrixView<T> X, std::int32_t* classes, const PredictOptions& options,
                     std::uint32_t* n_learners) const {
  check_columns(X.n_cols, model_.n_features);
  check_classifier("predict");
  const std::size_t K = model_.n_outputs, n = used(options.n_trees);
  if (X.n_rows < kMinGroupRows) {
    if (options.reject_inf) reject_inf(X, options.n_threads);
    std::vector<double> scores(K);
    for (std::size_t r = 0; r < X.n_rows; ++r)
      classes[r] = predict_row(X.data + static_cast<std::ptrdiff_t>(r) * X.row_stride, X.col_stride, scores.data(),
                               options, n_learners ? n_learners + r : nullptr);
    return;
  }
  const StopRule::Stops st = stop_.stops(options, n);
  const bool exit_pilot = st.active && !st.cascade && X.n_rows > kExitPilotRows;
  const bool check_inf = options.reject_inf;  // every batch path checks its chunks as it reads them
  if (exit_pilot) {
    // Exact exit gives the labels of full evaluation whichever path runs, so it runs only where it pays: the
    // first kExitPilotRows rows (a deterministic sample: the choice never depends on timings) stop early;
    // the rest do too only if those needed at most kExitPays of the learners on average (measured in
    // docs/cascades.md), else they are evaluated in full (their learner count is then n).
    std::vector<std::uint32_t> pilot_counts(kExitPilotRows);
    MatrixView<T> pilot = X, rest = X;
    pilot.n_rows = kExitPilotRows;
    rest.data += static_cast<std::ptrdiff_t>(kExitPilotRows) * X.row_stride;
    rest.n_rows -= kExitPilotRows;
    predict_stopping(pilot, n, st, 1, check_inf, classes, pilot_counts.data());
    if (n_learners) std::copy(pilot_counts.begin(), pilot_counts.end(), n_learners);
    std::uint64_t used_learners = 0;
    for (std::uint32_t c : pilot_counts) used_learners += c;
    std::uint32_t* rest_learners = n_learners ? n_learners + kExitPilotRows : nullptr;
    if (static_cast<double>(used_learners) <= kExitPays * static_cast<double>(n) * static_cast<double>(kExitPilotRows))
      predict_stopping(rest, n, st, options.n_threads, check_inf, classes + kExitPilotRows, rest_learners);
    else
      predict_full(rest, n, options.n_threads, check_inf, classes + kExitPilotRows, rest_learners);
    return;
  }
  if (st.active) {
    predict_stopping(X, n, st, options.n_threads, check_inf, classes, n_learners);
    return;
  }
  predict_full(X, n, options.n_threads, check_inf, classes, n_learners);
}

template <typename T>
void Engine::predict_full(const MatrixView<T>& X, std::size_t n, int n_threads, bool check_inf, std::int32_t* classes,
                          std::uint32_t* n_learners) const {
  const std::size_t K = model_.n_outputs;
  for_each_group(X, n_threads, [&](const Group<T>& g) {
    start(g);
    add(g, 0, n);
    for (std::size_t j = 0; j < g.n_lanes; ++j) {
      classes[g.r0 + j] = class_of(g.scores + j, K, kLanes);
      if (n_learners) n_learners[g.r0 + j] = static_cast<std::uint32_t>(n);
    }
  }, check_inf);
}

template <typename T>
void Engine::tree_outputs(MatrixView<T> X, std::int8_t* out, int n_threads, std::size_t first_tree,
                          std::size_t n_trees) const {
  check_columns(X.n_cols, model_.n_features);
  if (model_.is_regression())
    throw InvalidArgument("tree_outputs gives +-1 leaves; a regression tree's leaves are real: use learner_outputs");
  const std::size_t first = std::min(first_tree, model_.trees.size());
  const std::size_t end = first + std::min(n_trees, model_.trees.size() - first), n = end - first;
  const ForestArrays& f = forest_.arrays();
  const auto outputs = [&](const Group<T>& g) {
    std::int8_t* o = out + g.r0 * n;
    const auto stride = static_cast<std::ptrdiff_t>(n);
    if constexpr (std::is_same_v<T, float>)
      kernels_.outputs_f32(f, g.Xt, g.has_nan, first, end, o, stride, g.n_lanes);
    else
      kernels_.outputs_f64(f, g.Xt, g.has_nan, first, end, o, stride, g.n_lanes);
  };
  for_each_group(X, n_threads, outputs);
}

template <typename T>
void Engine::advance_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t t_begin, std::size_t t_end) const {
  const ForestArrays& f = forest_.arrays();
  const std::size_t K = model_.n_outputs;
  if (f.leaf_value != nullptr) {  // regression: f * a per leaf, as the kernels add it
    double s = scores[0];
    for (std::size_t t = t_begin; t < t_end; ++t) s += f.leaf_value[f.leaf_first[t] + row_leaf(f, x, stride, t)];
    scores[0] = s;
    return;
  }
  if (K == 1) {
    double s = scores[0];
    for (std::size_t t = t_begin; t < t_end; ++t) s += signed_step(f.steps[t], row_negative(f, x, stride, t));
    scores[0] = s;
    return;
  }
  for (std::size_t t = t_begin; t < t_end; ++t) {
    const bool neg = row_negative(f, x, stride, t);
    const double* step = f.steps + t * K;
    for (std::size_t k = 0; k < K; ++k) scores[k] += signed_step(step[k], neg);
  }
}

template <typename T>
void Engine::decision_row(const T* x, std::ptrdiff_t stride, double* scores, std::size_t n_trees) const {
  for (std::size_t k = 0; k < model_.n_outputs; ++k) scores[k] = model_.bias[k];
  advance_row(x, stride, scores, 0, used(n_trees));
}

template <typename T>
std::int32_t Engine::predict_row(const T* x, std::ptrdiff_t stride, double* scores, const PredictOptions& options,
                                 std::uint32_t* n_learners) const {
  check_classifier("predict_row");
  return predict_with_stops(stop_, model_, options, used(options.n_trees), scores, n_learners,
                            [&](std::size_t t0, std::size_t t1) { advance_row(x, stride, scores, t0, t1); });
}

#define REBELBOOST_ENGINE(T)                                                                                      \
  template void Engine::decision_function<T>(MatrixView<T>, double*, std::size_t, int, bool) const;               \
  template void Engine::predict<T>(MatrixView<T>, std::int32_t*, const PredictOptions&, std::uint32_t*) const;    \
  template void Engine::tree_outputs<T>(MatrixView<T>, std::int8_t*, int, std::size_t, std::size_t) const;          \
  template void Engine::decision_row<T>(const T*, std::ptrdiff_t, double*, std::size_t) const;                    \
  template void Engine::advance_row<T>(const T*, std::ptrdiff_t, double*, std::size_t, std::size_t) const;        \
  template void Engine::start<T>(const Group<T>&) const;                                                        \
  template void Engine::predict_full<T>(const MatrixView<T>&, std::size_t, int, bool, std::int32_t*, std::uint32_t*) const; \
  template void Engine::add<T>(const Group<T>&, std::size_t, std::size_t) const;                                \
  template std::int32_t Engine::predict_row<T>(const T*, std::ptrdiff_t, double*, const PredictOptions&,          \
                                               std::uint32_t*) const;
REBELBOOST_ENGINE(float)
REBELBOOST_ENGINE(double)
#undef REBELBOOST_ENGINE

}  // namespace rebelboost::predict
