// Batch prediction of rows that may stop early (exact early exit, soft cascade).
//
// A chunk's rows start in groups of 16 lanes and all groups advance together. Multi-class models: to the
// next checkpoint where some running row of the chunk could be decided (StopRule::next_possible), where every
// open lane is checked (StopRule). Binary models: kSyncLearners learners at a time, the checks made inside
// the kernel with the 16 scores in registers. A decided row keeps its class and learner count; its lane goes
// on being computed while its group has others running, for nothing. When the tree work it saves until the
// last learner exceeds the copying (counted in values moved), the running lanes of the emptiest groups move
// into the free lanes of the fullest ones (gathered columns and scores copied), so the work follows the
// rows still running. Columns are copied lazily: slots are numbered in order of first use by the trees
// (FlatForest), and before advancing to learner t the running lanes get the slots the trees before t read
// (ForestArrays::slots_before), so a row that leaves early never has the later trees' columns copied (on
// wide rows the copy is most of full evaluation's cost). Each lane's arithmetic is the same in any group,
// so the classes never depend on the packing, the chunking or the thread count. A thread's groups are
// allocated once and serve all its chunks, which are handed out one at a time (their costs differ).
#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "predict/engine.hpp"
#include "predict/gather.hpp"
#include "predict/reject_inf.hpp"
#include "util/parallel.hpp"

namespace rebelboost::predict {

namespace {

constexpr std::size_t kChunkRows = 256;
constexpr std::size_t kNoRow = static_cast<std::size_t>(-1);

// Binary models check inside the kernel (BinaryStops) and come back to the chunk, to pack the rows still
// running, after the checkpoint spacing clamped to [kMinSyncLearners, kSyncLearners] learners; the interval
// doubles (up to kMaxSyncLearners) while no row leaves.
constexpr std::size_t kMinSyncLearners = 8, kSyncLearners = 32, kMaxSyncLearners = 256;
// decide_lanes computes the leaders lane by lane (one pass over the lane's K scores each) for at most this
// many candidate lanes, else for all 16 lanes in one kernel pass.
constexpr std::size_t kLaneByLaneLeaders = 4;

std::size_t popcount(std::uint32_t v) { return static_cast<std::size_t>(__builtin_popcount(v)); }
// The index of the lowest set bit of m != 0.
std::size_t lowest_lane(std::uint32_t m) { return static_cast<std::size_t>(__builtin_ctz(m)); }

// A binary model's checkpoints below n and their tests, computed once per call.
struct BinaryPlan {
  std::vector<std::size_t> at;
  std::vector<BinaryTest> tests;

  BinaryPlan(const StopRule& rule, const StopRule::Stops& st, std::size_t n) {
    for (std::size_t s = st.next(0, n); s < n; s = st.next(s, n)) {
      at.push_back(s);
      tests.push_back(rule.binary_test(s, st));
    }
  }
  // The checkpoints from index i on that are at most t_end.
  BinaryStops between(std::size_t i, std::size_t t_end) const {
    const auto last = std::upper_bound(at.begin() + static_cast<std::ptrdiff_t>(i), at.end(), t_end);
    return {at.data() + i, tests.data() + i, static_cast<std::size_t>(last - at.begin()) - i};
  }
};

// The groups of one chunk: group g's columns at xt[g * U * 16], scores at scores[g * K * 16], rows and open
// lanes.
template <typename T>
struct LiveGroups {
  std::size_t U = 1, K = 1, n = 0;
  std::size_t have = 0;  // slots gathered so far in every running lane (the same for all: they move together)
  std::vector<T> xt;
  std::vector<double> scores;
  std::vector<std::size_t> rows;
  std::vector<std::uint8_t> nan;
  std::vector<std::uint32_t> open;

  LiveGroups(std::size_t n_slots, std::size_t n_outputs, std::size_t n_groups)
      : U(std::max<std::size_t>(n_slots, 1)), K(n_outputs), n(n_groups), xt(n_groups * U * kLanes, T(0)),
        scores(n_groups * K * kLanes), rows(n_groups * kLanes, kNoRow), nan(n_groups, 0), open(n_groups, 0) {}

  // Ready for a chunk of n_groups groups (at most the constructor's): a thread's groups serve all its
  // chunks, so their buffers are allocated (and their pages faulted in) once. Columns are not cleared:
  // every lane's columns are written before a kernel reads them (gather_lanes), or belong to no row.
  void reset(std::size_t n_groups) {
    n = n_groups;
    have = 0;
    std::fill(rows.begin(), rows.end(), kNoRow);
    std::fill(nan.begin(), nan.end(), std::uint8_t{0});
    std::fill(open.begin(), open.end(), 0u);
  }

