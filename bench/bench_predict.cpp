// Prediction speed: batches through each kernel set (ns per row, rows/s) and the latency of one row.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <random>
#include <utility>
#include <vector>

#include "predict/engine.hpp"
#include "predict/kernels.hpp"
#include "rebelboost/predict.hpp"
#include "rebelboost/train.hpp"

namespace {

constexpr std::size_t kRows = 20000;
constexpr std::size_t kCols = 50;

// Synthetic binary data, float32 row-major: the label depends on a few features through thresholds and
// an interaction, plus 10% label noise, so deep trees keep finding splits.
struct Dataset {
  std::vector<float> X;
  std::vector<std::int32_t> y;
};

const Dataset& dataset() {
  static const Dataset d = [] {
    Dataset out{std::vector<float>(kRows * kCols), std::vector<std::int32_t>(kRows)};
    std::mt19937_64 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::bernoulli_distribution flip(0.1);
    for (std::size_t r = 0; r < kRows; ++r) {
      float* x = &out.X[r * kCols];
      for (std::size_t c = 0; c < kCols; ++c) x[c] = normal(rng);
      const float s = x[0] + 0.5f * x[1] - x[2] * x[3] + (x[4] > 0.5f ? 1.0f : -0.5f);
      out.y[r] = (s > 0.0f) != flip(rng) ? 1 : 0;
    }
    return out;
  }();
  return d;
}

// AdaBoost model with n_trees trees of the given depth (200 by default), trained once.
const rebelboost::Model& model(int depth, int n_trees = 200) {
  static std::map<std::pair<int, int>, rebelboost::Model> cache;
  auto it = cache.find({depth, n_trees});
  if (it == cache.end()) {
    const Dataset& d = dataset();
    rebelboost::TrainParams p;
    p.loss = rebelboost::LossKind::kAdaBoost;
    p.n_estimators = n_trees;
    p.max_depth = depth;
    p.n_threads = 2;
    auto X = rebelboost::MatrixView<float>::row_major(d.X.data(), kRows, kCols);
    it = cache.emplace(std::make_pair(depth, n_trees), rebelboost::train(X, d.y.data(), nullptr, 2, p).model).first;
  }
  return it->second;
}

void row_counters(benchmark::State& state, std::size_t rows_per_iteration) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * rows_per_iteration));  // items/s = rows/s
  state.counters["ns_per_row"] = benchmark::Counter(
      static_cast<double>(rows_per_iteration) * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// decision_function of a compiled model through one kernel set ("generic", "avx2", "avx512"; skipped
// where the CPU lacks it), one thread.
void bm_kernels(benchmark::State& state, int depth, int n_trees, const char* isa) {
  const rebelboost::predict::Kernels* kernels = &rebelboost::predict::generic_kernels();
  if (std::string(isa) == "avx2") kernels = rebelboost::predict::avx2_kernels();
  if (std::string(isa) == "avx512") kernels = rebelboost::predict::avx512_kernels();
  if (!kernels) {
    state.SkipWithError("instruction set not available");
    return;
  }
  const Dataset& d = dataset();
  const rebelboost::Model& m = model(depth, n_trees);
  const rebelboost::predict::Engine engine(m, *kernels);
  const auto X = rebelboost::MatrixView<float>::row_major(d.X.data(), kRows, kCols);
  std::vector<double> scores(kRows);
  for (auto _ : state) {
    engine.decision_function(X, scores.data(), rebelboost::kAllLearners, /*n_threads=*/1);
    benchmark::DoNotOptimize(scores.data());
    benchmark::ClobberMemory();
  }
  row_counters(state, kRows);
  state.counters["trees"] = static_cast<double>(m.trees.size());
}

}  // namespace

BENCHMARK_CAPTURE(bm_kernels, stumps_200_generic, 1, 200, "generic")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_kernels, stumps_200_avx512, 1, 200, "avx512")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_kernels, depth2_1000_generic, 2, 1000, "generic")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_kernels, depth2_1000_avx2, 2, 1000, "avx2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_kernels, depth2_1000_avx512, 2, 1000, "avx512")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_kernels, depth3_200_avx512, 3, 200, "avx512")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_kernels, depth6_200_generic, 6, 200, "generic")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_kernels, depth6_200_avx512, 6, 200, "avx512")->Unit(benchmark::kMillisecond);

namespace {

// One row at a time (latency) through a compiled Predictor: no allocation, no threads.
void bm_single_row(benchmark::State& state, int depth, int n_trees) {
  const Dataset& d = dataset();
  const rebelboost::Predictor predictor(model(depth, n_trees));
  double score = 0.0;
  std::size_t r = 0;
  for (auto _ : state) {
    predictor.decision_row(d.X.data() + r * kCols, 1, &score);
    benchmark::DoNotOptimize(score);
    r = (r + 1) % kRows;
  }
  row_counters(state, 1);
}

}  // namespace

BENCHMARK_CAPTURE(bm_single_row, depth3_200, 3, 200)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(bm_single_row, depth2_1000, 2, 1000)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
