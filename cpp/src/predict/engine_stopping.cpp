// Batch prediction of rows that may stop early (exact early exit, soft cascade).
//
// A chunk's rows start in groups of 16 lanes; all groups advance to the next checkpoint together, and there
// every open lane is checked (StopRule). A decided row keeps its class and learner count; its lane goes on
// being computed while its group has others running, for nothing. Once enough lanes are idle, the rows
// still running are packed into fewer groups (their gathered columns and scores copied), when the tree work
// it saves until the last learner exceeds the copying, counted in values moved. Each lane's arithmetic is
// the same in any group, so the classes never depend on the packing, the chunking or the thread count.
#include <algorithm>
#include <vector>

#include "predict/engine.hpp"
#include "predict/gather.hpp"
#include "util/parallel.hpp"

namespace rebelboost::predict {

namespace {

constexpr std::size_t kChunkRows = 256;
constexpr std::size_t kNoRow = static_cast<std::size_t>(-1);

int popcount(std::uint32_t v) {
  int n = 0;
  for (; v; v &= v - 1) ++n;
  return n;
}

// The groups of one chunk: group g's columns at xt[g * U * 16], scores at scores[g * K * 16], rows and open
// lanes.
template <typename T>
struct LiveGroups {
  std::size_t U = 1, K = 1, n = 0;
  std::vector<T> xt;
  std::vector<double> scores;
  std::vector<std::size_t> rows;
  std::vector<std::uint8_t> nan;
  std::vector<std::uint32_t> open;

  LiveGroups(std::size_t n_slots, std::size_t n_outputs, std::size_t n_groups)
      : U(std::max<std::size_t>(n_slots, 1)), K(n_outputs), n(n_groups), xt(n_groups * U * kLanes, T(0)),
        scores(n_groups * K * kLanes), rows(n_groups * kLanes, kNoRow), nan(n_groups, 0), open(n_groups, 0) {}

  T* xt_of(std::size_t g) { return xt.data() + g * U * kLanes; }
  double* scores_of(std::size_t g) { return scores.data() + g * K * kLanes; }