  T* xt_of(std::size_t g) { return xt.data() + g * U * kLanes; }
  double* scores_of(std::size_t g) { return scores.data() + g * K * kLanes; }

  // The groups by running lanes, most first (ties by index), and how many lanes packing the running ones
  // into the first `keep` of them moves.
  std::size_t order_groups(std::size_t keep, std::vector<std::size_t>& order) const {
    // An insertion sort: stable, and no allocation (this runs at most checkpoints of every chunk).
    order.clear();
    for (std::size_t g = 0; g < n; ++g) {
      if (!open[g]) continue;
      order.push_back(g);
      for (std::size_t i = order.size() - 1; i > 0 && popcount(open[order[i - 1]]) < popcount(open[g]); --i)
        std::swap(order[i], order[i - 1]);
    }
    std::size_t moved = 0;
    for (std::size_t i = keep; i < order.size(); ++i) moved += popcount(open[order[i]]);
    return moved;
  }

  // Moves the running lanes of the groups order[keep..] into free lanes of order[0..keep) (which have room
  // for them all); their columns, scores and rows go along.
  void pack(const std::vector<std::size_t>& order, std::size_t keep) {
    std::size_t d = 0;
    for (std::size_t i = keep; i < order.size(); ++i) {
      const std::size_t g = order[i];
      for (std::uint32_t m = open[g]; m; m &= m - 1) {
        const std::size_t j = lowest_lane(m);
        while (open[order[d]] == 0xFFFFu) ++d;
        const std::size_t q = order[d], l = lowest_lane(~open[q] & 0xFFFFu);
        for (std::size_t u = 0; u < have; ++u) xt[(q * U + u) * kLanes + l] = xt[(g * U + u) * kLanes + j];
        for (std::size_t k = 0; k < K; ++k) scores[(q * K + k) * kLanes + l] = scores[(g * K + k) * kLanes + j];
        rows[q * kLanes + l] = rows[g * kLanes + j];
        nan[q] |= nan[g];
        open[q] |= 1u << l;
      }
      open[g] = 0;
    }
  }
};

}  // namespace

template <typename T>
std::uint32_t Engine::advance_binary(const Group<T>& g, std::size_t t_begin, std::size_t t_end, const BinaryStops& stops,
                                     std::uint32_t open, const std::size_t* rows, std::int32_t* classes,
                                     std::uint32_t* n_learners) const {
  std::uint32_t left[kLanes], ones = 0, still = 0;
  if constexpr (std::is_same_v<T, float>)
    still = kernels_.advance_binary_f32(forest_.arrays(), g.Xt, g.has_nan, t_begin, t_end, stops, g.scores, open, left, &ones);
  else
    still = kernels_.advance_binary_f64(forest_.arrays(), g.Xt, g.has_nan, t_begin, t_end, stops, g.scores, open, left, &ones);
  for (std::uint32_t m = open & ~still; m; m &= m - 1) {
    const std::size_t j = lowest_lane(m);
    classes[rows[j]] = static_cast<std::int32_t>((ones >> j) & 1u);
    if (n_learners) n_learners[rows[j]] = left[j];
  }
  return still;
}

std::uint32_t Engine::decide_lanes(const double* scores, const std::size_t* rows, std::uint32_t open, std::size_t t,
                                   const StopRule::Stops& st, std::int32_t* classes, std::uint32_t* n_learners,
                                   StopRule::Margins& margins) const {
  const std::size_t K = model_.n_outputs;
  // The exact bound never decides a lane whose spread or lead (top - runner-up) is too small
  // (StopRule::exact_possible), and a cascade's threshold never one whose lead (its margin) is below the
  // checkpoint's smallest threshold: the spreads and leads first (a max, a min and a second max per class),
  // the leaders only for the lanes that pass. With many classes the spread is far above the lead, so testing
  // the spread alone sent nearly every lane to the leaders at every checkpoint.
  double least = std::numeric_limits<double>::infinity();
  if (st.cascade && t / st.every - 1 < st.n_checkpoints) {
    const std::size_t w = model_.n_classes(), c = t / st.every - 1;
    for (std::size_t k = 0; k < w; ++k) least = std::min(least, st.cascade->thresholds[c * w + k]);
  }
  double hi[kLanes], lo[kLanes], second[kLanes];
  for (std::size_t j = 0; j < kLanes; ++j) hi[j] = lo[j] = scores[j], second[j] = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 1; k < K; ++k)
    for (std::size_t j = 0; j < kLanes; ++j) {
      const double v = scores[k * kLanes + j];
      const double below = v < hi[j] ? v : hi[j];  // min(top, v): the runner-up if v is the new top
      second[j] = below > second[j] ? below : second[j];
      hi[j] = v > hi[j] ? v : hi[j];
      lo[j] = v < lo[j] ? v : lo[j];
    }
  std::uint32_t candidates = 0;
  for (std::uint32_t m = open; m; m &= m - 1) {
    const std::size_t j = lowest_lane(m);
    const StopRule::Margins lane{hi[j] - lo[j], hi[j] - second[j]};
    if (stop_.exact_possible(t, lane, st) || !(lane.lead < least))
      candidates |= 1u << j;
    else
      margins.raise(lane);
  }
  if (!candidates) return open;
  std::int32_t decided[kLanes];
  std::uint32_t done = 0;
  // The leaders of all 16 lanes in one kernel pass, or lane by lane where few lanes need them (the same
  // values either way: ExitBounds::leaders is the kernel's rule).
  const bool few = popcount(candidates) <= kLaneByLaneLeaders;
  LaneLeaders lanes;
  if (!few) kernels_.leaders(scores, K, lanes);
  for (std::uint32_t m = candidates; m; m &= m - 1) {
    const std::size_t j = lowest_lane(m);
    ExitBounds::Leaders l;
    if (few) {
      l = ExitBounds::leaders(scores + j, kLanes, K);
    } else {
      l.lead = static_cast<std::size_t>(lanes.lead[j]);
      l.second = static_cast<std::size_t>(lanes.second[j]);
      l.top = lanes.top[j];
      l.runner = lanes.runner[j];
      l.largest = lanes.largest[j];
    }
    decided[j] = stop_.decide(scores + j, kLanes, t, st, l);
    done |= static_cast<std::uint32_t>(decided[j] >= 0) << j;
    if (decided[j] < 0) margins.raise({hi[j] - lo[j], hi[j] - second[j]});
  }
  for (std::uint32_t m = done; m; m &= m - 1) {
    const std::size_t j = lowest_lane(m);
    classes[rows[j]] = decided[j];
    if (n_learners) n_learners[rows[j]] = static_cast<std::uint32_t>(t);
  }
  return open & ~done;
}

