// REBEL's multi-class root histogram (the hot loop of multi-class training): ns per sample x feature x class;
// and two exact ways to get its second layer's histograms (ns per sample x feature of the layer).
//
// accumulate_vectors adds one fixed-point K-vector per row into the row's bin (two interleaved copies);
// best_multiclass_root is the whole first-layer search (class blocks, histograms, split scan) on the
// Fashion-MNIST T-shirt vs Shirt pixels (or their synthetic look-alike) with K random class labels.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "data/bin_mapper.hpp"
#include "data/binned_matrix.hpp"
#include "fashion_mnist.hpp"
#include "rebelboost/matrix_view.hpp"
#include "tree/histogram.hpp"
#include "tree/multiclass_split.hpp"

namespace {

struct Data {
  std::size_t n = 0, d = 0;
  std::vector<float> X;                   // row-major pixels
  rebelboost::data::BinnedMatrix binned;  // from a real BinMapper
  rebelboost::data::BinMapper mapper{256, 200000};
};

const Data& data() {
  static Data* d = [] {
    auto* out = new Data;
    const rebelboost::bench::PixelData& p = rebelboost::bench::tshirt_vs_shirt();
    out->n = p.n_samples;
    out->d = p.n_features;
    out->X.assign(p.pixels.begin(), p.pixels.end());
    const auto view = rebelboost::MatrixView<float>::row_major(out->X.data(), out->n, out->d);
    out->mapper.fit(view, 1);
    out->binned = out->mapper.transform(view, 1);
    return out;
  }();
  return *d;
}

// Fixed-point K-vectors for n rows (random positive weights, total 2^52), rows sorted by a random class.
std::vector<std::int64_t> vectors(std::size_t n, std::size_t K, std::vector<std::size_t>& class_begin) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::size_t> cls(0, K - 1);
  std::vector<std::size_t> counts(K, 0);
  for (std::size_t i = 0; i < n; ++i) ++counts[cls(rng)];
  class_begin.assign(K + 1, 0);
  for (std::size_t c = 0; c < K; ++c) class_begin[c + 1] = class_begin[c] + counts[c];
  std::uniform_real_distribution<double> w(0.1, 1.0);
  std::vector<double> raw(n * K);
  double total = 0.0;
  for (double& v : raw) total += (v = w(rng));
  std::vector<std::int64_t> out(n * K);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = rebelboost::tree::to_fixed_point(raw[i] / total * rebelboost::tree::kFixedPointScale);
  return out;
}

