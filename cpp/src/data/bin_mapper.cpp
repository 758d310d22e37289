// Quantile bin edges and the transform from raw values to uint8 codes.
#include "data/bin_mapper.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "rebelboost/error.hpp"
#include "util/parallel.hpp"

namespace rebelboost::data {

namespace {

// A split point strictly between a < b that keeps a on the left: the midpoint, unless rounding pushed it
// onto b (adjacent doubles), in which case a itself.
double midpoint(double a, double b) {
  const double m = a + (b - a) * 0.5;
  return (m < b && m >= a) ? m : a;
}

// LSD radix sort of finite doubles through order-preserving uint64 keys, 8 bits per pass; passes in which
// every key has the same byte are skipped (typical for pixel or integer data). About 10x faster than
// std::sort for the column sizes binning sees, and the result is the same sorted sequence.
void radix_sort(std::vector<double>& values) {
  const std::size_t n = values.size();
  if (n < 64) {
    std::sort(values.begin(), values.end());
    return;
  }
  std::vector<std::uint64_t> keys(n), tmp(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    keys[i] = (bits >> 63) ? ~bits : (bits | (1ull << 63));
  }
  std::size_t counts[8][256] = {};
  for (const std::uint64_t k : keys)
    for (int pass = 0; pass < 8; ++pass) ++counts[pass][(k >> (8 * pass)) & 0xFF];
  for (int pass = 0; pass < 8; ++pass) {
    std::size_t* c = counts[pass];
    if (c[(keys[0] >> (8 * pass)) & 0xFF] == n) continue;  // all keys share this byte
    std::size_t offset = 0;
    for (int b = 0; b < 256; ++b) {
      const std::size_t count = c[b];
      c[b] = offset;
      offset += count;
    }
    for (const std::uint64_t k : keys) tmp[c[(k >> (8 * pass)) & 0xFF]++] = k;
    keys.swap(tmp);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t k = keys[i];
    const std::uint64_t bits = (k >> 63) ? (k & ~(1ull << 63)) : ~k;
    std::memcpy(&values[i], &bits, sizeof(bits));
  }
}

[[noreturn]] void throw_inf(std::size_t row, std::size_t col) {
  throw InvalidArgument("X contains an infinite value (row " + std::to_string(row) + ", column " +
                        std::to_string(col) + "); use NaN for missing values");
}

}  // namespace

std::vector<double> find_bin_edges(std::vector<double>& values, int max_value_bins) {
  std::vector<double> edges;
  if (values.empty()) return edges;
  radix_sort(values);
  // Distinct values, counted without allocating when there are many.
  std::size_t n_distinct = 1;
  for (std::size_t i = 1; i < values.size(); ++i) n_distinct += values[i] != values[i - 1];
  if (n_distinct <= static_cast<std::size_t>(max_value_bins)) {
    edges.reserve(n_distinct - 1);
    for (std::size_t i = 1; i < values.size(); ++i)
      if (values[i] != values[i - 1]) edges.push_back(midpoint(values[i - 1], values[i]));
    return edges;
  }
  // More distinct values than bins: group consecutive distinct values into bins of about equal count.
  // The target is recomputed each time a bin closes (the mass not yet binned over the bins left), so a
  // value heavier than the target (e.g. the zeros of a sparse pixel) gets a bin of its own without
  // wasting the bins that plain quantiles would collapse onto it; once every remaining distinct value
  // can have its own bin, each does. Every bin holds at least one distinct value, so at most
  // `max_value_bins` bins are made.
  std::vector<double> distinct;
  std::vector<std::size_t> count;
  distinct.reserve(n_distinct);
  count.reserve(n_distinct);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i == 0 || values[i] != values[i - 1]) {
      distinct.push_back(values[i]);
      count.push_back(0);
    }
    ++count.back();
  }
  edges.reserve(static_cast<std::size_t>(max_value_bins) - 1);
  std::size_t bins_left = static_cast<std::size_t>(max_value_bins);
  std::size_t unbinned = values.size();  // values not in a closed bin, the open bin's included
  std::size_t in_bin = 0;
  for (std::size_t i = 0; i + 1 < n_distinct && bins_left > 1; ++i) {
    in_bin += count[i];
    const std::size_t distinct_after = n_distinct - 1 - i;
    // Close the bin after value i when it reached its share, when the next value alone reaches it, or
    // when the values after i can each have a bin of their own.
    const bool full = in_bin * bins_left >= unbinned;
    const bool next_heavy = count[i + 1] * bins_left >= unbinned;
    if (full || next_heavy || distinct_after <= bins_left - 1) {
      edges.push_back(midpoint(distinct[i], distinct[i + 1]));
      unbinned -= in_bin;
      in_bin = 0;
      --bins_left;
    }
  }
  return edges;
}