  // The running lanes packed into ceil(live / 16) groups.
  LiveGroups packed(std::size_t live) const {
    LiveGroups out(U, K, (live + kLanes - 1) / kLanes);
    std::size_t q = 0, l = 0;
    for (std::size_t g = 0; g < n; ++g)
      for (std::size_t j = 0; j < kLanes; ++j) {
        if (!((open[g] >> j) & 1u)) continue;
        for (std::size_t u = 0; u < U; ++u) out.xt[(q * U + u) * kLanes + l] = xt[(g * U + u) * kLanes + j];
        for (std::size_t k = 0; k < K; ++k) out.scores[(q * K + k) * kLanes + l] = scores[(g * K + k) * kLanes + j];
        out.rows[q * kLanes + l] = rows[g * kLanes + j];
        out.nan[q] |= nan[g];
        out.open[q] |= 1u << l;
        if (++l == kLanes) l = 0, ++q;
      }
    return out;
  }
};

}  // namespace

std::uint32_t Engine::decide_lanes(const double* scores, const std::size_t* rows, std::uint32_t open, std::size_t t,
                                   const StopRule::Stops& st, std::int32_t* classes, std::uint32_t* n_learners) const {
  const std::size_t K = model_.n_outputs;
  std::int32_t decided[kLanes];
  std::uint32_t done = 0;
  if (K == 1) {
    done = stop_.decide_binary_lanes(scores, t, st, decided) & open;
  } else {
    LaneLeaders lanes;
    kernels_.leaders(scores, K, lanes);
    for (std::size_t j = 0; j < kLanes; ++j) {
      if (!((open >> j) & 1u)) continue;
      ExitBounds::Leaders l;
      l.lead = static_cast<std::size_t>(lanes.lead[j]);
      l.second = static_cast<std::size_t>(lanes.second[j]);
      l.top = lanes.top[j];
      l.runner = lanes.runner[j];
      l.largest = lanes.largest[j];
      decided[j] = stop_.decide(scores + j, kLanes, t, st, l);
      done |= static_cast<std::uint32_t>(decided[j] >= 0) << j;
    }
  }
  for (std::uint32_t m = done; m; m &= m - 1) {
    std::size_t j = 0;
    while (!((m >> j) & 1u)) ++j;
    classes[rows[j]] = decided[j];
    if (n_learners) n_learners[rows[j]] = static_cast<std::uint32_t>(t);
  }
  return open & ~done;
}

template <typename T>
void Engine::predict_stopping(const MatrixView<T>& X, std::size_t n, const StopRule::Stops& st, int n_threads,
                              std::int32_t* classes, std::uint32_t* n_learners) const {
  const ForestArrays& f = forest_.arrays();
  const std::size_t K = model_.n_outputs;
  const auto n_chunks = static_cast<std::ptrdiff_t>((X.n_rows + kChunkRows - 1) / kChunkRows);
  util::parallel_for(n_chunks, n_threads, [&](std::ptrdiff_t c) {
    const std::size_t begin = static_cast<std::size_t>(c) * kChunkRows, end = std::min(X.n_rows, begin + kChunkRows);
    LiveGroups<T> live(f.n_slots, K, (end - begin + kLanes - 1) / kLanes);
    for (std::size_t g = 0; g < live.n; ++g) {
      const std::size_t r0 = begin + g * kLanes, lanes = std::min(kLanes, end - r0);
      live.nan[g] = gather_group(X, r0, lanes, f, live.xt_of(g));
      start(Group<T>{live.xt_of(g), false, r0, lanes, live.scores_of(g)});
      for (std::size_t j = 0; j < lanes; ++j) live.rows[g * kLanes + j] = r0 + j;
      live.open[g] = (lanes == kLanes ? 0xFFFFu : (1u << lanes) - 1);
    }
    std::size_t running = end - begin;
    for (std::size_t t = 0; t < n && running > 0;) {
      const std::size_t next = st.next(t, n);
      for (std::size_t g = 0; g < live.n; ++g)
        if (live.open[g]) add(Group<T>{live.xt_of(g), live.nan[g] != 0, 0, kLanes, live.scores_of(g)}, t, next);
      t = next;
      if (t == n) break;
      std::size_t busy = 0;
      running = 0;
      for (std::size_t g = 0; g < live.n; ++g) {
        if (!live.open[g]) continue;
        live.open[g] = decide_lanes(live.scores_of(g), &live.rows[g * kLanes], live.open[g], t, st, classes, n_learners);
        running += static_cast<std::size_t>(popcount(live.open[g]));
        busy += live.open[g] != 0;
      }
      const std::size_t needed = (running + kLanes - 1) / kLanes;
      const double saved = static_cast<double>(busy - needed) * static_cast<double>(n - t) * group_tree_cost_;
      if (needed < busy && saved > static_cast<double>(running * (live.U + K))) live = live.packed(running);
    }
    for (std::size_t g = 0; g < live.n; ++g)
      for (std::uint32_t m = live.open[g]; m; m &= m - 1) {
        std::size_t j = 0;
        while (!((m >> j) & 1u)) ++j;
        const std::size_t r = live.rows[g * kLanes + j];
        classes[r] = class_of(live.scores_of(g) + j, K, kLanes);
        if (n_learners) n_learners[r] = static_cast<std::uint32_t>(n);
      }
  });
}

template void Engine::predict_stopping<float>(const MatrixView<float>&, std::size_t, const StopRule::Stops&, int,
                                              std::int32_t*, std::uint32_t*) const;
template void Engine::predict_stopping<double>(const MatrixView<double>&, std::size_t, const StopRule::Stops&, int,
                                               std::int32_t*, std::uint32_t*) const;

}  // namespace rebelboost::predict
