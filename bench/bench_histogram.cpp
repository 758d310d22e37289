// Histogram accumulation speed (ns per sample x feature): the core kernels against local candidate variants.
//
// Every benchmark builds one 256-bin histogram per feature over the first `rows` rows (all rows: layer 0
// of the grower) or over a random half of the rows through a row list (accumulate_gather). ns_per_elem is
// an inverted rate: the console prints it with a unit suffix "s", but the number is ns (JSON: plain ns).
// The local variants have the signature of tree::accumulate and are checked against the naive loop before
// any timing, so a variant that wins here can be moved into cpp/src/tree/histogram.cpp as is.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fashion_mnist.hpp"
#include "tree/histogram.hpp"

namespace {

using rebelboost::tree::kHistBins;
using Kernel = void (*)(const std::uint8_t*, const std::int64_t*, std::size_t, std::int64_t*);

// ---- local candidate kernels -------------------------------------------------------------------------

// The 1-copy baseline: every add waits for the previous store when consecutive codes are equal.
void accumulate_naive(const std::uint8_t* codes, const std::int64_t* values, std::size_t n, std::int64_t* hist) {
  for (std::size_t i = 0; i < n; ++i) hist[codes[i]] += values[i];
}

// kCopies interleaved histograms: sample i goes to copy i % kCopies, copies are summed at the end.
// kPad extra slots per copy shift copy k by k * kPad * 8 bytes modulo 4 KiB: without it, copies 2 KiB
// apart put bin b of copies 0 and 2 at the same address modulo 4096, and a load from one waits for a
// store to the other ("4K aliasing") exactly when consecutive codes are equal. (Checked: kPad = 256, which
// puts all 4 copies 4 KiB apart, slows F-MNIST columns from 0.42 to 0.55 ns but leaves uniform codes alone.)
template <int kCopies, int kPad = 0>
void accumulate_copies(const std::uint8_t* codes, const std::int64_t* values, std::size_t n, std::int64_t* hist) {
  alignas(64) std::int64_t h[kCopies][kHistBins + kPad];
  std::memset(h, 0, sizeof(h));
  std::size_t i = 0;
  for (; i + kCopies <= n; i += kCopies)
    for (int k = 0; k < kCopies; ++k) h[k][codes[i + k]] += values[i + k];
  for (; i < n; ++i) h[0][codes[i]] += values[i];
  for (int b = 0; b < kHistBins; ++b)
    for (int k = 0; k < kCopies; ++k) hist[b] += h[k][b];
}

// Like accumulate_copies, but reads 8 codes with one 64-bit load and takes them apart with shifts
// (kCopies / 8 loads per step when kCopies > 8).
template <int kCopies, int kPad = 0>
void accumulate_load64(const std::uint8_t* codes, const std::int64_t* values, std::size_t n, std::int64_t* hist) {
  static_assert(8 % kCopies == 0 || kCopies % 8 == 0, "8 codes per load must split evenly over the copies");
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "byte k of the load must be codes[i + k]");
  constexpr int kStep = kCopies > 8 ? kCopies : 8;
  alignas(64) std::int64_t h[kCopies][kHistBins + kPad];
  std::memset(h, 0, sizeof(h));
  std::size_t i = 0;
  for (; i + kStep <= n; i += kStep)
    for (int j = 0; j < kStep; j += 8) {
      std::uint64_t c;
      std::memcpy(&c, codes + i + j, 8);  // little-endian: byte k is codes[i + j + k]
      for (int k = 0; k < 8; ++k) h[(j + k) % kCopies][(c >> (8 * k)) & 0xff] += values[i + j + k];
    }
  for (; i < n; ++i) h[0][codes[i]] += values[i];
  for (int b = 0; b < kHistBins; ++b)
    for (int k = 0; k < kCopies; ++k) hist[b] += h[k][b];
}

// Gather counterparts (codes read through a sorted row list, values already in list order).
void gather_naive(const std::uint8_t* column, const std::uint32_t* rows, const std::int64_t* values,
                  std::size_t n, std::int64_t* hist) {
  for (std::size_t i = 0; i < n; ++i) hist[column[rows[i]]] += values[i];
}

