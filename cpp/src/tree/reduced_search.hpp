// The distributed layer search (docs/distributed.md, "QuickBoost across workers"): which pass a layer of a
// distributed fit takes, and the bound that lets participants skip the features that provably lose.
//
// Every participant must make the same choice (it decides which reductions follow), so the choice reads
// only reduced numbers: the layer's global row count, its mass concentration, and the time per layer,
// averaged over the participants. Local timings enter the choice one layer of the same kind late, in the
// tail of that layer's first message. Either pass gives the same tree; the choice only moves the work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tree/node_search.hpp"

namespace rebelboost::tree {

// A participant's lower bound on a feature's error over every row of the fit: 2 min_s e_s(S) over its own
// heavy rows S, from the histogram `hist` of S, whose |values| total `heavy_mass`. For a split s, the
// error 2 e_s = T - |L| - |R| over all rows is at least the sum over participants of their 2 e_s on their
// own rows (|L| <= sum of the participants' |L_p|), which is at least that on any subset (thesis Prop. 3.2);
// so the sum over participants of these bounds never exceeds the feature's complete error.
std::int64_t heavy_rows_bound(const std::int64_t* hist, std::int64_t heavy_mass, int n_value_bins, int missing_bin);

class ReducedQuickPolicy {
 public:
  explicit ReducedQuickPolicy(QuickMode mode) : mode_(mode) {}
  // Whether layer `layer` takes the pruned pass (identical on every participant).
  bool choose(int layer, std::size_t n_active);
  // A participant's own choice inside the pruned pass: bound from its heavy rows and build only the
  // histograms that survive (true), or build every histogram as the full scan does and send only those
  // (false). True when an estimated quarter of its rows or fewer hold 99 % of the mass of values q[0, n).
  static bool heavy_rows_are_few(std::size_t n, const std::int64_t* q);

  // Values appended to a layer's first message (kOff: none), summed by the reduction.
  std::size_t stats_size() const { return mode_ == QuickMode::kAuto ? kStats : 0; }
  // The participant's part: its rows in the layer and those holding 90 % of their mass (an estimate from
  // values q of rows [0, n)), and the wall time of its previous layer of this kind.
  void append_stats(int layer, std::size_t n, const std::int64_t* q, std::int64_t* tail) const;
  // After the reduction: the global figures the next choices read.
  void read_stats(int layer, const std::int64_t* tail);
  // At the end of a layer: its local wall time, sent with the next layer of its kind.
  void finish_layer(int layer, bool quick, double seconds);

 private:
  static constexpr std::size_t kStats = 5;  // participants, rows, heavy rows, pending ns, pending flag
  static constexpr double kFewHeavyRows = 0.25;
  static std::vector<std::uint32_t> sample_rows(std::size_t n);  // at most ~2048 of [0, n), evenly spaced
  struct Kind {  // the root and deeper layers apart, as the local chooser (contiguous vs gathered rows)
    QuickChooser chooser;
    bool have_stats = false;
    std::int64_t rows = 0;         // global rows of the last layer of this kind
    double mass90 = 1.0;           // their mass concentration
    bool pending = false;          // a local time waits to be sent
    bool pending_quick = false;
    std::int64_t pending_rows = 0;
    std::int64_t pending_ns = 0;
  };
  QuickMode mode_;
  Kind kinds_[2];
};

}  // namespace rebelboost::tree
