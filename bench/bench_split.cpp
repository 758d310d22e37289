// Split search speed: tree::best_split over 784 features x 256-bin histograms (ns per feature).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "tree/histogram.hpp"
#include "tree/split.hpp"

namespace {

using rebelboost::tree::kHistBins;

constexpr int kFeatures = 784;
constexpr int kValueBins = kHistBins - 1;  // n_bins = 256: bins 0..254 hold values, 255 is missing
constexpr int kMissingBin = kHistBins - 1;

// One histogram per feature of signed fixed-point sums (|total| <= 2^52), half of the bins empty as in
// image data; with_missing puts weight into the missing bin, which doubles the scored candidates.
std::vector<std::int64_t> make_histograms(bool with_missing) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::bernoulli_distribution empty(0.5);
  const double scale = rebelboost::tree::kFixedPointScale / (kFeatures * kHistBins);
  std::vector<std::int64_t> h(static_cast<std::size_t>(kFeatures) * kHistBins, 0);
  for (int f = 0; f < kFeatures; ++f)
    for (int b = 0; b < kHistBins; ++b) {
      if (b == kMissingBin && !with_missing) continue;
      if (!empty(rng)) h[static_cast<std::size_t>(f) * kHistBins + b] = std::llround(value(rng) * scale);
    }
  return h;
}

void bm_best_split(benchmark::State& state, bool with_missing) {
  const std::vector<std::int64_t> hists = make_histograms(with_missing);
  for (auto _ : state) {
    rebelboost::tree::SplitInfo winner;
    for (int f = 0; f < kFeatures; ++f) {
      const rebelboost::tree::SplitInfo s =
          rebelboost::tree::best_split(hists.data() + static_cast<std::size_t>(f) * kHistBins, kValueBins,
                                       kMissingBin, f);
      if (s.found() && (!winner.found() || rebelboost::tree::better(s, winner))) winner = s;
    }
    benchmark::DoNotOptimize(winner);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * kFeatures);
  state.counters["ns_per_feature"] = benchmark::Counter(
      kFeatures * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK_CAPTURE(bm_best_split, no_missing, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bm_best_split, with_missing, true)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