template <int kCopies, int kPad = 0>
void gather_copies(const std::uint8_t* column, const std::uint32_t* rows, const std::int64_t* values,
                   std::size_t n, std::int64_t* hist) {
  alignas(64) std::int64_t h[kCopies][kHistBins + kPad];
  std::memset(h, 0, sizeof(h));
  std::size_t i = 0;
  for (; i + kCopies <= n; i += kCopies)
    for (int k = 0; k < kCopies; ++k) h[k][column[rows[i + k]]] += values[i + k];
  for (; i < n; ++i) h[0][column[rows[i]]] += values[i];
  for (int b = 0; b < kHistBins; ++b)
    for (int k = 0; k < kCopies; ++k) hist[b] += h[k][b];
}

using GatherKernel = void (*)(const std::uint8_t*, const std::uint32_t*, const std::int64_t*, std::size_t,
                              std::int64_t*);

// ---- data ---------------------------------------------------------------------------------------------

// Column-major bin codes (as in data::BinnedMatrix) with one signed fixed-point value per sample.
struct Columns {
  std::string name;
  std::size_t n_samples = 0;
  std::size_t n_features = 0;
  std::vector<std::uint8_t> codes;
  std::vector<std::int64_t> values;
  std::vector<std::uint32_t> node_rows;      // a random half of the rows, ascending (a child node)
  std::vector<std::int64_t> node_values;     // values[node_rows[i]]
};

// Random positive weights normalised to sum 1, times 2^52, signed by a random label.
std::vector<std::int64_t> fixed_point_values(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> weight(0.1, 1.0);
  std::bernoulli_distribution positive(0.5);
  std::vector<double> w(n);
  double total = 0.0;
  for (double& v : w) total += (v = weight(rng));
  std::vector<std::int64_t> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = (positive(rng) ? 1 : -1) * std::llround(w[i] / total * rebelboost::tree::kFixedPointScale);
  return out;
}

Columns make_columns(std::string name, std::size_t n_samples, std::size_t n_features,
                     std::vector<std::uint8_t> codes) {
  std::mt19937_64 rng(42);
  Columns d{std::move(name), n_samples, n_features, std::move(codes), fixed_point_values(n_samples, rng), {}, {}};
  std::bernoulli_distribution keep(0.5);
  for (std::uint32_t r = 0; r < n_samples; ++r)
    if (keep(rng)) {
      d.node_rows.push_back(r);
      d.node_values.push_back(d.values[r]);
    }
  return d;
}

Columns pixel_columns() {
  const rebelboost::bench::PixelData& p = rebelboost::bench::tshirt_vs_shirt();
  std::vector<std::uint8_t> codes(p.pixels.size());  // transpose: pixel value is the bin code
  for (std::size_t i = 0; i < p.n_samples; ++i)
    for (std::size_t f = 0; f < p.n_features; ++f) codes[f * p.n_samples + i] = p.pixels[i * p.n_features + f];
  return make_columns(p.real ? "fmnist" : "synthetic_runs", p.n_samples, p.n_features, std::move(codes));
}

Columns uniform_columns(std::size_t n_samples, std::size_t n_features) {
  std::mt19937_64 rng(1);
  std::vector<std::uint8_t> codes(n_samples * n_features);
  for (auto& c : codes) c = static_cast<std::uint8_t>(rng() & 0xff);
  return make_columns("uniform", n_samples, n_features, std::move(codes));
}

// ---- benchmarks ---------------------------------------------------------------------------------------

