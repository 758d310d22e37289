// The one QuickBoost schedule (thesis Ch. 3 and App. 7.2; docs/quickboost.md): every pruned search runs
// it, whatever its split criterion.
//
// Rows are visited heaviest first and cut into subset 0 (eta of the mass) and M chunks of equal mass
// (chunk_bounds). For a fixed split, the criterion's error on the first m rows never decreases with m
// (weighted error, REBEL's loss, Gini impurity, entropy, variance: App. 7.2), so a feature's best error
// on a prefix of the rows (its preliminary error) bounds the error of all its splits on the whole node.
// Schedule:
//   1. subset: subset 0 of every active feature, and its preliminary error;
//   2. lead: the feature with the lowest preliminary error is finished alone;
//   3. prune: every other feature whose preliminary error already loses to the best complete error is out;
//   4. refine: the survivors are finished chunk by chunk, each dropped as soon as its refreshed preliminary
//      error loses to the best complete error known at that moment (threads share it; any bound at least
//      the final best is safe, so the work may vary with timing, the winner never does).
// A criterion C gives the driver (called concurrently for different features; `Progress` is one feature
// being finished on one thread):
//   using Bound;                              error type, lower is better (int64 or double)
//   Bound first_subset(std::size_t f);        subset 0 of f accumulated; its preliminary error
//   bool loses(Bound prelim, Bound best);     prelim proves every split of f worse than `best`, strictly
//   Progress start(std::size_t f);            f's histogram holding subset 0
//   void add(Progress&, std::size_t j);       chunk j (rows [bounds[j], bounds[j + 1])) added
//   void refresh(Progress&, std::size_t j, Bound& prelim, Bound best);  after chunk j: maybe a new prelim
//   bool complete(Progress&, Bound& error);   the full search of f, kept by C; false: no split beats the node
//   void release(Progress&);                  f's buffers left as start() found them
//   void drop(std::size_t f);                 f pruned after subset 0 (never started): its buffers cleared
//   bool finish_in_bulk(const std::vector<std::size_t>& survivors, std::vector<std::int64_t>& done);
//                                             optional cheaper path for many survivors (false: not taken)
// The winner is then read from C's complete results by the one tie rule (split.hpp), so it is the full
// scan's winner for any thread count and any timing.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tree/histogram.hpp"
#include "tree/quick_prune.hpp"
#include "util/parallel.hpp"

namespace rebelboost::tree {

// The error shared between threads: the lowest complete error so far (the unsplit node's to begin with).
template <typename Bound>
class SharedBest {
 public:
  explicit SharedBest(Bound initial) : best_(initial) {}
  Bound load() const { return best_.load(std::memory_order_relaxed); }
  void lower_to(Bound e) {
    Bound current = load();
    while (e < current && !best_.compare_exchange_weak(current, e, std::memory_order_relaxed)) {
    }
  }

 private:
  std::atomic<Bound> best_;
};

// Runs the schedule above with criterion `c` on the cuts `bounds` (chunk_bounds). `unsplit`: the node's
// error without a split (a split must beat it). `first_threads`: threads worth using for step 1. Adds the
// chunk rows each feature read and the pruned features to `work` (the caller counts subset 0).
template <typename Criterion>
void run_quick_schedule(Criterion& c, const std::vector<std::size_t>& bounds, std::size_t n_features,
                        const std::uint8_t* active_features, int n_threads, int first_threads,
                        typename Criterion::Bound unsplit, QuickWork& work) {
  using Bound = typename Criterion::Bound;
  std::vector<Bound> prelim(n_features, unsplit);
  util::parallel_for(static_cast<std::ptrdiff_t>(n_features), first_threads, [&](std::ptrdiff_t fi) {
    const auto f = static_cast<std::size_t>(fi);
    if (!active_features || active_features[f]) prelim[f] = c.first_subset(f);
  });
  SharedBest<Bound> best(unsplit);
  std::vector<std::int64_t> done(n_features, 0);
  std::vector<std::uint8_t> pruned(n_features, 0);
  auto finish = [&](std::size_t f) {
    auto progress = c.start(f);
    Bound e = prelim[f];
    std::int64_t rows_done = 0;
    for (std::size_t j = 1; j + 1 < bounds.size(); ++j) {
      const Bound bound = best.load();
      if (c.loses(e, bound)) {
        pruned[f] = 1;
        break;
      }
      c.add(progress, j);
      rows_done += static_cast<std::int64_t>(bounds[j + 1] - bounds[j]);
      c.refresh(progress, j, e, bound);
    }
    done[f] = rows_done;
    Bound error{};
    if (!pruned[f] && c.complete(progress, error)) best.lower_to(error);
    c.release(progress);
  };

  // 2. The lead alone; 3. the others it rules out are dropped without being dispatched.
  const std::vector<std::size_t> order = finishing_order(prelim, active_features);
  if (!order.empty()) finish(order[0]);
  const Bound lead_bound = best.load();
  std::vector<std::size_t> survivors, dropped;
  for (std::size_t k = 1; k < order.size(); ++k) {
    const std::size_t f = order[k];
    if (c.loses(prelim[f], lead_bound)) {
      pruned[f] = 1;
      dropped.push_back(f);
    } else {
      survivors.push_back(f);
    }
  }
  // 4. The survivors, spread over threads when they are many.
  if (!c.finish_in_bulk(survivors, done))
    util::parallel_for(static_cast<std::ptrdiff_t>(survivors.size()), finishing_threads(survivors.size(), n_threads),
                       [&](std::ptrdiff_t k) { finish(survivors[static_cast<std::size_t>(k)]); }, /*dynamic=*/true);
  util::parallel_for(static_cast<std::ptrdiff_t>(dropped.size()), util::threads_for(dropped.size() * kHistBins, n_threads),
                     [&](std::ptrdiff_t k) { c.drop(dropped[static_cast<std::size_t>(k)]); });
  for (std::size_t f = 0; f < n_features; ++f) {
    work.bin_accumulations += done[f];
    work.features_pruned += pruned[f];
  }
}

}  // namespace rebelboost::tree
