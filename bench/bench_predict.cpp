// Batch prediction speed of rebelboost::decision_function on one thread (ns per row, rows per second).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

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

// AdaBoost model with 200 trees of the given depth, trained once per depth.
const rebelboost::Model& model(int depth) {
  static std::map<int, rebelboost::Model> cache;
  auto it = cache.find(depth);
  if (it == cache.end()) {
    const Dataset& d = dataset();
    rebelboost::TrainParams p;
    p.loss = rebelboost::LossKind::kAdaBoost;
    p.n_estimators = 200;
    p.max_depth = depth;
    p.n_threads = 1;
    auto X = rebelboost::MatrixView<float>::row_major(d.X.data(), kRows, kCols);
    it = cache.emplace(depth, rebelboost::train(X, d.y.data(), nullptr, 2, p).model).first;
  }
  return it->second;
}

void bm_decision_function(benchmark::State& state, int depth) {
  const Dataset& d = dataset();
  const rebelboost::Model& m = model(depth);
  const auto X = rebelboost::MatrixView<float>::row_major(d.X.data(), kRows, kCols);
  std::vector<double> scores(kRows);
  for (auto _ : state) {
    rebelboost::decision_function(m, X, scores.data(), /*n_threads=*/1);
    benchmark::DoNotOptimize(scores.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRows));  // items/s = rows/s
  state.counters["ns_per_row"] = benchmark::Counter(
      kRows * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["trees"] = static_cast<double>(m.trees.size());
}

}  // namespace

BENCHMARK_CAPTURE(bm_decision_function, stumps_200, 1)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_decision_function, depth3_200, 3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bm_decision_function, depth6_200, 6)->Unit(benchmark::kMillisecond);

// One row at a time (latency): the node walk, since building the branch-free form would cost more.
void bm_single_row(benchmark::State& state) {
  const Dataset& d = dataset();
  const rebelboost::Model& m = model(3);
  double score = 0.0;
  std::size_t r = 0;
  for (auto _ : state) {
    const auto X = rebelboost::MatrixView<float>::row_major(d.X.data() + r * kCols, 1, kCols);
    rebelboost::decision_function(m, X, &score, /*n_threads=*/1);
    benchmark::DoNotOptimize(score);
    r = (r + 1) % kRows;
  }
  state.counters["ns_per_row"] = benchmark::Counter(1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(bm_single_row)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