std::vector<std::size_t> subsample_rows(std::size_t n_rows, std::size_t subsample, std::int64_t seed) {
  std::vector<std::size_t> rows;
  const std::size_t n_used = std::min(n_rows, subsample);
  rows.reserve(n_used);
  if (n_used == n_rows || seed < 0) {
    for (std::size_t i = 0; i < n_used; ++i) rows.push_back(n_used == n_rows ? i : (i * n_rows) / n_used);
    return rows;
  }
  std::uint64_t state = static_cast<std::uint64_t>(seed);
  auto next_unit = [&state]() {  // splitmix64 -> uniform double in [0, 1)
    state += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
  };
  for (std::size_t row = 0; row < n_rows && rows.size() < n_used; ++row) {
    const double needed = static_cast<double>(n_used - rows.size());
    const double left = static_cast<double>(n_rows - row);
    if (next_unit() * left < needed) rows.push_back(row);
  }
  return rows;
}

BinMapper::BinMapper(int n_bins, std::size_t subsample, std::int64_t seed)
    : n_bins_(n_bins), subsample_(subsample), seed_(seed) {
  if (n_bins < 3 || n_bins > 256)
    throw InvalidArgument("n_bins must be in [3, 256], got " + std::to_string(n_bins));
  if (subsample_ == 0) throw InvalidArgument("bin_subsample must be positive");
}

template <typename T>
void BinMapper::fit(MatrixView<T> X, int n_threads, const double* sample_weight) {
  std::vector<std::size_t> rows = subsample_rows(X.n_rows, subsample_, seed_);
  if (sample_weight) {  // (transform still rejects +-inf on zero-weight rows)
    rows.erase(std::remove_if(rows.begin(), rows.end(), [&](std::size_t r) { return !(sample_weight[r] > 0.0); }),
               rows.end());
  }
  edges_.assign(X.n_cols, {});
  // A radix sort of the rows per column: a few steps per value.
  const int threads = util::threads_for(8 * rows.size() * X.n_cols, n_threads);
  util::parallel_for(static_cast<std::ptrdiff_t>(X.n_cols), threads, [&](std::ptrdiff_t c) {
    const std::size_t col = static_cast<std::size_t>(c);
    std::vector<double> values;
    values.reserve(rows.size());
    for (const std::size_t row : rows) {
      const double v = static_cast<double>(X(row, col));
      if (std::isnan(v)) continue;
      if (std::isinf(v)) throw_inf(row, col);
      values.push_back(v);
    }
    edges_[col] = find_bin_edges(values, n_bins_ - 1);
  }, /*dynamic=*/true);
}

void BinMapper::set_edges(const std::vector<std::vector<double>>& edges, std::size_t n_features) {
  if (edges.size() != n_features)
    throw InvalidArgument("bin edges for " + std::to_string(edges.size()) + " features; X has " + std::to_string(n_features));
  for (std::size_t f = 0; f < edges.size(); ++f) {
    const std::vector<double>& e = edges[f];
    if (e.size() + 1 > static_cast<std::size_t>(n_bins_ - 1))
      throw InvalidArgument("feature " + std::to_string(f) + " has " + std::to_string(e.size()) + " bin edges; n_bins=" +
                            std::to_string(n_bins_) + " allows at most " + std::to_string(n_bins_ - 2));
    for (std::size_t b = 0; b < e.size(); ++b)
      if (!std::isfinite(e[b]) || (b > 0 && !(e[b - 1] < e[b])))
        throw InvalidArgument("the bin edges of feature " + std::to_string(f) + " are not finite and increasing");
  }
  edges_ = edges;
}

