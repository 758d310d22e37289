// The cascade's floor on row-major input (issue 19, docs/cascades.md): full evaluation and the soft cascade
// of a saved model, timed side by side with plain touch loops that only read the 64-byte lines holding the
// features each row's learners read before it leaves. No implementation on this layout can beat its touch
// loop, so full time / touch time bounds the cascade's speed-up. bench/cascade_bound.py drives it.
//
//   bench_cascade_bound MODEL X_FILE N_ROWS N_COLS f32|f64 THREADS ROUNDS   -> one JSON object on stdout
//
// X_FILE holds N_ROWS x N_COLS values, row-major, native byte order; it is read into a 64-byte aligned
// buffer (rows keep the byte offsets they would have there). MODEL is a model file with a cascade.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "predict/engine.hpp"  // internal: the engine's copies, timed alone
#include "predict/flat_forest.hpp"
#include "predict/gather.hpp"
#include "rebelboost/io.hpp"
#include "rebelboost/predict.hpp"

namespace {

using rebelboost::MatrixView;
using rebelboost::Model;

constexpr std::size_t kLine = 64;

// Per row, a set of 64-byte lines as bits, counted from the line holding the row's first byte.
struct LineSets {
  std::size_t words = 1;            // uint64 words per row
  std::vector<std::uint64_t> bits;  // [row * words + w]
  void add(std::size_t r, std::size_t line) { bits[r * words + line / 64] |= std::uint64_t{1} << (line % 64); }
  std::size_t count(std::size_t r) const {
    std::size_t c = 0;
    for (std::size_t w = 0; w < words; ++w) c += static_cast<std::size_t>(__builtin_popcountll(bits[r * words + w]));
    return c;
  }
  // 128-byte pairs (the lines the adjacent-line prefetcher brings in together) holding a set line.
  std::size_t pairs(std::size_t r, std::uintptr_t first_line) const {
    std::size_t c = 0;
    std::uint64_t last = ~std::uint64_t{0};
    for (std::size_t l = 0; l < 64 * words; ++l)
      if ((bits[r * words + l / 64] >> (l % 64)) & 1u) {
        const std::uint64_t pair = (first_line + l) / 2;
        c += pair != last;
        last = pair;
      }
    return c;
  }
};

template <typename T>
struct Data {
  std::size_t n_rows = 0, n_cols = 0;
  T* values = nullptr;  // 64-byte aligned
  std::unique_ptr<T, decltype(&std::free)> owner{nullptr, &std::free};
  MatrixView<T> view() const { return MatrixView<T>::row_major(values, n_rows, n_cols); }
  const char* row(std::size_t r) const { return reinterpret_cast<const char*>(values + r * n_cols); }
  std::uintptr_t first_line(std::size_t r) const { return reinterpret_cast<std::uintptr_t>(row(r)) / kLine; }
  std::size_t line_of(std::size_t r, std::size_t feature) const {
    return (reinterpret_cast<std::uintptr_t>(row(r) + feature * sizeof(T))) / kLine - first_line(r);
  }
};

template <typename T>
Data<T> read_data(const char* path, std::size_t n_rows, std::size_t n_cols) {
  Data<T> d;
  d.n_rows = n_rows;
  d.n_cols = n_cols;
  const std::size_t bytes = (n_rows * n_cols * sizeof(T) + kLine - 1) / kLine * kLine + kLine;
  d.owner.reset(static_cast<T*>(std::aligned_alloc(kLine, bytes)));
  d.values = d.owner.get();
  std::FILE* f = std::fopen(path, "rb");
  if (!f || std::fread(d.values, sizeof(T), n_rows * n_cols, f) != n_rows * n_cols) {
    std::fprintf(stderr, "cannot read %zu x %zu values from %s\n", n_rows, n_cols, path);
    std::exit(2);
  }
  std::fclose(f);
  return d;
}

// The features of every split of every tree, and the features tree t's walk reads for row x.
std::vector<std::vector<std::int32_t>> split_features(const Model& m) {
  std::vector<std::vector<std::int32_t>> out(m.trees.size());
  for (std::size_t t = 0; t < m.trees.size(); ++t)
    for (const auto& node : m.trees[t].nodes)
      if (node.value == 0) out[t].push_back(node.feature);
  return out;
}

template <typename T>
void path_features(const rebelboost::Tree& tree, const T* x, std::vector<std::int32_t>& out) {
  std::size_t i = 0;
  while (tree.nodes[i].value == 0) {
    const auto& node = tree.nodes[i];
    out.push_back(node.feature);
    const double v = static_cast<double>(x[node.feature]);
    i = (v <= node.threshold || (v != v && node.nan_left)) ? node.left : node.right;
  }
}

// Lines of every row for the learners [0, used[r]): all their splits' features (what a vectorised kernel
// compares) or, with `paths`, only those on the row's own path through each tree.
template <typename T>
LineSets line_sets(const Data<T>& d, const Model& m, const std::vector<std::uint32_t>& used, bool paths) {
  LineSets s;
  s.words = (d.n_cols * sizeof(T) / kLine + 2 + 63) / 64;
  s.bits.assign(d.n_rows * s.words, 0);
  const auto splits = split_features(m);
  std::vector<std::int32_t> feats;
  for (std::size_t r = 0; r < d.n_rows; ++r) {
    feats.clear();
    const T* x = reinterpret_cast<const T*>(d.row(r));
    for (std::size_t t = 0; t < used[r]; ++t) {
      if (paths)
        path_features(m.trees[t], x, feats);
      else
        feats.insert(feats.end(), splits[t].begin(), splits[t].end());
    }
    for (std::int32_t f : feats) s.add(r, d.line_of(r, static_cast<std::size_t>(f)));
  }
  return s;
}

// Reads one 8-byte word of every set line of every row (rows split evenly over the threads); the sum is
// returned so the loads cannot be dropped.
template <typename T>
std::uint64_t touch(const Data<T>& d, const LineSets& s, int threads) {
  std::uint64_t sum = 0;
  const auto n = static_cast<std::ptrdiff_t>(d.n_rows);
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : sum)
  for (std::ptrdiff_t r = 0; r < n; ++r) {
    const auto* base = reinterpret_cast<const std::uint64_t*>(d.first_line(static_cast<std::size_t>(r)) * kLine);
    for (std::size_t w = 0; w < s.words; ++w)
      for (std::uint64_t m = s.bits[static_cast<std::size_t>(r) * s.words + w]; m; m &= m - 1)
        sum += base[(w * 64 + static_cast<std::size_t>(__builtin_ctzll(m))) * (kLine / 8)];
  }
  return sum;
}