void set_counters(benchmark::State& state, std::size_t elements) {
  const double e = static_cast<double>(elements);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(elements));
  // Inverted rate of e * 1e-9 units per iteration = seconds / (e * 1e-9) = ns per sample x feature.
  state.counters["ns_per_elem"] =
      benchmark::Counter(e * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Argument: rows per histogram (the first rows of every column; a small node shows the fixed cost of
// zeroing and folding the copies).
void bm_contiguous(benchmark::State& state, Kernel kernel, const Columns* d) {
  alignas(64) std::int64_t hist[kHistBins];
  const auto n = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    for (std::size_t f = 0; f < d->n_features; ++f) {
      std::fill(hist, hist + kHistBins, 0);
      kernel(d->codes.data() + f * d->n_samples, d->values.data(), n, hist);
      benchmark::DoNotOptimize(hist);
    }
    benchmark::ClobberMemory();
  }
  set_counters(state, n * d->n_features);
}

void bm_gather(benchmark::State& state, GatherKernel kernel, const Columns* d) {
  alignas(64) std::int64_t hist[kHistBins];
  const std::size_t n = d->node_rows.size();
  for (auto _ : state) {
    for (std::size_t f = 0; f < d->n_features; ++f) {
      std::fill(hist, hist + kHistBins, 0);
      kernel(d->codes.data() + f * d->n_samples, d->node_rows.data(), d->node_values.data(), n, hist);
      benchmark::DoNotOptimize(hist);
    }
    benchmark::ClobberMemory();
  }
  set_counters(state, n * d->n_features);
}

// Every variant must reproduce the naive histogram exactly on every column (integer sums are exact),
// also for a length that leaves a tail after the unrolled loop.
bool check(const Columns& d, Kernel kernel) {
  std::int64_t want[kHistBins], got[kHistBins];
  for (std::size_t n : {d.n_samples, d.n_samples - 13})
    for (std::size_t f = 0; f < d.n_features; ++f) {
      const std::uint8_t* column = d.codes.data() + f * d.n_samples;
      std::fill(want, want + kHistBins, 0);
      std::fill(got, got + kHistBins, 0);
      accumulate_naive(column, d.values.data(), n, want);
      kernel(column, d.values.data(), n, got);
      if (!std::equal(want, want + kHistBins, got)) return false;
    }
  return true;
}

bool check_gather(const Columns& d, GatherKernel kernel) {
  std::int64_t want[kHistBins], got[kHistBins];
  const std::size_t n = d.node_rows.size();
  for (std::size_t f = 0; f < d.n_features; ++f) {
    const std::uint8_t* column = d.codes.data() + f * d.n_samples;
    std::fill(want, want + kHistBins, 0);
    std::fill(got, got + kHistBins, 0);
    gather_naive(column, d.node_rows.data(), d.node_values.data(), n, want);
    kernel(column, d.node_rows.data(), d.node_values.data(), n, got);
    if (!std::equal(want, want + kHistBins, got)) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  static const Columns pixels = pixel_columns();
  static const Columns uniform = uniform_columns(pixels.n_samples, pixels.n_features);
  benchmark::AddCustomContext("histogram_data", pixels.name + " " + std::to_string(pixels.n_samples) + " x " +
                                                    std::to_string(pixels.n_features));

  const std::pair<const char*, Kernel> kernels[] = {
      {"core_accumulate", &rebelboost::tree::accumulate},
      {"naive_1copy", &accumulate_naive},
      {"copies2", &accumulate_copies<2>},
      {"copies4", &accumulate_copies<4>},
      {"copies8", &accumulate_copies<8>},
      {"copies16", &accumulate_copies<16>},
      {"load64_copies4", &accumulate_load64<4>},
      {"load64_copies8", &accumulate_load64<8>},
      {"copies4_pad8", &accumulate_copies<4, 8>},
      {"copies8_pad8", &accumulate_copies<8, 8>},
      {"copies16_pad8", &accumulate_copies<16, 8>},
      {"load64_copies4_pad8", &accumulate_load64<4, 8>},
      {"load64_copies8_pad8", &accumulate_load64<8, 8>},
      {"load64_copies16_pad8", &accumulate_load64<16, 8>},
  };
  const std::pair<const char*, GatherKernel> gathers[] = {
      {"core_accumulate_gather", &rebelboost::tree::accumulate_gather},
      {"gather_naive_1copy", &gather_naive},
      {"gather_copies8", &gather_copies<8>},
      {"gather_copies4_pad8", &gather_copies<4, 8>},
      {"gather_copies8_pad8", &gather_copies<8, 8>},
  };
  for (const Columns* d : {&pixels, &uniform}) {
    for (const auto& [name, kernel] : kernels) {
      if (!check(*d, kernel)) {
        std::fprintf(stderr, "kernel %s gives a wrong histogram on %s\n", name, d->name.c_str());
        return 1;
      }
      auto* b = benchmark::RegisterBenchmark((std::string("hist/") + name + "/" + d->name).c_str(), bm_contiguous,
                                             kernel, d);
      b->ArgName("rows")->Arg(static_cast<std::int64_t>(d->n_samples))->Unit(benchmark::kMillisecond);
      const std::string short_name = name;
      if (d == &pixels && (short_name == "core_accumulate" || short_name == "naive_1copy" ||
                           short_name == "copies4_pad8" || short_name == "load64_copies8_pad8"))
        b->Arg(256)->Arg(2048);
    }
    for (const auto& [name, kernel] : gathers) {
      if (!check_gather(*d, kernel)) {
        std::fprintf(stderr, "kernel %s gives a wrong histogram on %s\n", name, d->name.c_str());
        return 1;
      }
      benchmark::RegisterBenchmark((std::string("hist/") + name + "/half_rows_" + d->name).c_str(), bm_gather,
                                   kernel, d)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
