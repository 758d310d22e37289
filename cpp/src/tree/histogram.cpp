// Interleaved fixed-point histogram kernels.
#include "tree/histogram.hpp"

#include <cstring>

namespace rebelboost::tree {

namespace {

// Each copy is kHistBins + kPad slots long so that bin b of copies k and k + 2 is not exactly 4096 bytes
// apart: with equal consecutive codes (common in image columns) such 4K aliasing stalls a load behind
// the store to the other copy (measured in bench/bench_histogram.cpp: 0.42 -> 0.37 ns per element).
constexpr int kPad = 8;

// Adds the 4 copies into hist.
inline void fold(std::int64_t (&h)[4][kHistBins + kPad], std::int64_t* hist) {
  for (int b = 0; b < kHistBins; ++b) hist[b] += (h[0][b] + h[1][b]) + (h[2][b] + h[3][b]);
}

}  // namespace

// Below this many rows, zeroing and folding the 4 copies (8 KiB) costs more than the chains they break.
constexpr std::size_t kSmall = 256;

void accumulate(const std::uint8_t* codes, const std::int64_t* values, std::size_t n, std::int64_t* hist) {
  if (n < kSmall) {
    for (std::size_t i = 0; i < n; ++i) hist[codes[i]] += values[i];
    return;
  }
  alignas(64) std::int64_t h[4][kHistBins + kPad];
  std::memset(h, 0, sizeof(h));
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    h[0][codes[i]] += values[i];
    h[1][codes[i + 1]] += values[i + 1];
    h[2][codes[i + 2]] += values[i + 2];
    h[3][codes[i + 3]] += values[i + 3];
  }
  for (; i < n; ++i) h[0][codes[i]] += values[i];
  fold(h, hist);
}

void accumulate_gather(const std::uint8_t* column, const std::uint32_t* rows, const std::int64_t* values,
                       std::size_t n, std::int64_t* hist) {
  if (n < kSmall) {
    for (std::size_t i = 0; i < n; ++i) hist[column[rows[i]]] += values[i];
    return;
  }
  alignas(64) std::int64_t h[4][kHistBins + kPad];
  std::memset(h, 0, sizeof(h));
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    h[0][column[rows[i]]] += values[i];
    h[1][column[rows[i + 1]]] += values[i + 1];
    h[2][column[rows[i + 2]]] += values[i + 2];
    h[3][column[rows[i + 3]]] += values[i + 3];
  }
  for (; i < n; ++i) h[0][column[rows[i]]] += values[i];
  fold(h, hist);
}

namespace {

template <std::size_t K>
inline void add_rows(const std::uint8_t* column, const std::int64_t* v, std::size_t begin, std::size_t end,
                     std::int64_t* h0, std::int64_t* h1) {
  std::size_t i = begin;
  for (; i + 2 <= end; i += 2) {
    std::int64_t* a = h0 + static_cast<std::size_t>(column[i]) * K;
    std::int64_t* b = h1 + static_cast<std::size_t>(column[i + 1]) * K;
    const std::int64_t* va = v + i * K;
    for (std::size_t k = 0; k < K; ++k) a[k] += va[k];
    for (std::size_t k = 0; k < K; ++k) b[k] += va[K + k];
  }
  if (i < end) {
    std::int64_t* a = h0 + static_cast<std::size_t>(column[i]) * K;
    for (std::size_t k = 0; k < K; ++k) a[k] += v[i * K + k];
  }
}

void add_rows_any(const std::uint8_t* column, const std::int64_t* v, std::size_t begin, std::size_t end,
                  std::size_t K, std::int64_t* h0, std::int64_t* h1) {
  for (std::size_t i = begin; i < end; ++i) {
    std::int64_t* a = ((i - begin) % 2 == 0 ? h0 : h1) + static_cast<std::size_t>(column[i]) * K;
    for (std::size_t k = 0; k < K; ++k) a[k] += v[i * K + k];
  }
}

}  // namespace

__attribute__((target_clones("avx2", "default")))
void accumulate_vectors(const std::uint8_t* column, const std::int64_t* v, std::size_t begin, std::size_t end,
                        std::size_t K, std::int64_t* h0, std::int64_t* h1) {
  switch (K) {
    case 2: return add_rows<2>(column, v, begin, end, h0, h1);
    case 3: return add_rows<3>(column, v, begin, end, h0, h1);
    case 4: return add_rows<4>(column, v, begin, end, h0, h1);
    case 5: return add_rows<5>(column, v, begin, end, h0, h1);
    case 6: return add_rows<6>(column, v, begin, end, h0, h1);
    case 7: return add_rows<7>(column, v, begin, end, h0, h1);
    case 8: return add_rows<8>(column, v, begin, end, h0, h1);
    case 9: return add_rows<9>(column, v, begin, end, h0, h1);
    case 10: return add_rows<10>(column, v, begin, end, h0, h1);
    case 11: return add_rows<11>(column, v, begin, end, h0, h1);
    case 12: return add_rows<12>(column, v, begin, end, h0, h1);
    case 16: return add_rows<16>(column, v, begin, end, h0, h1);
    default: return add_rows_any(column, v, begin, end, K, h0, h1);
  }
}

}  // namespace rebelboost::tree