// Full evaluation's column copies alone (no trees): every used slot of every row, groups of 16 consecutive
// rows, each group read in address order first and its copies scanned for NaN where the engine does so.
template <typename T>
std::uint64_t copy_only(const Data<T>& d, const Model& m, const rebelboost::predict::ForestArrays& f, int threads) {
  namespace rp = rebelboost::predict;
  const bool stream = rp::used_line_share(f.features, f.n_slots, d.n_cols, sizeof(T)) >= rp::kStreamLineShare &&
                      rp::kLanes * d.n_cols * sizeof(T) <= rp::kStreamBytes;
  std::size_t n_splits = 0;
  for (const auto& tree : m.trees) n_splits += tree.nodes.size() / 2;
  const bool scan = static_cast<double>(f.n_slots) <= rp::Engine::kScanSlotsPerSplit * static_cast<double>(n_splits);
  std::uint64_t sum = 0;
  const auto n_groups = static_cast<std::ptrdiff_t>((d.n_rows + rp::kLanes - 1) / rp::kLanes);
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  {
    std::vector<T> xt(std::max<std::size_t>(f.n_slots, 1) * rp::kLanes, T(0));
#pragma omp for schedule(static)
    for (std::ptrdiff_t g = 0; g < n_groups; ++g) {
      const std::size_t r0 = static_cast<std::size_t>(g) * rp::kLanes, lanes = std::min(rp::kLanes, d.n_rows - r0);
      if (stream) rp::stream_rows(d.view(), r0, r0 + lanes);
      sum += rp::gather_group(d.view(), r0, lanes, f, xt.data(), scan);
      sum += static_cast<std::uint64_t>(xt[static_cast<std::size_t>(g) % xt.size()] > T(0));
    }
  }
  return sum;
}

struct Timing {
  std::vector<double> wall, cpu;  // ms per call
};

double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e3 * static_cast<double>(ts.tv_sec) + 1e-6 * static_cast<double>(ts.tv_nsec);
}

