// Cost of one AdaBoost stump iteration: rebelboost::train with 50 stumps on Fashion-MNIST T-shirt vs Shirt
// (12 000 x 784, or a synthetic look-alike), one thread, plus the binning that precedes the first iteration.
#include <benchmark/benchmark.h>

#include <ctime>
#include <cstdint>
#include <vector>

#include "data/bin_mapper.hpp"
#include "fashion_mnist.hpp"
#include "rebelboost/train.hpp"

namespace {

// The pixels as float32 row-major, the layout a NumPy caller hands over.
rebelboost::MatrixView<float> features() {
  static const std::vector<float> X = [] {
    const auto& p = rebelboost::bench::tshirt_vs_shirt();
    return std::vector<float>(p.pixels.begin(), p.pixels.end());
  }();
  const auto& p = rebelboost::bench::tshirt_vs_shirt();
  return rebelboost::MatrixView<float>::row_major(X.data(), p.n_samples, p.n_features);
}

double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// Whole train() call. ms_per_iter excludes binning: it is the thread CPU time between the callbacks of
// the first and the last iteration divided by the iterations in between (with 1 thread all work runs
// on the calling thread); ns_per_bin_add divides the same time by the histogram adds it performed.
void bm_train(benchmark::State& state) {
  const auto& p = rebelboost::bench::tshirt_vs_shirt();
  rebelboost::TrainParams params;
  params.loss = rebelboost::LossKind::kAdaBoost;
  params.n_estimators = static_cast<int>(state.range(0));
  params.max_depth = 1;
  params.n_threads = 1;
  double iter_ns = 0.0, iters = 0.0, adds = 0.0;
  std::size_t n_trees = 0;
  for (auto _ : state) {
    double first = 0.0, last = 0.0;
    std::int64_t adds_after_first = 0;
    auto on_iteration = [&](const rebelboost::IterationInfo& info) {
      last = thread_cpu_ns();
      if (info.iteration == 0) first = last;
      else adds_after_first += info.bin_accumulations;
      return true;
    };
    rebelboost::TrainResult r = rebelboost::train(features(), p.labels.data(), nullptr, 2, params, on_iteration);
    n_trees = r.model.trees.size();
    if (n_trees > 1) {
      iter_ns += last - first;
      iters += static_cast<double>(n_trees - 1);
      adds += static_cast<double>(adds_after_first);
    }
    benchmark::DoNotOptimize(r.model.bias.data());
  }
  state.counters["trees"] = static_cast<double>(n_trees);
  state.counters["real_fmnist"] = p.real ? 1.0 : 0.0;
  if (iters > 0) {
    state.counters["ms_per_iter"] = iter_ns / iters * 1e-6;
    state.counters["ps_per_bin_add"] = iter_ns / adds * 1e3;
  }
}

// The two halves of the setup that train() runs before the first iteration.
void bm_bin_fit(benchmark::State& state) {
  for (auto _ : state) {
    rebelboost::data::BinMapper bins(256, 200000);
    bins.fit(features(), 1);
    benchmark::DoNotOptimize(&bins);
  }
}

void bm_bin_transform(benchmark::State& state) {
  rebelboost::data::BinMapper bins(256, 200000);
  bins.fit(features(), 1);
  for (auto _ : state) {
    rebelboost::data::BinnedMatrix binned = bins.transform(features(), 1);
    benchmark::DoNotOptimize(binned.codes.data());
  }
  const auto X = features();
  state.counters["ns_per_value"] = benchmark::Counter(
      static_cast<double>(X.n_rows * X.n_cols) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(bm_train)->ArgName("n_estimators")->Arg(1)->Arg(50)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_bin_fit)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_bin_transform)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