template <typename T>
void Engine::predict_stopping(const MatrixView<T>& X, std::size_t n, const StopRule::Stops& st, int n_threads,
                              bool check_inf, std::int32_t* classes, std::uint32_t* n_learners) const {
  const ForestArrays& f = forest_.arrays();
  const std::size_t K = model_.n_outputs;
  const auto n_chunks = static_cast<std::ptrdiff_t>((X.n_rows + kChunkRows - 1) / kChunkRows);
  std::unique_ptr<const BinaryPlan> plan;
  if (K == 1) plan = std::make_unique<const BinaryPlan>(stop_, st, n);
  std::vector<std::unique_ptr<LiveGroups<T>>> pool(static_cast<std::size_t>(util::resolve_threads(n_threads)));
  // Chunks take different times (their rows leave at different learners): handed out one at a time.
  util::parallel_for(n_chunks, n_threads, [&](std::ptrdiff_t c) {
    const std::size_t begin = static_cast<std::size_t>(c) * kChunkRows, end = std::min(X.n_rows, begin + kChunkRows);
    std::unique_ptr<LiveGroups<T>>& mine = pool[std::min(pool.size() - 1, static_cast<std::size_t>(util::thread_index()))];
    if (!mine) mine = std::make_unique<LiveGroups<T>>(f.n_slots, K, kChunkRows / kLanes);
    LiveGroups<T>& live = *mine;
    live.reset((end - begin + kLanes - 1) / kLanes);
    std::vector<std::size_t> order;
    // The chunk's rows are copied lazily, over many returns: read them in address order once, now (the inf
    // check reads them all, in order: then it is that read, and X is read from memory once).
    if (check_inf)
      reject_inf_rows(X, begin, end);
    else if (streams(X, end - begin))
      stream_rows(X, begin, end);
    for (std::size_t g = 0; g < live.n; ++g) {
      const std::size_t r0 = begin + g * kLanes, lanes = std::min(kLanes, end - r0);
      start(Group<T>{live.xt_of(g), false, r0, lanes, live.scores_of(g)});
      for (std::size_t j = 0; j < lanes; ++j) live.rows[g * kLanes + j] = r0 + j;
      live.open[g] = (lanes == kLanes ? 0xFFFFu : (1u << lanes) - 1);
    }
    std::size_t running = end - begin;
    // The largest margins of a running row (StopRule::next_possible); every row starts at the bias.
    StopRule::Margins margins = StopRule::margins(model_.bias.data(), 1, K);
    std::size_t first_stop = 0;  // binary: the plan's first checkpoint after t
    // The first return (and the one after a segment where rows left) comes after the checkpoint spacing,
    // within [kMinSyncLearners, kSyncLearners]: a cascade whose rows mostly leave at its first checkpoints
    // then packs and gathers for the rows still running at once, instead of running every lane 32 learners.
    const std::size_t sync0 = std::min(kSyncLearners, std::max(kMinSyncLearners, st.every));
    std::size_t sync = sync0;
    for (std::size_t t = 0; t < n && running > 0;) {
      std::size_t next = n;
      const std::size_t was_running = running;
      if (K > 1) next = stop_.next_possible(t, margins, st);
      if (K == 1) next = std::min(n, t + sync);  // checked inside the kernel up to the next sync
      // The columns the learners up to `next` read, for the rows still running (a row that stopped early
      // never had the rest copied).
      const std::size_t need = f.slots_before[next];
      if (need > live.have) {
        for (std::size_t g = 0; g < live.n; ++g)
          if (live.open[g])
            live.nan[g] |= gather_lanes(X, &live.rows[g * kLanes], live.open[g], live.have, need, f, live.xt_of(g),
                                          scan_nan_);
        live.have = need;
      }
      if (K == 1) {
        const BinaryStops stops = plan->between(first_stop, next);
        first_stop += stops.n;
        for (std::size_t g = 0; g < live.n; ++g)
          if (live.open[g])
            live.open[g] = advance_binary(Group<T>{live.xt_of(g), live.nan[g] != 0, 0, kLanes, live.scores_of(g)}, t,
                                          next, stops, live.open[g], &live.rows[g * kLanes], classes, n_learners);
      } else {
        for (std::size_t g = 0; g < live.n; ++g)
          if (live.open[g]) add(Group<T>{live.xt_of(g), live.nan[g] != 0, 0, kLanes, live.scores_of(g)}, t, next);
      }
      t = next;
      if (t == n) break;
      std::size_t busy = 0;
      running = 0;
      margins = {};
      for (std::size_t g = 0; g < live.n; ++g) {
        if (!live.open[g]) continue;
        if (K > 1)
          live.open[g] = decide_lanes(live.scores_of(g), &live.rows[g * kLanes], live.open[g], t, st, classes,
                                      n_learners, margins);
        running += popcount(live.open[g]);
        busy += live.open[g] != 0;
      }
      sync = running == was_running ? std::min(2 * sync, kMaxSyncLearners) : sync0;
      const std::size_t needed = (running + kLanes - 1) / kLanes;
      if (needed == busy) continue;
      const double saved = static_cast<double>(busy - needed) * static_cast<double>(n - t) * group_tree_cost_;
      const std::size_t moved = live.order_groups(needed, order);
      if (saved > static_cast<double>(moved * (live.have + K))) live.pack(order, needed);
    }
    for (std::size_t g = 0; g < live.n; ++g)
      for (std::uint32_t m = live.open[g]; m; m &= m - 1) {
        const std::size_t j = lowest_lane(m);
        const std::size_t r = live.rows[g * kLanes + j];
        classes[r] = class_of(live.scores_of(g) + j, K, kLanes);
        if (n_learners) n_learners[r] = static_cast<std::uint32_t>(n);
      }
  }, /*dynamic=*/true);
}

template void Engine::predict_stopping<float>(const MatrixView<float>&, std::size_t, const StopRule::Stops&, int,
                                              bool, std::int32_t*, std::uint32_t*) const;
template void Engine::predict_stopping<double>(const MatrixView<double>&, std::size_t, const StopRule::Stops&, int,
                                               bool, std::int32_t*, std::uint32_t*) const;

}  // namespace rebelboost::predict