void counters(benchmark::State& state, double elements, double K) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * elements));
  state.counters["ns_per_elem"] =
      benchmark::Counter(elements * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["ns_per_elem_class"] = benchmark::Counter(
      elements * K * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// One histogram pair per feature over all rows (the kernel alone).
void bm_accumulate_vectors(benchmark::State& state) {
  const Data& d = data();
  const auto K = static_cast<std::size_t>(state.range(0));
  std::vector<std::size_t> class_begin;
  const std::vector<std::int64_t> v = vectors(d.n, K, class_begin);
  std::vector<std::int64_t> h(2 * rebelboost::tree::kHistBins * K);
  for (auto _ : state) {
    for (std::size_t f = 0; f < d.d; ++f) {
      std::fill(h.begin(), h.end(), 0);
      rebelboost::tree::accumulate_vectors(d.binned.column(f), v.data(), 0, d.n, K, h.data(),
                                           h.data() + rebelboost::tree::kHistBins * K);
      benchmark::DoNotOptimize(h.data());
    }
    benchmark::ClobberMemory();
  }
  counters(state, static_cast<double>(d.n * d.d), static_cast<double>(K));
}

// The whole first-layer search of a REBEL tree, 1 thread.
void bm_multiclass_root(benchmark::State& state) {
  const Data& d = data();
  const auto K = static_cast<std::size_t>(state.range(0));
  std::vector<std::size_t> class_begin;
  const std::vector<std::int64_t> v = vectors(d.n, K, class_begin);
  for (auto _ : state) {
    auto r = rebelboost::tree::best_multiclass_root(d.binned, d.mapper, v.data(), K, class_begin, 1);
    benchmark::DoNotOptimize(r);
  }
  counters(state, static_cast<double>(d.n * d.d), static_cast<double>(K));
}

// REBEL's second layer (scalar values that depend on the step, docs/methods/rebel.md "Trees"), two exact ways:
//  direct:     both children's scalar histograms from their rows (what the grower does);
//  from_root:  the smaller child's from its rows, the parent's as the fixed-order integer combination
//              sum_k c_k (W-_k - W+_k) of the root's kept K-vector histograms, the sibling as the difference
//              (exact only if every row's value is the same combination of its K-vector, so the values
//              lose precision: see bench/README.md).
// Children: a root split at the median code of feature 300 (about half the rows each side).
struct Layer1 {
  std::vector<std::uint32_t> left, right;
  std::vector<std::int64_t> q_left, q_right;
  std::vector<std::int64_t> root_hists;  // per feature: W+ (kHistBins x K) then W- (kHistBins x K)
  std::vector<std::int64_t> c;           // integer coefficients, one per class
};

const Layer1& layer1(std::size_t K) {
  static std::vector<Layer1*> cache(17, nullptr);
  if (cache[K]) return *cache[K];
  const Data& d = data();
  auto* l = new Layer1;
  const std::uint8_t* col = d.binned.column(300);
  std::vector<std::uint8_t> sorted(col, col + d.n);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(d.n / 2), sorted.end());
  std::mt19937_64 rng(11);
  for (std::uint32_t r = 0; r < d.n; ++r) {
    const auto q = static_cast<std::int64_t>(rng() >> 30) - (std::int64_t{1} << 33);
    if (col[r] <= sorted[d.n / 2]) {
      l->left.push_back(r);
      l->q_left.push_back(q);
    } else {
      l->right.push_back(r);
      l->q_right.push_back(q);
    }
  }
  l->root_hists.resize(d.d * 2 * rebelboost::tree::kHistBins * K);
  for (auto& v : l->root_hists) v = static_cast<std::int64_t>(rng() >> 20);
  for (std::size_t k = 0; k < K; ++k) l->c.push_back(static_cast<std::int64_t>(rng() % 2048) - 1024);
  cache[K] = l;
  return *l;
}

void bm_layer1_direct(benchmark::State& state) {
  const Data& d = data();
  const auto K = static_cast<std::size_t>(state.range(0));
  const Layer1& l = layer1(K);
  std::vector<std::int64_t> h(2 * rebelboost::tree::kHistBins);
  for (auto _ : state) {
    for (std::size_t f = 0; f < d.d; ++f) {
      std::fill(h.begin(), h.end(), 0);
      rebelboost::tree::accumulate_gather(d.binned.column(f), l.left.data(), l.q_left.data(), l.left.size(), h.data());
      rebelboost::tree::accumulate_gather(d.binned.column(f), l.right.data(), l.q_right.data(), l.right.size(),
                                          h.data() + rebelboost::tree::kHistBins);
      benchmark::DoNotOptimize(h.data());
    }
  }
  counters(state, static_cast<double>(d.n * d.d), 1.0);
}

void bm_layer1_from_root(benchmark::State& state) {
  const Data& d = data();
  const auto K = static_cast<std::size_t>(state.range(0));
  const Layer1& l = layer1(K);
  const bool left_small = l.left.size() <= l.right.size();
  const auto& rows = left_small ? l.left : l.right;
  const auto& q = left_small ? l.q_left : l.q_right;
  constexpr int B = rebelboost::tree::kHistBins;
  std::vector<std::int64_t> h(2 * B);
  for (auto _ : state) {
    for (std::size_t f = 0; f < d.d; ++f) {
      std::int64_t* small = h.data();
      std::int64_t* parent = h.data() + B;
      std::fill(small, small + B, 0);
      rebelboost::tree::accumulate_gather(d.binned.column(f), rows.data(), q.data(), rows.size(), small);
      const std::int64_t* wplus = &l.root_hists[f * 2 * B * K];
      const std::int64_t* wminus = wplus + B * K;
      for (int b = 0; b < B; ++b) {
        std::int64_t s = 0;
        for (std::size_t k = 0; k < K; ++k) s += l.c[k] * (wminus[b * K + k] - wplus[b * K + k]);
        parent[b] = s - small[b];
      }
      benchmark::DoNotOptimize(h.data());
    }
  }
  counters(state, static_cast<double>(d.n * d.d), 1.0);
}

BENCHMARK(bm_layer1_direct)->Arg(10)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_layer1_from_root)->Arg(3)->Arg(10)->Unit(benchmark::kMillisecond);

BENCHMARK(bm_accumulate_vectors)->Arg(3)->Arg(10)->Unit(benchmark::kMillisecond);
BENCHMARK(bm_multiclass_root)->Arg(3)->Arg(10)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