template <typename T>
BinnedMatrix BinMapper::transform(MatrixView<T> X, int n_threads, const std::size_t* rows) const {
  if (X.n_cols != edges_.size())
    throw InvalidArgument("X has " + std::to_string(X.n_cols) + " features, but the bin mapper was fitted with " +
                          std::to_string(edges_.size()));
  BinnedMatrix out;
  out.n_samples = X.n_rows;
  out.n_features = X.n_cols;
  out.codes.resize(X.n_rows * X.n_cols);
  const std::uint8_t missing = missing_bin();
  // Per feature, the edges padded with +inf to 2^k - 1 entries: lower_bound then takes exactly k
  // branch-free steps, and 8 rows are searched side by side so their dependent loads overlap.
  std::vector<std::vector<double>> padded(X.n_cols);
  std::vector<std::size_t> top_step(X.n_cols);
  for (std::size_t col = 0; col < X.n_cols; ++col) {
    std::size_t size = 1;
    while (size - 1 < edges_[col].size()) size *= 2;
    padded[col] = edges_[col];
    padded[col].resize(size - 1, std::numeric_limits<double>::infinity());
    top_step[col] = size / 2;
  }
  // Blocks of rows x all features: a row-major X is then read a few cache lines at a time instead of one
  // strided column at a time; each block writes its own rows of every code column.
  constexpr std::size_t kRows = 256;
  constexpr std::size_t kLanes = 8;
  const auto n_blocks = static_cast<std::ptrdiff_t>((X.n_rows + kRows - 1) / kRows);
  // About 8 branch-free search steps per value.
  util::parallel_for(n_blocks, util::threads_for(8 * X.n_rows * X.n_cols, n_threads), [&](std::ptrdiff_t b) {
    const std::size_t begin = static_cast<std::size_t>(b) * kRows;
    const std::size_t end = std::min(X.n_rows, begin + kRows);
    for (std::size_t col = 0; col < X.n_cols; ++col) {
      const double* e = padded[col].data();
      const std::size_t first_step = top_step[col];
      std::uint8_t* dst = out.column(col);
      for (std::size_t row = begin; row < end; row += kLanes) {
        const std::size_t lanes = std::min(kLanes, end - row);
        double v[kLanes];
        std::size_t lo[kLanes];
        for (std::size_t j = 0; j < kLanes; ++j) {
          v[j] = j < lanes ? static_cast<double>(X(rows ? rows[row + j] : row + j, col)) : 0.0;
          lo[j] = 0;
        }
        for (std::size_t step = first_step; step > 0; step /= 2)
          for (std::size_t j = 0; j < kLanes; ++j) lo[j] += e[lo[j] + step - 1] < v[j] ? step : 0;
        for (std::size_t j = 0; j < lanes; ++j) {
          if (std::isnan(v[j])) {
            dst[row + j] = missing;
          } else {
            if (std::isinf(v[j])) throw_inf(rows ? rows[row + j] : row + j, col);
            dst[row + j] = static_cast<std::uint8_t>(lo[j]);
          }
        }
      }
    }
  });
  return out;
}

double BinMapper::threshold(std::size_t feature, int bin) const {
  const std::vector<double>& e = edges_[feature];
  if (bin >= 0 && static_cast<std::size_t>(bin) < e.size()) return e[static_cast<std::size_t>(bin)];
  return std::numeric_limits<double>::infinity();
}

template void BinMapper::fit<float>(MatrixView<float>, int, const double*);
template void BinMapper::fit<double>(MatrixView<double>, int, const double*);
template BinnedMatrix BinMapper::transform<float>(MatrixView<float>, int, const std::size_t*) const;
template BinnedMatrix BinMapper::transform<double>(MatrixView<double>, int, const std::size_t*) const;

}  // namespace rebelboost::data