// Every call once as a warm-up, then `rounds` rounds in an order rotating each round.
std::map<std::string, Timing> interleaved(const std::vector<std::pair<std::string, std::function<void()>>>& calls,
                                          int rounds) {
  std::map<std::string, Timing> out;
  for (const auto& c : calls) c.second();
  for (int i = 0; i < rounds; ++i)
    for (std::size_t k = 0; k < calls.size(); ++k) {
      const auto& c = calls[(k + static_cast<std::size_t>(i)) % calls.size()];
      const double cpu0 = cpu_now();
      const auto t0 = std::chrono::steady_clock::now();
      c.second();
      const auto t1 = std::chrono::steady_clock::now();
      out[c.first].wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      out[c.first].cpu.push_back(cpu_now() - cpu0);
    }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

template <typename T>
double mean_count(const Data<T>& d, const LineSets& s, bool pairs) {
  double total = 0.0;
  for (std::size_t r = 0; r < d.n_rows; ++r) total += static_cast<double>(pairs ? s.pairs(r, d.first_line(r)) : s.count(r));
  return total / static_cast<double>(std::max<std::size_t>(d.n_rows, 1));
}

template <typename T>
int run(const char* model_path, const char* x_path, std::size_t n_rows, std::size_t n_cols, int threads, int rounds) {
  const Model model = rebelboost::load_model(model_path);
  if (model.cascade.every == 0 || model.learner != rebelboost::LearnerKind::kTree) {
    std::fprintf(stderr, "the model needs a cascade and trees\n");
    return 2;
  }
  const rebelboost::Predictor predictor(model);
  const rebelboost::predict::FlatForest forest(model);
  const Data<T> d = read_data<T>(x_path, n_rows, n_cols);
  const std::size_t n_learn = model.n_learners();
  std::vector<std::int32_t> classes(n_rows);
  std::vector<std::uint32_t> used(n_rows), all(n_rows, static_cast<std::uint32_t>(n_learn));
  rebelboost::PredictOptions full, cascade;
  full.n_threads = cascade.n_threads = threads;
  cascade.cascade = true;
  predictor.predict(d.view(), classes.data(), cascade, used.data());
  double mean_used = 0.0;
  for (std::uint32_t u : used) mean_used += u;
  mean_used /= static_cast<double>(n_rows);

  std::map<std::string, LineSets> sets;
  sets["touch cascade (splits)"] = line_sets(d, model, used, false);
  sets["touch cascade (paths)"] = line_sets(d, model, used, true);
  sets["touch full (splits)"] = line_sets(d, model, all, false);
  sets["touch full (paths)"] = line_sets(d, model, all, true);
  LineSets every_line = sets["touch full (splits)"];
  for (std::size_t r = 0; r < n_rows; ++r)
    for (std::size_t l = 0; l <= d.line_of(r, n_cols - 1); ++l) every_line.add(r, l);
  sets["touch every line"] = every_line;

  // The same calls on a block of about 1 MiB of rows (at least two 256-row chunks: one per thread) that stays
  // in the threads' caches, repeated to n_rows rows: what is left when memory costs next to nothing.
  const std::size_t fit = (std::size_t{1} << 20) / (n_cols * sizeof(T)) / 512 * 512;
  const std::size_t small = std::min(n_rows, std::max<std::size_t>(512, fit));
  const std::size_t repeats = (n_rows + small - 1) / small;
  const MatrixView<T> block = MatrixView<T>::row_major(d.values, small, n_cols);
  std::vector<std::pair<std::string, std::function<void()>>> calls;
  std::uint64_t sink = 0;
  calls.emplace_back("full", [&] { predictor.predict(d.view(), classes.data(), full); });
  calls.emplace_back("cascade", [&] { predictor.predict(d.view(), classes.data(), cascade); });
  calls.emplace_back("full in cache", [&] {
    for (std::size_t i = 0; i < repeats; ++i) predictor.predict(block, classes.data(), full);
  });
  calls.emplace_back("cascade in cache", [&] {
    for (std::size_t i = 0; i < repeats; ++i) predictor.predict(block, classes.data(), cascade);
  });
  calls.emplace_back("full copy only", [&] { sink += copy_only(d, model, forest.arrays(), threads); });
  for (const auto& s : sets) calls.emplace_back(s.first, [&, name = s.first] { sink += touch(d, sets.at(name), threads); });
  const auto times = interleaved(calls, rounds);
  const double scale = static_cast<double>(n_rows) / static_cast<double>(small * repeats);

  std::printf("{\"n_rows\": %zu, \"n_cols\": %zu, \"row_bytes\": %zu, \"threads\": %d, \"rounds\": %d, "
              "\"n_learners\": %zu, \"mean_learners\": %.3f, \"cache_block_rows\": %zu, \"sink\": %llu,\n",
              n_rows, n_cols, n_cols * sizeof(T), threads, rounds, n_learn, mean_used, small,
              static_cast<unsigned long long>(sink % 1000));
  std::printf(" \"lines_per_row\": {");
  const char* sep = "";
  for (const auto& s : sets) {
    std::printf("%s\"%s\": [%.2f, %.2f]", sep, s.first.c_str(), mean_count(d, s.second, false), mean_count(d, s.second, true));
    sep = ", ";
  }
  std::printf("},\n \"ms\": {");
  sep = "";
  for (const auto& [name, t] : times) {
    const double k = name.find("in cache") != std::string::npos ? scale : 1.0;
    std::printf("%s\"%s\": {\"best\": %.3f, \"median\": %.3f, \"cpu_median\": %.3f}", sep, name.c_str(),
                k * *std::min_element(t.wall.begin(), t.wall.end()), k * median(t.wall), k * median(t.cpu));
    sep = ", ";
  }
  std::printf("}}\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s MODEL X_FILE N_ROWS N_COLS f32|f64 THREADS ROUNDS\n", argv[0]);
    return 2;
  }
  const std::size_t n_rows = std::strtoull(argv[3], nullptr, 10), n_cols = std::strtoull(argv[4], nullptr, 10);
  const int threads = std::atoi(argv[6]), rounds = std::atoi(argv[7]);
  if (n_rows == 0 || n_cols == 0 || threads < 1 || rounds < 1) {
    std::fprintf(stderr, "N_ROWS, N_COLS, THREADS and ROUNDS must be positive\n");
    return 2;
  }
  const std::string type = argv[5];
  if (type == "f32") return run<float>(argv[1], argv[2], n_rows, n_cols, threads, rounds);
  if (type == "f64") return run<double>(argv[1], argv[2], n_rows, n_cols, threads, rounds);
  std::fprintf(stderr, "the value type must be f32 or f64\n");
  return 2;
}
