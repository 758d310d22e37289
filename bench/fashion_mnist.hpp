// Benchmark data: Fashion-MNIST T-shirt (label 0) vs Shirt (label 6) if installed, else synthetic look-alikes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#ifdef REBELBOOST_BENCH_HAVE_ZLIB
#include <zlib.h>
#endif

namespace rebelboost::bench {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist/";

// n_samples x n_features uint8 pixels, row-major, and labels 1 (Shirt) / 0 (T-shirt).
struct PixelData {
  std::size_t n_samples = 0;
  std::size_t n_features = 0;
  std::vector<std::uint8_t> pixels;
  std::vector<std::int32_t> labels;
  bool real = false;  // true when loaded from the Fashion-MNIST files
};

// Whole content of a .gz file (empty on any failure).
inline std::vector<std::uint8_t> read_gzip(const std::string& path) {
  std::vector<std::uint8_t> out;
  std::uint8_t buf[1 << 16];
#ifdef REBELBOOST_BENCH_HAVE_ZLIB
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return {};
  int got;
  while ((got = gzread(f, buf, sizeof(buf))) > 0) out.insert(out.end(), buf, buf + got);
  gzclose(f);
#else
  std::FILE* p = popen(("gzip -dc '" + path + "' 2>/dev/null").c_str(), "r");
  if (!p) return {};
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), p)) > 0) out.insert(out.end(), buf, buf + got);
  if (pclose(p) != 0) return {};
#endif
  return out;
}

inline std::uint32_t big_endian32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// Synthetic stand-in: 12 000 x 784 images whose pixels are 0 on a random border and smooth inside, so
// columns (one pixel across samples) have long runs of equal codes like the real data.
inline PixelData synthetic_pixels() {
  PixelData d;
  d.n_samples = 12000;
  d.n_features = 784;
  d.pixels.resize(d.n_samples * d.n_features);
  d.labels.resize(d.n_samples);
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> level(0, 255), border(2, 8), coin(0, 1);
  for (std::size_t i = 0; i < d.n_samples; ++i) {
    const int b = border(rng), tone = level(rng);
    d.labels[i] = coin(rng);
    for (int r = 0; r < 28; ++r)
      for (int c = 0; c < 28; ++c) {
        const bool inside = r >= b && r < 28 - b && c >= b && c < 28 - b;
        const int v = inside ? (tone + (d.labels[i] ? r : c) * 3) % 256 : 0;
        d.pixels[i * d.n_features + static_cast<std::size_t>(r * 28 + c)] = static_cast<std::uint8_t>(v);
      }
  }
  return d;
}

// T-shirt vs Shirt rows of the training set (12 000 x 784), or synthetic_pixels() if the files are absent.
inline const PixelData& tshirt_vs_shirt() {
  static const PixelData data = [] {
    const std::string dir = kFashionMnistDir;
    const std::vector<std::uint8_t> images = read_gzip(dir + "train-images-idx3-ubyte.gz");
    const std::vector<std::uint8_t> labels = read_gzip(dir + "train-labels-idx1-ubyte.gz");
    if (images.size() < 16 || labels.size() < 8 || big_endian32(images.data()) != 0x803 ||
        big_endian32(labels.data()) != 0x801)
      return synthetic_pixels();
    const std::size_t n = big_endian32(images.data() + 4);
    const std::size_t n_features = std::size_t{big_endian32(images.data() + 8)} * big_endian32(images.data() + 12);
    if (images.size() < 16 + n * n_features || labels.size() < 8 + n) return synthetic_pixels();
    PixelData d;
    d.n_features = n_features;
    d.real = true;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t label = labels[8 + i];
      if (label != 0 && label != 6) continue;
      const std::uint8_t* row = images.data() + 16 + i * n_features;
      d.pixels.insert(d.pixels.end(), row, row + n_features);
      d.labels.push_back(label == 6 ? 1 : 0);
    }
    d.n_samples = d.labels.size();
    return d;
  }();
  return data;
}

}  // namespace rebelboost::bench
